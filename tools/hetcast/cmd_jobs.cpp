// `hetcast jobs` and `hetcast cancel JOB`: what runs on the cluster now, and stopping it.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "daemon_link.hpp"
#include "hetcast/error.hpp"
#include "hetcast/report/json_output.hpp"

namespace po = boost::program_options;
using json = nlohmann::json;

namespace hetcast::cli {

namespace {

void print_history(const json& jobs) {
    if (jobs.empty()) std::cout << "no pushes in the history\n";
    for (const auto& j : jobs) {
        const auto dests = j.value("destinations", json::array());
        char line[512];
        std::snprintf(line, sizeof line, "%-20s %-10s %-20s %-12s %-9s %-12s %9.1f MiB  %3zu dest  %7.1f s (predicted %.1f s)  %s",
                      str(j, "job").c_str(), str(j, "member").c_str(), str(j, "ended").c_str(), str(j, "operator").c_str(),
                      str(j, "outcome").c_str(), str(j, "algorithm").c_str(), j.value("bytes", 0.0) / 1048576, dests.size(),
                      j.value("achieved", 0.0), j.value("predicted", 0.0), str(j, "what").c_str());
        std::cout << line << '\n';
    }
}

}  // namespace

int cmd_jobs(const std::vector<std::string>& args) {
    DaemonOptions d;
    std::string nodes, exclude;
    po::options_description opts("hetcast jobs: the jobs every member takes part in now (the coordinator's row is the push)\n\n"
                                 "  hetcast jobs [-w NODESET] [-x NODESET] [--config FILE] [--from NODE] [--json]\n"
                                 "  hetcast jobs --history [...]   the pushes that ended, as each coordinator kept them\n\noptions");
    opts.add_options()("help,h", "show this help")("json", "print the answer as one JSON object")(
        "history", "the last pushes each member coordinated (its 'history' of them, kept in its state_dir), oldest "
                   "first: job, end, operator, outcome, bytes, destinations, achieved and predicted seconds "
                   "('hetcast wait JOB' prints one's report)")(
        "nodes,w", po::value(&nodes), "only the rows of these members: a node set, as for 'push --to'")(
        "exclude,x", po::value(&exclude), "leave out the rows of the members this node set names");
    add_daemon_options(opts, d);
    po::variables_map vm;
    if (parse_options(args, opts, vm)) return 0;
    const auto client = connect_daemon(d);
    const bool history = vm.count("history") != 0;
    json a = checked(client->call({{"cmd", history ? "history" : "jobs"}, {"all", true}}), "jobs");
    if (vm.count("nodes") || vm.count("exclude")) {
        std::vector<std::string> members;
        for (const auto& m : checked(client->call({{"cmd", "status"}, {"hellos", false}}), "status").value("members", json::array())) {
            members.push_back(str(m, "name"));
        }
        const auto kept = select_nodes(d, *client, members, nodes, exclude);
        json rows = json::array();
        for (const auto& j : a.value("jobs", json::array())) {
            if (std::find(kept.begin(), kept.end(), str(j, "member")) != kept.end()) rows.push_back(j);
        }
        a["jobs"] = rows;
    }
    const bool all_answered = a.value("unreachable", json::array()).empty();
    if (vm.count("json")) {
        json out = json_document(history ? "jobs --history" : "jobs");
        out["jobs"] = a.value("jobs", json::array());
        out["unreachable"] = a.value("unreachable", json::array());
        std::cout << dump_json(out) << '\n';
        return all_answered ? exit_ok : exit_partial;
    }
    if (history) {
        print_history(a.value("jobs", json::array()));
        for (const auto& u : a.value("unreachable", json::array())) {
            std::cerr << "hetcast jobs: " << str(u, "member") << " did not answer: " << str(u, "error") << '\n';
        }
        return all_answered ? exit_ok : exit_partial;
    }
    const json jobs = a.value("jobs", json::array());
    if (jobs.empty()) std::cout << "no jobs\n";
    for (const auto& j : jobs) {
        const double owed = j.value("owed", 0.0), bytes = j.value("bytes", 0.0);
        char line[256];
        std::snprintf(line, sizeof line, "%-20s %-10s %-12s %-22s %-8s %7.1f s  %.1f MiB%s", str(j, "job").c_str(),
                      str(j, "member").c_str(), str(j, "role").c_str(), str(j, "algorithm").c_str(),
                      str(j, "state").c_str(), j.value("seconds", 0.0), bytes / 1048576,
                      owed > 0 ? (" of " + std::to_string(static_cast<long>(owed / 1048576)) + " MiB").c_str() : "");
        std::cout << line << '\n';
    }
    for (const auto& u : a.value("unreachable", json::array())) {
        std::cerr << "hetcast jobs: " << str(u, "member") << " did not answer: " << str(u, "error") << '\n';
    }
    return all_answered ? exit_ok : exit_partial;
}

int cmd_cancel(const std::vector<std::string>& args) {
    DaemonOptions d;
    std::string job;
    po::options_description opts("hetcast cancel: stop a push on every member it involves; nothing it wrote stays\n\n"
                                 "  hetcast cancel JOB [--config FILE] [--from NODE] [--json]   (JOB as 'hetcast jobs' lists it)\n\noptions");
    opts.add_options()("help,h", "show this help")("json", "print the answer as one JSON object");
    add_daemon_options(opts, d);
    po::variables_map vm;
    if (parse_options_with(args, opts, "job", job, vm)) return 0;
    if (job.empty()) throw InputError("which job? (see 'hetcast jobs')");
    if (job.find_first_not_of("0123456789") != std::string::npos) {
        throw InputError("'" + job.substr(0, 40) + "' is not a job id (see 'hetcast jobs')");
    }
    const json a = checked(connect_daemon(d)->call({{"cmd", "cancel"}, {"job", job}, {"all", true}}), "cancel");
    if (vm.count("json")) {
        json out = json_document("cancel");
        out["job"] = job;
        out["member"] = str(a, "member", "?");
        std::cout << dump_json(out) << '\n';
        return 0;
    }
    std::cout << "cancelled job " << job << " (coordinated by " << str(a, "member", "?") << ")\n";
    return 0;
}

}  // namespace hetcast::cli
