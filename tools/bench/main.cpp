// hetcast-bench: how long the planners take, on the workloads of the performance targets of
// issues 2 and 3. Only the planner call is timed (network and request are built before).
//
//   - Bhat's single-source heuristics (fef, ecef, ecef-la, fnf, binomial, optimal) on random
//     parametric networks with Bhat's ranges (latency 10 us - 1 ms, bandwidth 10 kB/s -
//     200 MB/s, 1 MB message), broadcast from node 0, Bhat's blocking model;
//   - Wu's multi-source planners (fef, ecf, wr, wrp) on an all-to-all broadcast (every node
//     a source, every other node a destination) over random Wu networks (overhead classes
//     80-400 us + 0.0001-0.01 us/byte, 1 Gb/s links, 1 MB or 1.5 MB messages), non-blocking;
//   - Khuller's lcf on the cluster model (equal clusters, local 1, global 10), broadcast from
//     c0n0, blocking;
//   - auto on generated capacity maps of 100 to 5000 hosts (issue 26 §2, auto_rows.cpp), a
//     1 GiB broadcast, non-blocking, each size in a fresh process for its peak memory;
//   - the probe on generated sites of 100 to 5000 hosts against the flow model (issue 26 §1,
//     probe_rows.cpp): measurements, flows, simulated seconds (`--only probe`).
//
// Prints Markdown tables: per algorithm and size the median, min and max planning time, the
// target and whether the median meets it; then the growth from the smallest to the largest
// size next to the paper's stated complexity. Exit status 1 with --check when a target is missed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <fstream>
#include <optional>

#include <boost/program_options.hpp>

#include "auto_rows.hpp"
#include "probe_rows.hpp"
#include "hetcast/error.hpp"
#include "hetcast/model/generators.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sched/wu.hpp"

namespace po = boost::program_options;
using namespace hetcast;

namespace {

enum class Workload { bhat, all_to_all, clusters };

struct Target {
    std::size_t n;  // the size the target is stated for
    double ms;      // the median must be below this
};

struct Case {
    std::string algo;
    Workload workload;
    std::vector<std::size_t> sizes;  // nodes
    std::optional<Target> target;
    std::string complexity;  // as stated by the paper, "" when it states none
    double exponent = 0;     // of N in that complexity, for the growth column
    bool log_factor = false;
};

constexpr double lcf_global = 10;       // C of Khuller's model in the lcf workload
constexpr std::size_t lcf_cluster = 100;  // nodes per cluster: N = 10,000 is 100 clusters

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char* workload_name(Workload w) {
    switch (w) {
        case Workload::bhat: return "Bhat random, broadcast";
        case Workload::all_to_all: return "Wu random, all-to-all";
        case Workload::clusters: return "clusters of 100, broadcast";
    }
    return "";
}

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// One timed planner run on a fresh instance of the case's workload for size n and seed.
double run_once(const Case& c, std::size_t n, std::uint64_t seed, ExecModel bhat_model) {
    switch (c.workload) {
        case Workload::bhat: {
            const Algorithm& algo = find_algorithm(c.algo);
            const Network net = random_bhat(n, seed);
            const PlanRequest req = make_request(net, 0, {}, 1e6, bhat_model);
            const auto t0 = Clock::now();
            const Schedule s = algo.plan(net, req);
            const double ms = ms_since(t0);
            if (s.transfer_count() < req.dests.size()) throw Error("bench: incomplete schedule");
            return ms;
        }
        case Workload::all_to_all: {
            const PatternAlgorithm& algo = find_pattern_algorithm(c.algo);
            const Network net = random_wu(n, seed);
            Rng rng(seed ^ 0x5eedULL);
            PatternRequest req;
            req.model = ExecModel::nonblocking;
            std::size_t pairs = 0;
            for (NodeId src = 0; src < n; ++src) {
                Message m;
                m.source = src;
                m.size = random_message_size(rng, MessageParams{});
                for (NodeId d = 0; d < n; ++d) {
                    if (d != src) m.dests.push_back(d);
                }
                pairs += m.dests.size();
                req.messages.push_back(std::move(m));
            }
            const auto t0 = Clock::now();
            const Schedule s = algo.plan(net, req);
            const double ms = ms_since(t0);
            if (s.transfer_count() < pairs) throw Error("bench: incomplete schedule");
            return ms;
        }
        case Workload::clusters: {
            const Algorithm& algo = find_algorithm(c.algo);
            const Network net = Network::clusters(std::vector<std::size_t>(n / lcf_cluster, lcf_cluster), 1, lcf_global);
            const PlanRequest req = make_request(net, net.default_root(), {}, 1e6, ExecModel::blocking);
            const auto t0 = Clock::now();
            const Schedule s = algo.plan(net, req);
            const double ms = ms_since(t0);
            if (s.transfer_count() < req.dests.size()) throw Error("bench: incomplete schedule");
            return ms;
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) try {
    int reps = 5;
    std::string model_name = "blocking";
    std::string only;
    bool check = false;
    double auto_limit = 60;
    std::size_t map_hosts = 0;
    std::string map_file;
    bool full_matrices = false;
    po::options_description opts("hetcast-bench: planning time of the schedulers against their targets\n\noptions");
    opts.add_options()("help,h", "show this help")("reps", po::value(&reps),
                                                     "instances per (algorithm, size), default 5 (the median of them is compared)")(
        "model", po::value(&model_name), "model of the Bhat cases: blocking (default, Bhat's) | nonblocking")(
        "only", po::value(&only), "comma-separated algorithms to run (default: every case)")(
        "check", po::bool_switch(&check), "exit with status 1 when a median misses its target")(
        "auto-limit", po::value(&auto_limit), "seconds after which an auto row is stopped (default 60)")(
        "write-map", po::value(&map_file), "write the generated capacity map of --hosts hosts as YAML to FILE, and exit")(
        "hosts", po::value(&map_hosts), "hosts of the map --write-map writes")(
        "full-matrices", po::bool_switch(&full_matrices),
        "--write-map writes the latency and bandwidth matrices too (N^2 numbers, as a probe writes them)");
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << opts;
        return 0;
    }
    if (reps < 1) throw InputError("--reps must be at least 1");
    if (!(auto_limit >= 1)) throw InputError("--auto-limit must be at least 1 second");
    if (!map_file.empty()) {
        if (map_hosts < 2) throw InputError("--write-map needs --hosts of at least 2");
        std::ofstream out(map_file);
        bench::write_capacity_map(out, bench::capacity_map(map_hosts, 26000 + map_hosts), full_matrices);
        if (!out.flush()) throw InputError("--write-map: cannot write " + map_file);
        return 0;
    }
    const ExecModel bhat_model = parse_exec_model(model_name);

    // Targets: issue 2 (Bhat family), issue 3 (wr, wrp, lcf).
    const std::vector<Case> cases = {
        {"fef", Workload::bhat, {250, 500, 1000}, Target{1000, 50}, "O(N^2 log N)", 2, true},
        {"ecef", Workload::bhat, {250, 500, 1000}, Target{1000, 50}, "O(N^2 log N)", 2, true},
        {"ecef-la", Workload::bhat, {250, 500, 1000}, Target{500, 500}, "O(N^3)", 3, false},
        {"fnf", Workload::bhat, {250, 500, 1000}, std::nullopt, "O(N^2)", 2, false},
        {"binomial", Workload::bhat, {250, 500, 1000}, std::nullopt, "O(N)", 1, false},
        {"optimal", Workload::bhat, {6, 8, 10}, Target{10, 2000}, "exponential", 0, false},
        {"wr", Workload::all_to_all, {16, 32, 64}, Target{64, 100}, "O(N^3)", 3, false},
        {"wrp", Workload::all_to_all, {16, 32, 64}, Target{64, 100}, "O(N^3)", 3, false},
        {"lcf", Workload::clusters, {2500, 10000}, Target{10000, 50}, "", 0, false},
    };

    bool header = false;
    std::map<std::string, std::vector<std::pair<std::size_t, double>>> medians;
    bool missed = false;
    for (const auto& c : cases) {
        if (!only.empty() && ("," + only + ",").find("," + c.algo + ",") == std::string::npos) continue;
        if (!header) {
            std::printf("| algorithm | workload | N | median ms | min ms | max ms | runs | target | result |\n");
            std::printf("|---|---|---:|---:|---:|---:|---:|---:|---|\n");
            header = true;
        }
        for (std::size_t n : c.sizes) {
            std::vector<double> ms;
            for (int r = 0; r < reps; ++r) {
                ms.push_back(run_once(c, n, 1000 * n + static_cast<std::uint64_t>(r), bhat_model));
            }
            const double med = median(ms);
            medians[c.algo].emplace_back(n, med);
            std::string target = "", result = "";
            if (c.target && c.target->n == n) {
                char buf[32];
                std::snprintf(buf, sizeof buf, "< %g", c.target->ms);
                target = buf;
                const bool pass = med < c.target->ms;
                result = pass ? "pass" : "**miss**";
                missed = missed || !pass;
            }
            std::printf("| %s | %s | %zu | %.2f | %.2f | %.2f | %d | %s | %s |\n", c.algo.c_str(),
                        workload_name(c.workload), n, med, *std::min_element(ms.begin(), ms.end()),
                        *std::max_element(ms.begin(), ms.end()), reps, target.c_str(), result.c_str());
            std::fflush(stdout);
        }
    }
    if (!medians.empty()) {
        std::printf("\n| algorithm | N from | N to | measured growth | paper's complexity | its growth |\n");
        std::printf("|---|---:|---:|---:|---|---:|\n");
    }
    for (const auto& c : cases) {
        const auto it = medians.find(c.algo);
        if (it == medians.end() || it->second.size() < 2 || c.exponent == 0) continue;
        const auto [n0, t0] = it->second.front();
        const auto [n1, t1] = it->second.back();
        const double k = static_cast<double>(n1) / static_cast<double>(n0);
        double predicted = std::pow(k, c.exponent);
        if (c.log_factor) predicted *= std::log(static_cast<double>(n1)) / std::log(static_cast<double>(n0));
        std::printf("| %s | %zu | %zu | %.1fx | %s | %.1fx |\n", c.algo.c_str(), n0, n1, t1 / t0, c.complexity.c_str(),
                    predicted);
    }
    if (only.empty() || ("," + only + ",").find(",auto,") != std::string::npos) {
        missed = !bench::run_auto_rows(auto_limit) || missed;
    }
    if (only.empty() || ("," + only + ",").find(",probe,") != std::string::npos) {
        missed = !bench::run_probe_rows() || missed;
    }
    return check && missed ? 1 : 0;
} catch (const po::error& e) {
    std::cerr << "hetcast-bench: " << e.what() << '\n';
    return 2;
} catch (const InputError& e) {
    std::cerr << "hetcast-bench: " << e.what() << '\n';
    return 2;
} catch (const std::exception& e) {
    std::cerr << "hetcast-bench: internal error: " << e.what() << '\n';
    return 1;
}
