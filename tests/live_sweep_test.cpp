// Live sweeps' bookkeeping: interleaved order, medians, the measured winner and auto's pick.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>

#include "hetcast/error.hpp"
#include "hetcast/sweep/live.hpp"

using namespace hetcast;
using namespace hetcast::sweep;

TEST_CASE("live sweep: every (size, run) round runs each algorithm once, in the settings' order") {
    LiveSettings s{{"auto", "flat", "lcf"}, {1e6, 8e6}, 3};
    std::vector<std::string> order;
    const auto rows = run_live(s, [&](const std::string& a, double size, int run) {
        order.push_back(a + "/" + std::to_string(static_cast<int>(size)) + "/" + std::to_string(run));
        return LiveResult{a == "auto" ? "auto:lcf" : a, size / 1e6, size / 1e6, 0.5, true, ""};
    });
    REQUIRE(rows.size() == 18);
    CHECK(order[0] == "auto/1000000/1");
    CHECK(order[1] == "flat/1000000/1");
    CHECK(order[3] == "auto/1000000/2");
    CHECK(order[17] == "lcf/8000000/3");
}

TEST_CASE("live sweep: medians per cell, winner is the least median, auto within 5% counts as a hit") {
    std::mt19937_64 rng(9);
    for (int trial = 0; trial < 200; ++trial) {
        // Each algorithm has a true time; runs scatter around it; one run in five is an outlier.
        std::map<std::string, double> truth{{"flat", 1 + static_cast<double>(rng() % 100) / 10},
                                            {"lcf", 1 + static_cast<double>(rng() % 100) / 10},
                                            {"ecef", 1 + static_cast<double>(rng() % 100) / 10}};
        const std::string pick = std::vector<std::string>{"flat", "lcf", "ecef"}[rng() % 3];
        truth["auto"] = truth[pick];
        std::uniform_real_distribution<double> noise(0.999, 1.001);
        const auto rows = run_live(LiveSettings{{"auto", "flat", "lcf", "ecef"}, {4e6}, 5},
                                   [&](const std::string& a, double, int run) {
                                       const double t = truth[a] * (run == 3 ? 10 : noise(rng));
                                       return LiveResult{a == "auto" ? "auto:" + pick : a, t, truth[a], 0.1, true, ""};
                                   });
        const LiveSummary s = summarise_live(rows);
        REQUIRE(s.cells.size() == 4);
        REQUIRE(s.sizes.size() == 1);
        std::string best;
        for (const auto& a : {"flat", "lcf", "ecef"}) {
            if (best.empty() || truth[a] < truth[best]) best = a;
        }
        for (const auto& c : s.cells) {
            CHECK(c.runs == 5);
            CHECK(c.achieved == doctest::Approx(truth[c.algorithm]).epsilon(0.002));  // the outlier does not move it
            CHECK(c.fidelity < 0.002);
        }
        CHECK(truth[s.sizes[0].winner] == doctest::Approx(truth[best]).epsilon(0.003));
        CHECK(s.sizes[0].auto_pick == pick);
        CHECK(s.sizes[0].auto_ok == (truth[pick] <= truth[best] * 1.05 * 1.003 || pick == s.sizes[0].winner));
    }
}

TEST_CASE("live sweep: a failed push is a row, not the end, a bad request is") {
    int calls = 0;
    const auto rows = run_live(LiveSettings{{"flat", "lcf"}, {1e6}, 2}, [&](const std::string& a, double, int) {
        ++calls;
        if (a == "lcf") throw Error("b2 unreachable");
        return LiveResult{a, 1, 1, 1, true, ""};
    });
    CHECK(calls == 4);
    CHECK(std::count_if(rows.begin(), rows.end(), [](const LiveRow& r) { return !r.result.ok; }) == 2);
    const auto s = summarise_live(rows);
    CHECK(s.sizes[0].winner == "flat");
    std::ostringstream csv;
    write_live_csv(csv, rows);
    CHECK(csv.str().find("lcf,1000000,1,0,0,0,,0,b2 unreachable") != std::string::npos);
    CHECK_THROWS_AS((void)run_live(LiveSettings{{"flat"}, {1e6}, 1},
                                   [](const std::string&, double, int) -> LiveResult { throw InputError("no map"); }),
                    InputError);
}
