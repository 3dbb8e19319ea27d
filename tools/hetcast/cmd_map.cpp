#include <iostream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "daemon_link.hpp"
#include "hetcast/error.hpp"
#include "hetcast/map/eco.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/report/json_output.hpp"

namespace po = boost::program_options;

namespace hetcast::cli {

int cmd_map(const std::vector<std::string>& args) {
    // `hetcast map show ...` asks the daemons for their measured map.
    if (!args.empty() && args.front() == "show") return cmd_map_show({args.begin() + 1, args.end()});
    std::string network;
    double tolerance = eco_default_tolerance;
    po::options_description opts(
        "hetcast map: partition a network into subnets with ECO's algorithm\n"
        "(the daemons' measured map: 'hetcast map show --help')\n\noptions");
    opts.add_options()
        ("help,h", "show this help")
        ("network,n", po::value(&network)->required(), "network file (YAML)")
        ("tolerance,t", po::value(&tolerance), "how far above a host's cheapest edge a neighbour may be (default 0.2)")
        ("json", "print one JSON object instead of text");
    po::variables_map vm;
    if (parse_options(args, opts, vm)) return 0;
    if (!(tolerance >= 0) || tolerance > 100) throw InputError("--tolerance must be between 0 and 100");

    const Network net = load_network(network);
    // The latency matrix, or the (size-independent) cost matrix: the message size plays no part.
    const Subnets subnets = eco_partition(eco_edge_costs(net, 0), tolerance);
    if (vm.count("json")) {
        nlohmann::json out = json_document("map");
        out["tolerance"] = tolerance;
        out["subnets"] = nlohmann::json::array();
        for (const auto& sub : subnets) {
            nlohmann::json names = nlohmann::json::array();
            for (NodeId n : sub) names.push_back(net.name(n));
            out["subnets"].push_back(std::move(names));
        }
        std::cout << dump_json(out) << '\n';
        return 0;
    }
    std::cout << subnets.size() << " subnets at tolerance " << tolerance << ":\n";
    for (std::size_t i = 0; i < subnets.size(); ++i) {
        std::cout << "  " << i << ":";
        for (NodeId n : subnets[i]) std::cout << ' ' << net.name(n);
        std::cout << '\n';
    }
    return 0;
}

}  // namespace hetcast::cli
