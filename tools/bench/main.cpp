// hetcast-bench: how long the planners take on random networks with Bhat's parameter
// ranges (latency 10 us - 1 ms, bandwidth 10 kB/s - 200 MB/s, 1 MB messages).
// Prints Markdown tables: per algorithm and N the median, min and max planning time,
// then the growth from the smallest to the largest N next to the paper's complexity.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>

#include <boost/program_options.hpp>

#include "hetcast/error.hpp"
#include "hetcast/model/generators.hpp"
#include "hetcast/sched/plan.hpp"

namespace po = boost::program_options;
using namespace hetcast;

namespace {

struct Case {
    std::string algo;
    std::vector<std::size_t> sizes;
    std::string complexity;  // as stated by the paper
    double exponent;         // of N in that complexity, for the growth column
    bool log_factor;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) try {
    int reps = 5;
    std::string model_name = "nonblocking";
    std::string only;
    po::options_description opts("hetcast-bench: planning time on random networks\n\noptions");
    opts.add_options()("help,h", "show this help")("reps", po::value(&reps), "networks per (algorithm, N), default 5")(
        "model", po::value(&model_name), "blocking | nonblocking (default)")(
        "only", po::value(&only), "comma-separated algorithms to run (default: all benchmarked)");
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << opts;
        return 0;
    }
    if (reps < 1) throw InputError("--reps must be at least 1");
    const ExecModel model = parse_exec_model(model_name);

    const std::vector<Case> cases = {
        {"fef", {250, 500, 1000}, "O(N^2 log N)", 2, true},
        {"ecef", {250, 500, 1000}, "O(N^2 log N)", 2, true},
        {"ecef-la", {250, 500, 1000}, "O(N^3)", 3, false},
        {"fnf", {250, 500, 1000}, "O(N^2)", 2, false},
        {"binomial", {250, 500, 1000}, "O(N)", 1, false},
        {"optimal", {6, 8, 10}, "exponential", 0, false},
    };
    std::printf("| algorithm | N | median ms | min ms | max ms | networks |\n");
    std::printf("|---|---:|---:|---:|---:|---:|\n");
    std::map<std::string, std::vector<std::pair<std::size_t, double>>> medians;
    for (const auto& c : cases) {
        if (!only.empty() && ("," + only + ",").find("," + c.algo + ",") == std::string::npos) continue;
        const Algorithm& algo = find_algorithm(c.algo);
        for (std::size_t n : c.sizes) {
            std::vector<double> ms;
            for (int r = 0; r < reps; ++r) {
                const Network net = random_bhat(n, 1000 * n + static_cast<std::uint64_t>(r));
                const PlanRequest req = make_request(net, 0, {}, 1e6, model);
                const auto t0 = std::chrono::steady_clock::now();
                const Schedule s = algo.plan(net, req);
                const auto t1 = std::chrono::steady_clock::now();
                if (s.transfer_count() < req.dests.size()) throw Error("bench: incomplete schedule");
                ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
            }
            const double med = median(ms);
            medians[c.algo].emplace_back(n, med);
            std::printf("| %s | %zu | %.2f | %.2f | %.2f | %d |\n", c.algo.c_str(), n, med,
                        *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()), reps);
            std::fflush(stdout);
        }
    }
    std::printf("\n| algorithm | N from | N to | measured growth | paper's complexity | its growth |\n");
    std::printf("|---|---:|---:|---:|---|---:|\n");
    for (const auto& c : cases) {
        const auto it = medians.find(c.algo);
        if (it == medians.end() || it->second.size() < 2 || c.exponent == 0) continue;
        const auto [n0, t0] = it->second.front();
        const auto [n1, t1] = it->second.back();
        const double k = static_cast<double>(n1) / static_cast<double>(n0);
        double predicted = std::pow(k, c.exponent);
        if (c.log_factor) predicted *= std::log(static_cast<double>(n1)) / std::log(static_cast<double>(n0));
        std::printf("| %s | %zu | %zu | %.1fx | %s | %.1fx |\n", c.algo.c_str(), n0, n1, t1 / t0,
                    c.complexity.c_str(), predicted);
    }
    return 0;
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
