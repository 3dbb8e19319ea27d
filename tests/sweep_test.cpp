// Simulation sweeps: determinism, summary arithmetic, CSV, generators' ranges, options.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "hetcast/error.hpp"
#include "hetcast/files.hpp"
#include "hetcast/sweep/sweep.hpp"
#include "support.hpp"

using namespace hetcast;
using namespace hetcast::sweep;

TEST_SUITE_BEGIN("sweep");

namespace {

Row row(std::size_t n, std::size_t trial, std::string algo, double completion, double bound = 1,
        std::optional<double> optimal = std::nullopt) {
    return Row{"bhat", "model=blocking", n, trial, std::move(algo), completion, bound, optimal};
}

const Summary& find(const std::vector<Summary>& s, std::size_t n, const std::string& algo) {
    for (const auto& x : s) {
        if (x.n == n && x.algorithm == algo) return x;
    }
    FAIL("no summary for ", algo, " at n = ", n);
    throw;
}

bool within(double v, Range r) { return v >= r.lo && v <= r.hi; }

}  // namespace

TEST_CASE("sweep: rows are bit for bit identical with 1 and 3 threads") {
    std::vector<SweepConfig> configs;
    SweepConfig bhat;
    bhat.generator = "bhat";
    bhat.nodes = NodeRange{2, 11, 3};
    bhat.trials = 7;
    bhat.algos = {"fnf", "ecef", "ecef-la", "optimal"};
    configs.push_back(bhat);
    SweepConfig grid;
    grid.generator = "grid";
    grid.nodes = NodeRange{3, 9, 3};
    grid.trials = 9;
    configs.push_back(grid);
    SweepConfig clusters;
    clusters.generator = "clusters";
    clusters.nodes = NodeRange{5, 13, 4};
    clusters.trials = 5;
    configs.push_back(clusters);
    SweepConfig multicast;
    multicast.generator = "bhat-multicast";
    multicast.nodes = NodeRange{3, 6, 3};
    multicast.trials = 4;
    multicast.algos = {"ecef", "fef"};
    multicast.overrides = {{"system", "20"}};
    configs.push_back(multicast);
    SweepConfig wu;
    wu.generator = "wu";
    wu.nodes = NodeRange{4, 8, 4};
    wu.trials = 4;
    wu.algos = {"ecef", "binomial"};
    wu.overrides = {{"messages", "hybrid"}};
    configs.push_back(wu);
    if (!pattern_algorithm_names().empty()) {
        SweepConfig patterns;
        patterns.generator = "wu-multicast";
        patterns.nodes = NodeRange{6, 12, 6};
        patterns.trials = 5;
        configs.push_back(patterns);
    }
    for (auto c : configs) {
        CAPTURE(c.generator);
        c.threads = 1;
        const auto one = run_sweep(c);
        c.threads = 3;
        const auto three = run_sweep(c);
        REQUIRE_FALSE(one.empty());
        CHECK(one == three);
        c.seed = 2;
        CHECK(run_sweep(c) != one);
    }
}

TEST_CASE("sweep: optimal runs only up to 10 participants and its value lands on every row of the trial") {
    SweepConfig c;
    c.nodes = NodeRange{9, 12, 1};
    c.trials = 2;
    c.algos = {"ecef", "optimal"};
    c.threads = 2;
    const auto rows = run_sweep(c);
    std::size_t optimal_rows = 0;
    for (const auto& r : rows) {
        CHECK(r.optimal.has_value() == (r.n <= 10));
        if (r.algorithm == "optimal") ++optimal_rows;
        if (r.optimal) CHECK(*r.optimal <= r.completion_time);
        CHECK(r.lower_bound <= r.completion_time * (1 + 1e-12));
    }
    CHECK(optimal_rows == 4);
    CHECK(rows.size() == 4 * 2 + 4);
}

TEST_CASE("sweep: hit rate is the share of trials matching the per-trial best within a relative 1e-9") {
    const std::vector<Row> rows = {
        row(4, 0, "a", 10),          row(4, 0, "b", 10 * (1 + 5e-10)), row(4, 0, "c", 10.1),
        row(4, 1, "a", 7),           row(4, 1, "b", 6),                row(4, 1, "c", 6 * (1 + 2e-9)),
        row(4, 2, "a", 3),           row(4, 2, "b", 3),                row(4, 2, "c", 3),
        row(4, 3, "a", 5),           row(4, 3, "c", 4),  // b did not apply
        row(8, 0, "a", 1),           row(8, 0, "b", 2),
    };
    const auto s = summarise(rows);
    CHECK(find(s, 4, "a").hit_rate == doctest::Approx(2.0 / 4));
    CHECK(find(s, 4, "b").hit_rate == doctest::Approx(3.0 / 3));
    CHECK(find(s, 4, "c").hit_rate == doctest::Approx(2.0 / 4));
    CHECK(find(s, 4, "b").trials == 3);
    CHECK(find(s, 8, "a").hit_rate == 1.0);
    CHECK(find(s, 8, "b").hit_rate == 0.0);
    // Ordered by n, then by first appearance.
    REQUIRE(s.size() == 5);
    CHECK(s[0].algorithm == "a");
    CHECK(s[1].algorithm == "b");
    CHECK(s[2].algorithm == "c");
    CHECK(s[3].n == 8);
}

TEST_CASE("sweep: summary means of completion, bound, ratio and ratio to the optimum") {
    const std::vector<Row> rows = {
        row(5, 0, "x", 4, 2, 4), row(5, 1, "x", 9, 3, 6), row(5, 2, "x", 2, 0),  // zero bound: no ratio
        row(6, 0, "y", 3, 1),
    };
    const auto s = summarise(rows);
    const Summary& x = find(s, 5, "x");
    CHECK(x.trials == 3);
    CHECK(x.mean_completion == doctest::Approx(5));
    CHECK(x.mean_lower_bound == doctest::Approx(5.0 / 3));
    CHECK(x.mean_ratio == doctest::Approx((2.0 + 3.0) / 2));
    REQUIRE(x.mean_ratio_optimal);
    CHECK(*x.mean_ratio_optimal == doctest::Approx((1.0 + 1.5) / 2));
    CHECK_FALSE(find(s, 6, "y").mean_ratio_optimal);
    CHECK(find(s, 6, "y").mean_ratio == doctest::Approx(3));
}

TEST_CASE("sweep: CSV quoting and number format") {
    CHECK(csv_field("ecef") == "ecef");
    CHECK(csv_field("a,b") == "\"a,b\"");
    CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(csv_field("two\nlines") == "\"two\nlines\"");
    CHECK(format_number(0.1) == "0.1");
    CHECK(format_number(1e6) == "1e+06");
    CHECK(format_number(1500) == "1500");
    CHECK(std::stod(format_number(1.0 / 3)) == 1.0 / 3);

    std::vector<Row> rows = {row(3, 0, "ecef", 0.25, 0.125, 0.2), row(3, 1, "odd,name", 1.5, 0.5)};
    rows[1].parameters = "size=1e6, model=\"x\"";
    std::ostringstream out;
    write_csv(out, rows);
    CHECK(out.str() ==
          "generator,parameters,n,trial,algorithm,completion_time,lower_bound,optimal\n"
          "bhat,model=blocking,3,0,ecef,0.25,0.125,0.2\n"
          "bhat,\"size=1e6, model=\"\"x\"\"\",3,1,\"odd,name\",1.5,0.5,\n");

    std::ostringstream sum;
    write_summary_csv(sum, summarise({row(2, 0, "a", 2, 1), row(2, 0, "b", 4, 1)}));
    CHECK(sum.str() ==
          "n,algorithm,trials,mean_completion,mean_lower_bound,mean_ratio,hit_rate,mean_ratio_optimal\n"
          "2,a,1,2,1,2,1,\n"
          "2,b,1,4,1,4,0,\n");
}

TEST_CASE("sweep: generators respect their ranges") {
    const BhatParams bp{{2e-3, 3e-3}, {5e3, 6e3}};
    const Network bhat = random_bhat(12, 7, bp);
    const BhatClusterParams cp{{{1e-5, 2e-5}, {1e8, 2e8}}, {{1e-2, 2e-2}, {1e4, 2e4}}};
    const Network two = random_bhat_clusters(9, 7, cp);
    REQUIRE(two.subnets());
    CHECK(two.subnets()->size() == 2);
    CHECK((*two.subnets())[0].size() == 5);
    for (std::size_t i = 0; i < 12; ++i) {
        for (std::size_t j = 0; j < 12; ++j) {
            if (i == j) continue;
            CHECK(within(bhat.latency()[i][j], bp.latency));
            CHECK(within(bhat.bandwidth()[i][j], bp.bandwidth));
            if (i >= 9 || j >= 9) continue;
            const BhatParams& want = (i < 5) == (j < 5) ? cp.intra : cp.inter;
            CHECK(within(two.latency()[i][j], want.latency));
            CHECK(within(two.bandwidth()[i][j], want.bandwidth));
        }
    }
    CHECK_FALSE(bhat.subnets());

    const WuParams wp{3, {1e-4, 2e-4}, {1e-9, 2e-9}, {0, 0}, {wu_slow_link, wu_slow_link}};
    const Network wu = random_wu(20, 3, wp);
    std::set<std::pair<double, double>> classes;
    for (NodeId i = 0; i < 20; ++i) {
        for (const Overhead& o : {wu.send_overheads()[i], wu.recv_overheads()[i]}) {
            CHECK(within(o.fixed, wp.fixed));
            CHECK(within(o.per_byte, wp.per_byte));
        }
        classes.insert({wu.send_overheads()[i].fixed, wu.recv_overheads()[i].fixed});
        for (NodeId j = 0; j < 20; ++j) {
            if (i != j) CHECK(wu.bandwidth()[i][j] == wu_slow_link);
        }
    }
    CHECK(classes.size() <= 3);

    const GridParams gp;
    const Network grid = random_grid(15, 11, gp);
    REQUIRE(grid.local_broadcast().size() == 15);
    CHECK(grid.subnets()->size() == 15);
    for (NodeId i = 0; i < 15; ++i) {
        CHECK(within(grid.local_broadcast()[i], gp.local));
        for (NodeId j = 0; j < 15; ++j) {
            if (i != j) CHECK(within(grid.time(i, j, 0), {gp.gap.lo + gp.latency.lo, gp.gap.hi + gp.latency.hi}));
        }
    }

    for (std::uint64_t seed = 0; seed < 30; ++seed) {
        const ClusterParams kp{{2, 5}, {3, 4}, 1};
        const Network c = random_clusters(10, seed, kp);
        REQUIRE(c.subnets());
        const std::size_t k = c.subnets()->size();
        CHECK(k >= 2);
        CHECK(k <= 5);
        CHECK(c.size() == 10);
        const double global = c.time(c.subnets()->front().front(), c.subnets()->back().front(), 0);
        CHECK(within(global, kp.global));

        PatternParams pp;
        pp.sources = {0.2, 0.3};
        pp.dests = {0.5, 0.5};
        pp.messages.mix = MessageMix::hybrid;
        const auto msgs = random_pattern(21, seed, pp);
        CHECK(msgs.size() >= 4);
        CHECK(msgs.size() <= 6);
        for (const auto& m : msgs) {
            CHECK(m.dests.size() == 10);
            CHECK(std::find(m.dests.begin(), m.dests.end(), m.source) == m.dests.end());
            CHECK((m.size <= 1024 || m.size == 1 << 20 || m.size == 1.5 * (1 << 20)));
        }
    }
}

TEST_CASE("sweep: random_bhat draws latency then bandwidth per ordered pair from one mt19937_64") {
    const Network net = random_bhat(3, 42);
    std::mt19937_64 rng(42);
    const auto u = [&](Range r) { return r.lo + (r.hi - r.lo) * (static_cast<double>(rng() >> 11) * 0x1.0p-53); };
    const double lat01 = u({10e-6, 1e-3});
    const double bw01 = u({10e3, 200e6});
    CHECK(net.latency()[0][1] == lat01);
    CHECK(net.bandwidth()[0][1] == bw01);
}

TEST_CASE("sweep: n range parsing") {
    CHECK(parse_node_range("5").values() == std::vector<std::size_t>{5});
    CHECK(parse_node_range("2:4").values() == std::vector<std::size_t>{2, 3, 4});
    CHECK(parse_node_range("2:11:3").values() == std::vector<std::size_t>{2, 5, 8, 11});
    CHECK(parse_node_range("2:12:3").values() == std::vector<std::size_t>{2, 5, 8, 11});
    for (const char* bad : {"", ":", "0:4", "5:4", "2:4:0", "a:4", "2:4:1:1", "-2:4", "2.5:4", "2:", "2:20000",
                            " 2:4"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS((void)parse_node_range(bad), InputError);
    }
    CHECK(parse_range("1e-3:2e-3").lo == 1e-3);
    CHECK(parse_range("7").hi == 7);
    for (const char* bad : {"", "1:", "2:1", "x", "1:2:3", "nan"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS((void)parse_range(bad), InputError);
    }
}

TEST_CASE("sweep: bad configurations are input errors before anything runs") {
    const auto fails = [](SweepConfig c) { CHECK_THROWS_AS((void)run_sweep(c), InputError); };
    SweepConfig c;
    c.trials = 1;
    c.nodes = NodeRange{2, 3, 1};
    fails([&] { auto x = c; x.generator = "nope"; return x; }());
    fails([&] { auto x = c; x.trials = 0; return x; }());
    fails([&] { auto x = c; x.algos = {"no-such"}; return x; }());
    fails([&] { auto x = c; x.algos = {"ecef", "ecef"}; return x; }());
    fails([&] { auto x = c; x.overrides = {{"gap", "1:2"}}; return x; }());
    fails([&] { auto x = c; x.overrides = {{"latency", "2:1"}}; return x; }());
    fails([&] { auto x = c; x.overrides = {{"bandwidth", "0:5"}}; return x; }());
    fails([&] { auto x = c; x.overrides = {{"size", "1MB:1kB"}}; return x; }());
    fails([&] {
        auto x = c;
        x.generator = "bhat-multicast";
        x.nodes = NodeRange{5, 10, 5};
        x.overrides = {{"system", "10"}};
        return x;
    }());
    fails([&] { auto x = c; x.generator = "wu"; x.overrides = {{"link", "medium"}}; return x; }());
    fails([&] { auto x = c; x.generator = "wu-multicast"; x.algos = {"ecef"}; return x; }());
    fails([&] { auto x = c; x.generator = "clusters"; x.overrides = {{"clusters", "2.2:2.8"}}; return x; }());
    CHECK(describe(c).find("bandwidth=10000:2e+08") != std::string::npos);
}

TEST_CASE("sweep: --degree and --matching reach lcf-degree, lcf-matching and eco") {
    SweepConfig c;
    c.generator = "clusters";
    c.nodes = NodeRange{24, 24, 1};
    c.trials = 12;
    c.algos = {"lcf-degree", "lcf-matching", "eco", "lcf"};
    // k = 1 would not do for eco: with unit local costs a chain takes as long as a flat tree.
    c.options.degree = 2;
    c.options.matching = 1;
    const auto tight = run_sweep(c);
    CHECK(describe(c).find(" degree=2 matching=1") != std::string::npos);
    c.options.degree = 24;
    c.options.matching = 24;
    const auto loose = run_sweep(c);
    REQUIRE(tight.size() == loose.size());
    std::map<std::string, int> changed;
    for (std::size_t r = 0; r < tight.size(); ++r) {
        CAPTURE(tight[r].algorithm);
        if (tight[r].algorithm == "lcf") CHECK(tight[r].completion_time == loose[r].completion_time);
        if (tight[r].completion_time != loose[r].completion_time) ++changed[tight[r].algorithm];
    }
    CHECK(changed["lcf-degree"] > 0);
    CHECK(changed["lcf-matching"] > 0);
    CHECK(changed["eco"] > 0);

    c.options.degrees = {1, 2};
    CHECK_THROWS_AS((void)run_sweep(c), InputError);
    c.options.degrees.clear();
    c.options.matching = 0;
    CHECK_THROWS_AS((void)run_sweep(c), InputError);
    c.algos = {"lcf"};
    c.options.matching = 3;
    CHECK(describe(c).find("matching") == std::string::npos);
}

TEST_CASE("sweep: a cluster-level grid ends when the last cluster finishes its local broadcast") {
    // 0 → 1 (cost 2), then 0 → 2 (cost 3); T = (1, 10, 0.5).
    Network net = test::costs({{0, 2, 3}, {9, 0, 9}, {9, 9, 0}});
    net.set_local_broadcast({1, 10, 0.5});
    Schedule s("hand", 3, {Message{0, 0, {1, 2}}});
    s.add_transfer(0, 0, 1);
    s.add_transfer(0, 0, 2);
    const Timeline tl = simulate(net, s, ExecModel::blocking);
    CHECK(tl.completion == 5);
    // Cluster 1: reached at 2, + 10; cluster 2: 5 + 0.5; the root: last send at 5, + 1.
    CHECK(completion_with_local_broadcast(net, tl, 0, {1, 2}) == 12);
    CHECK(single_source_lower_bound(net, 0, {1, 2}, 0) == 12);
    const Network plain = test::costs({{0, 2, 3}, {9, 0, 9}, {9, 9, 0}});
    CHECK(completion_with_local_broadcast(plain, tl, 0, {1, 2}) == 5);

    // 0 → 1 (2), then 1 relays to 2 (9, complete at 11): cluster 1 starts inside at 11 after
    // its send, or at 2 on receipt.
    Schedule relay("hand", 3, {Message{0, 0, {1, 2}}});
    relay.add_transfer(0, 0, 1);
    relay.add_transfer(0, 1, 2);
    const Timeline rt = simulate(net, relay, ExecModel::blocking);
    CHECK(completion_with_local_broadcast(net, rt, 0, {1, 2}) == 21);
    CHECK(completion_with_local_broadcast(net, rt, 0, {1, 2}, LocalStart::on_receipt) == 12);
}

TEST_CASE("sweep: gnuplot script holds the data inline and the hit-rate panel on request") {
    const auto s = summarise({row(2, 0, "ecef", 0.5, 0.25), row(2, 0, "fef", 0.75, 0.25), row(4, 0, "ecef", 0.875, 0.5)});
    PlotOptions o;
    o.svg = "out/fig's.svg";
    o.title = std::string("a title");
    const std::string gp = gnuplot_script(s, o);
    CHECK(gp.find("outfile = 'out/fig''s.svg'") != std::string::npos);
    CHECK(gp.find("n \"lower bound\" \"ecef\" \"fef\"\n2 250 500 750\n4 500 875 NaN\n") != std::string::npos);
    CHECK(gp.find("$hits") == std::string::npos);
    o.hit_rate = true;
    CHECK(gnuplot_script(s, o).find("$hits << EOD\nn \"ecef\" \"fef\"\n2 100 0\n4 100 NaN\n") != std::string::npos);
}

TEST_CASE("files: replaced atomically and a failed write leaves nothing") {
    std::string name = "hetcast-sweep-test-";
    name += std::to_string(::getpid());
    const auto dir = std::filesystem::temp_directory_path() / name;
    std::filesystem::create_directories(dir);
    const auto file = dir / "a.csv";
    write_file_atomically(file, "one\n");
    write_file_atomically(file, "two\n");
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == "two\n");
    CHECK_THROWS_AS(write_file_atomically(dir / "missing" / "b.csv", "x"), Error);
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
    CHECK(entries == 1);
    std::filesystem::remove_all(dir);
}

TEST_SUITE_END();
