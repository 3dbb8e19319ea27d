#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "commands.hpp"
#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/model/units.hpp"
#include "hetcast/report/json_output.hpp"
#include "hetcast/report/plan_report.hpp"

namespace po = boost::program_options;

namespace hetcast::cli {
namespace {

/// The `plan --json` document: every plan in a list, one for a named algorithm.
void print_plans(nlohmann::json plans) {
    nlohmann::json out = json_document("plan");
    out["plans"] = std::move(plans);
    std::cout << dump_json(out) << '\n';
}

// Every algorithm's result: a JSON array of plans, or the comparison table.
template <class Request, class Results>
void print_all(const Network& net, const Request& req, const Results& results, bool json) {
    if (!json) {
        print_comparison(std::cout, results);
        return;
    }
    nlohmann::json plans = nlohmann::json::array();
    for (const auto& p : results) plans.push_back(to_json(net, req, p));
    print_plans(std::move(plans));
}

// `--pattern FILE`: several sources, each with its own message and destinations (Wu).
int plan_pattern(const Network& net, const std::string& file, ExecModel model, const std::string& algo, bool json) {
    if (algo != "all" && algo != "auto") {
        const auto& known = pattern_algorithms();
        if (std::none_of(known.begin(), known.end(), [&](const auto& a) { return a.name == algo; })) {
            std::string names;
            for (const auto& a : known) names += a.name + ", ";
            throw InputError("unknown pattern algorithm '" + algo + "' (known: " + names + "all, auto)");
        }
    }
    PatternRequest req = load_pattern(file, net);
    if (req.messages.empty()) throw InputError(file + ": the pattern has no messages");
    for (std::size_t k = 0; k < req.sized.size(); ++k) {
        if (!req.sized[k]) {
            throw InputError(file + ": entry " + std::to_string(k + 1) +
                             " has a file but no size: planning needs one (hetcast push reads it from the file)");
        }
    }
    req.model = model;

    if (algo == "all") {
        print_all(net, req, plan_pattern_all(net, req), json);
        return 0;
    }
    const PatternResult result =
        algo == "auto" ? plan_pattern_auto(net, req) : plan_pattern_and_simulate(net, req, find_pattern_algorithm(algo));
    if (json) {
        print_plans(nlohmann::json::array({to_json(net, req, result)}));
    } else {
        print_pattern(std::cout, net, req, result);
    }
    return 0;
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args) {
    std::string network, pattern, root, dests, size = "1MiB", model = "nonblocking", algo, degree, matching;
    po::options_description opts(
        "hetcast plan: plan a broadcast or multicast, or a multi-source pattern, and print its schedule\n\n"
        "  hetcast plan --network FILE [--root N] [--dests A,B] [--size S] --algo NAME [--json]\n"
        "  hetcast plan --network FILE --pattern FILE --algo NAME [--json]\n\noptions");
    opts.add_options()
        ("help,h", "show this help")
        ("network,n", po::value(&network)->required(), "network file (YAML, see conf/examples)")
        ("pattern,p", po::value(&pattern),
         "pattern file (YAML list of {source, size, dests}, see conf/examples): several sources at once; "
         "not with --root, --dests or --size")
        ("root,r", po::value(&root), "source node (default: the network's first node, c0n0 for clusters)")
        ("dests,d", po::value(&dests), "comma-separated destinations (default: every other node)")
        ("size,s", po::value(&size), "message size: 1048576, 64KiB, 1MiB, 10MB (default 1MiB)")
        ("model,m", po::value(&model), "execution model: blocking | nonblocking (default) | postal")
        ("degree", po::value(&degree),
         "N: k of eco's k-ary trees and d_i of lcf-degree for every cluster (default 2); "
         "N1,N2,...: lcf-degree's d_i per cluster, in subnet-map order (Khuller 5.1)")
        ("matching", po::value(&matching),
         "B: lcf-matching's inter-cluster transfers at a time (default 1, Khuller 5.3)")
        ("algo,a", po::value(&algo)->required(),
         "algorithm, 'all' to compare every one ranked by completion, or 'auto' for the best one")
        ("json", "print one JSON object instead of text");
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    if (vm.count("help")) {
        std::cout << opts << "\nalgorithms:\n";
        for (const auto& a : algorithms()) std::printf("  %-16s %s\n", a.name.c_str(), a.summary.c_str());
        std::cout << "\npattern algorithms (with --pattern; 'all' and 'auto' as well):\n";
        for (const auto& a : pattern_algorithms()) std::printf("  %-16s %s\n", a.name.c_str(), a.summary.c_str());
        return 0;
    }
    po::notify(vm);
    const bool json = vm.count("json") != 0;

    if (vm.count("pattern")) {
        for (const char* single : {"root", "dests", "size"}) {
            if (vm.count(single)) {
                throw InputError(std::string("--pattern cannot be combined with --") + single +
                                 ": the pattern file gives each message's source, size and dests");
            }
        }
        for (const char* knob : {"degree", "matching"}) {
            if (vm.count(knob)) {
                throw InputError(std::string("--") + knob + " applies to single-source plans (lcf-degree, "
                                 "lcf-matching, eco), not to --pattern");
            }
        }
        const ExecModel m = parse_exec_model(model);
        return plan_pattern(load_network(network), pattern, m, algo, json);
    }

    const Network net = load_network(network);
    const NodeId r = root.empty() ? net.default_root() : net.id(root);
    std::vector<NodeId> d;
    std::stringstream ss(dests);
    for (std::string name; std::getline(ss, name, ',');) {
        if (!name.empty()) d.push_back(net.id(name));
    }
    // An empty list means a broadcast to make_request; an explicit --dests must name someone.
    if (vm.count("dests") && d.empty()) throw InputError("--dests names no node (omit it to broadcast)");
    PlanOptions options;
    if (vm.count("degree")) {
        auto list = parse_counts(degree, "--degree");
        if (list.size() == 1) {
            options.degree = list.front();
            options.degree_given = true;
        } else if (algo == "eco") {
            throw InputError("--degree: eco takes one k for every subnet, not a list");
        } else {
            options.degrees = std::move(list);
        }
    }
    if (vm.count("matching")) {
        const auto b = parse_counts(matching, "--matching");
        if (b.size() != 1) throw InputError("--matching: one number B");
        options.matching = b.front();
    }
    const PlanRequest req = make_request(net, r, std::move(d), parse_bytes(size), parse_exec_model(model), options);

    if (algo == "all") {
        print_all(net, req, plan_all(net, req), json);
        return 0;
    }
    const PlanResult result = plan_and_simulate(net, req, find_algorithm(algo));
    if (json) {
        print_plans(nlohmann::json::array({to_json(net, req, result)}));
    } else {
        print_plan(std::cout, net, req, result);
    }
    return 0;
}

}  // namespace hetcast::cli
