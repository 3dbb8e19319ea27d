#include <cstdio>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "commands.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/model/units.hpp"
#include "hetcast/report/plan_report.hpp"

namespace po = boost::program_options;

namespace hetcast::cli {

int cmd_plan(const std::vector<std::string>& args) {
    std::string network, root, dests, size = "1MiB", model = "nonblocking", algo;
    po::options_description opts("hetcast plan: plan a broadcast or multicast and print its schedule\n\noptions");
    opts.add_options()
        ("help,h", "show this help")
        ("network,n", po::value(&network)->required(), "network file (YAML, see conf/examples)")
        ("root,r", po::value(&root), "source node (default: the network's first node, c0n0 for clusters)")
        ("dests,d", po::value(&dests), "comma-separated destinations (default: every other node)")
        ("size,s", po::value(&size), "message size: 1048576, 64KiB, 1MiB, 10MB (default 1MiB)")
        ("model,m", po::value(&model), "execution model: blocking | nonblocking (default)")
        ("algo,a", po::value(&algo)->required(), "algorithm, or 'all' to compare every one")
        ("json", "print one JSON object instead of text");
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    if (vm.count("help")) {
        std::cout << opts << "\nalgorithms:\n";
        for (const auto& a : algorithms()) std::printf("  %-16s %s\n", a.name.c_str(), a.summary.c_str());
        return 0;
    }
    po::notify(vm);

    const Network net = load_network(network);
    const NodeId r = root.empty() ? net.default_root() : net.id(root);
    std::vector<NodeId> d;
    std::stringstream ss(dests);
    for (std::string name; std::getline(ss, name, ',');) {
        if (!name.empty()) d.push_back(net.id(name));
    }
    const PlanRequest req = make_request(net, r, std::move(d), parse_bytes(size), parse_exec_model(model));
    const bool json = vm.count("json") != 0;

    if (algo == "all") {
        const auto results = plan_all(net, req);
        if (json) {
            nlohmann::json plans = nlohmann::json::array();
            for (const auto& p : results) plans.push_back(to_json(net, req, p));
            std::cout << nlohmann::json{{"plans", std::move(plans)}}.dump(2) << '\n';
        } else {
            print_comparison(std::cout, results);
        }
        return 0;
    }
    const PlanResult result = plan_and_simulate(net, req, find_algorithm(algo));
    if (json) {
        std::cout << to_json(net, req, result).dump(2) << '\n';
    } else {
        print_plan(std::cout, net, req, result);
    }
    return 0;
}

}  // namespace hetcast::cli
