// Multi-node multicast (Wu, Yeh, Liu): patterns, FEF/ECF/WR/WRP and the §3.1 lower bound.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "hetcast/error.hpp"
#include "hetcast/model/generators.hpp"
#include "hetcast/sched/bhat.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/wu.hpp"
#include "hetcast/sim/simulate.hpp"
#include "hetcast/sim/pattern_bound.hpp"
#include "hetcast/sim/wu_bound.hpp"
#include "support.hpp"

using namespace hetcast;

namespace {

Network four() { return test::costs(Matrix(4, std::vector<double>(4, 1.0))); }

PatternRequest parse(std::string_view yaml) { return parse_pattern(yaml, "p.yaml", four()); }

// Wu §5's overheads: 80–400 µs fixed, 0.0001–0.01 µs per byte, on Bhat's random links.
Network random_network(std::mt19937_64& rng, std::size_t n) {
    const Network base = random_bhat(n, rng());
    std::vector<Overhead> send(n), recv(n);
    if (rng() % 4 != 0) {
        std::uniform_real_distribution<double> fixed(80e-6, 400e-6), per_byte(1e-10, 1e-8);
        for (std::size_t i = 0; i < n; ++i) {
            send[i] = {fixed(rng), per_byte(rng)};
            recv[i] = {fixed(rng), per_byte(rng)};
        }
    }
    return Network::parametric(base.names(), base.latency(), base.bandwidth(), send, recv);
}

double random_size(std::mt19937_64& rng) {
    static const double sizes[] = {1024, 65536, 1 << 20, 1.5e6};
    if (rng() % 5 == 0) return std::uniform_real_distribution<double>(1, 2e6)(rng);
    return sizes[rng() % 4];
}

// Random sources (now and then the same source twice) with random non-empty destination sets.
PatternRequest random_pattern(std::mt19937_64& rng, const Network& net) {
    const auto n = static_cast<NodeId>(net.size());
    PatternRequest p;
    const std::size_t count = 1 + rng() % (n + 1);
    for (std::size_t c = 0; c < count; ++c) {
        Message m{static_cast<NodeId>(rng() % n), random_size(rng), {}};
        for (NodeId v = 0; v < n; ++v) {
            if (v != m.source && rng() % 2 == 0) m.dests.push_back(v);
        }
        if (m.dests.empty()) m.dests.push_back((m.source + 1) % n);
        std::shuffle(m.dests.begin(), m.dests.end(), rng);
        p.messages.push_back(std::move(m));
    }
    return p;
}

PatternRequest all_to_all(const Network& net, double size) {
    PatternRequest p;
    for (NodeId s = 0; s < net.size(); ++s) {
        Message m{s, size, {}};
        for (NodeId d = 0; d < net.size(); ++d) {
            if (d != s) m.dests.push_back(d);
        }
        p.messages.push_back(std::move(m));
    }
    return p;
}

bool same_messages(const std::vector<Message>& a, const std::vector<Message>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Message& x, const Message& y) {
        return x.source == y.source && x.size == y.size && x.dests == y.dests;
    });
}

const Transfer& find(const Timeline& tl, MessageId m, NodeId from, NodeId to) {
    const auto it = std::find_if(tl.transfers.begin(), tl.transfers.end(), [&](const Transfer& t) {
        return t.message == m && t.from == from && t.to == to;
    });
    REQUIRE(it != tl.transfers.end());
    return *it;
}

// Every algorithm plans a feasible schedule of the pattern's messages, no earlier than the
// lower bound; WRP is never later than WR. Returns WR's and WRP's completions.
std::pair<double, double> check_all(const Network& net, const PatternRequest& req) {
    // Wu's bound adds up whole transfers: it holds for store-and-forward plans; the
    // reported bound holds for every plan, cut-through (exchange) included.
    const double lb = wu_lower_bound(net, req), any = pattern_lower_bound(net, req);
    double wr = 0, wrp = 0;
    for (const auto& a : pattern_algorithms()) {
        CAPTURE(a.name);
        const Schedule s = a.plan(net, req);
        CHECK(s.algorithm == a.name);
        CHECK(same_messages(s.messages, req.messages));
        const Timeline tl = simulate(net, s, req.model);
        CHECK(tl.completion >= any * (1 - 1e-12));
        if (s.relay == Relay::store_and_forward) CHECK(tl.completion >= lb * (1 - 1e-12));
        // A link carrying one message at a time can only delay the same schedule; it changes
        // nothing on a cost-matrix network (no time on the wire) or for one message.
        const Timeline one = simulate(net, s, req.model, LinkUse::one_at_a_time);
        CHECK(one.completion >= tl.completion * (1 - 1e-12));
        if (net.is_cost_matrix() || req.messages.size() == 1) CHECK(one.completion == doctest::Approx(tl.completion));
        if (a.name == "wr") wr = tl.completion;
        if (a.name == "wrp") wrp = tl.completion;
    }
    CHECK(wrp <= wr);
    return {wr, wrp};
}

}  // namespace

TEST_SUITE_BEGIN("wu");

TEST_CASE("wu: a pattern file parses into messages and files") {
    const PatternRequest p = parse(
        "- source: P0\n"
        "  size: 64KiB\n"
        "  dests: [P1, P2]\n"
        "- {source: P3, size: 1000, dests: all, file: data/x.bin}\n");
    REQUIRE(p.messages.size() == 2);
    CHECK(p.model == ExecModel::nonblocking);
    CHECK(p.messages[0].source == 0);
    CHECK(p.messages[0].size == 65536);
    CHECK(p.messages[0].dests == std::vector<NodeId>{1, 2});
    CHECK(p.messages[1].source == 3);
    CHECK(p.messages[1].size == 1000);
    CHECK(p.messages[1].dests == std::vector<NodeId>{0, 1, 2});
    CHECK(p.files == std::vector<std::string>{"", "data/x.bin"});
    CHECK(parse("[]").messages.empty());
}

TEST_CASE("wu: pattern errors name the 1-based line and column") {
    const auto bad = [](std::string_view yaml, const std::string& what) {
        CHECK_THROWS_WITH_AS((void)parse(yaml), what.c_str(), InputError);
    };
    bad("- source: P9\n  size: 1\n  dests: [P1]\n", "p.yaml:1:11: unknown node 'P9'");
    bad("- source: P0\n  size: 1\n  dests: [P1, Q]\n", "p.yaml:3:15: unknown node 'Q'");
    bad("- source: P0\n  size: 1\n  dests:\n    - P1\n    - P0\n", "p.yaml:5:7: source 'P0' is in its own dests");
    bad("- source: P0\n  size: 1\n  dests: [P1, P2, P1]\n", "p.yaml:3:19: duplicate dest 'P1'");
    bad("- source: P0\n  size: 1\n  dests: []\n", "p.yaml:3:10: empty dests");
    bad("- source: P0\n  size: 1\n  dests: P1\n", "p.yaml:3:10: dests must be a list of node names or 'all'");
    bad("- source: P0\n  size: 12XB\n  dests: [P1]\n",
        "p.yaml:2:9: bad byte count '12XB' (examples: 1048576, 64KiB, 1MiB, 10MB)");
    bad("- source: P0\n  size: -5\n  dests: [P1]\n",
        "p.yaml:2:9: bad byte count '-5' (examples: 1048576, 64KiB, 1MiB, 10MB)");
    bad("- source: P0\n  size: [1]\n  dests: [P1]\n", "p.yaml:2:9: size must be a byte count like 1048576 or 64KiB");
    bad("- source: P0\n  size: 1\n  dests: [P1]\n  colour: red\n",
        "p.yaml:4:3: unknown key 'colour' (known: source, size, dests, file)");
    bad("- source: P0\n  source: P1\n  size: 1\n  dests: [P2]\n", "p.yaml:2:3: duplicate key 'source'");
    bad("- source: P0\n  size: 1\n", "p.yaml:1:3: missing 'dests'");
    bad("- source:\n  size: 1\n  dests: [P1]\n", "p.yaml:1:3: source must be a node name");
    bad("source: P0\nsize: 1\ndests: [P1]\n", "p.yaml:1:1: a pattern is a list of {source, size, dests} entries");
    bad("", "p.yaml:1:1: a pattern is a list of {source, size, dests} entries");
    bad("- P0\n", "p.yaml:1:3: a pattern entry is a map {source, size, dests}");
    bad("- {source: P0, size: 1, dests: [P1]}\n- {source: P1, size: 1, dests: [P5]}\n", "p.yaml:2:33: unknown node 'P5'");
    bad("- {source: P0, size: 1, dests: [P1]\n", "p.yaml:2:1: end of map flow not found");
    const Network lone = test::costs({{0}});
    CHECK_THROWS_WITH_AS((void)parse_pattern("- {source: P0, size: 1, dests: all}", "one", lone),
                         "one:1:32: empty dests: the network has no other node", InputError);
}

TEST_CASE("wu: load_pattern reads a file and names a missing one") {
    const auto path = std::filesystem::temp_directory_path() / "hetcast-wu-test-pattern.yaml";
    {
        std::ofstream out(path);
        out << "- source: P1\n  size: 1MiB\n  dests: all\n";
    }
    const PatternRequest p = load_pattern(path, four());
    std::filesystem::remove(path);
    REQUIRE(p.messages.size() == 1);
    CHECK(p.messages[0].size == 1048576);
    CHECK(p.messages[0].dests == std::vector<NodeId>{0, 2, 3});
    CHECK_THROWS_WITH_AS((void)load_pattern(path, four()), ("cannot read pattern file '" + path.string() + "'").c_str(),
                         InputError);
}

TEST_CASE("wu: requests are checked and algorithms are found by name") {
    const Network net = four();
    CHECK_THROWS_WITH_AS((void)plan_wr(net, PatternRequest{{Message{0, 1, {1, 0}}}}), "source 'P0' is in its own dests",
                         InputError);
    CHECK_THROWS_AS((void)plan_wu_ecf(net, PatternRequest{{Message{0, 1, {1, 1}}}}), InputError);
    CHECK_THROWS_AS((void)wu_lower_bound(net, PatternRequest{{Message{0, 1, {7}}}}), InputError);
    CHECK_THROWS_AS((void)plan_wrp(net, PatternRequest{{Message{0, -1, {1}}}}), InputError);
    CHECK(find_pattern_algorithm("wrp").name == "wrp");
    CHECK_THROWS_WITH_AS((void)find_pattern_algorithm("ecef"),
                         "unknown pattern algorithm 'ecef' (known: fef, ecf, wr, wrp, exchange)", InputError);
}

// Wu §4.4, Figure 1 (the figure is lost from the text; this instance follows its description).
// P1 receives m2 from P4 by t1 = 1, then waits for m0 from P0, which arrives at t4 = 10.
// P1 must also send its own m1 to P2 and P3 (4 each). WR appends those sends after the
// receive (Figure 1a); WRP puts them into the wait, at t1 and t2 = 5, so the receive is
// issued at t3 = 9 and still completes at t4 (Figure 1b). Unit costs, 100 elsewhere.
TEST_CASE("wu: Figure 1, sends preempt an idle receive without delaying it") {
    Matrix c(6, std::vector<double>(6, 100));
    for (std::size_t i = 0; i < 6; ++i) c[i][i] = 0;
    c[0][1] = 10;
    c[1][2] = c[1][3] = 4;
    c[4][1] = 1;
    c[4][2] = 3;
    c[5][3] = 3;
    const Network net = test::costs(c);
    const PatternRequest req{{Message{0, 1, {1}}, Message{1, 1, {2, 3}}, Message{4, 1, {1}}, Message{4, 1, {2}},
                              Message{5, 1, {3}}}};
    const auto send = [](MessageId m, NodeId to) { return Task{Op::send, m, to}; };
    const auto recv = [](MessageId m, NodeId from) { return Task{Op::recv, m, from}; };
    Schedule a("hand", 6, req.messages);
    a.tasks = {{send(0, 1)},
               {recv(2, 4), recv(0, 0), send(1, 2), send(1, 3)},
               {recv(3, 4), recv(1, 1)},
               {recv(4, 5), recv(1, 1)},
               {send(2, 1), send(3, 2)},
               {send(4, 3)}};
    Schedule b = a;
    b.tasks[1] = {recv(2, 4), send(1, 2), send(1, 3), recv(0, 0)};

    const Timeline ta = simulate(net, a, ExecModel::nonblocking);
    CHECK(find(ta, 2, 4, 1).complete == 1);  // t1: P1 issues the receive of m0
    CHECK(find(ta, 0, 0, 1).arrival == 10);  // t4
    CHECK(find(ta, 0, 0, 1).complete == 10);
    CHECK(find(ta, 1, 1, 2).start == 10);
    CHECK(find(ta, 1, 1, 3).start == 14);
    CHECK(ta.completion == 18);

    const Timeline tb = simulate(net, b, ExecModel::nonblocking);
    CHECK(find(tb, 1, 1, 2).start == 1);        // t1
    CHECK(find(tb, 1, 1, 3).start == 5);        // t2
    CHECK(find(tb, 1, 1, 3).sender_free == 9);  // t3: the receive waits only t4 - t3
    CHECK(find(tb, 0, 0, 1).complete == 10);    // not delayed
    CHECK(find(tb, 1, 1, 2).complete == 5);
    CHECK(find(tb, 1, 1, 3).complete == 9);
    CHECK(tb.completion == 10);

    const Schedule wr = plan_wr(net, req);
    const Schedule wrp = plan_wrp(net, req);
    CHECK(wr.tasks == a.tasks);
    CHECK(wrp.tasks == b.tasks);
    CHECK(simulate(net, wrp, req.model).completion == 10);
    CHECK(wu_lower_bound(net, req) == 10);
}

// Eq. (2) as printed takes the receives in earliest-reach-first order. With mixed sizes that
// can exceed a feasible schedule: I gets a (10 bytes, in at 0, R = 10, L = 10) and
// b (1 byte, in at 4, R = 1, L = 5). Earliest reach first: max(5 + 10, 10) = 15; taking a
// first completes at 11. wu_lower_bound orders by L - R instead and gives 11.
TEST_CASE("wu: the lower bound orders receives by release, eq. (2) as printed is not a bound") {
    const Matrix lat{{0, 100, 0}, {100, 0, 4}, {100, 100, 0}};
    const Matrix bw(3, std::vector<double>(3, 1e18));
    const Network net = Network::parametric({"A", "B", "I"}, lat, bw, std::vector<Overhead>(3),
                                            {{0, 0}, {0, 0}, {0, 1}});
    const PatternRequest req{{Message{0, 10, {2}}, Message{1, 1, {2}}}};
    Schedule s("hand", 3, req.messages);
    s.tasks = {{{Op::send, 0, 2}}, {{Op::send, 1, 2}}, {{Op::recv, 0, 0}, {Op::recv, 1, 1}}};
    const Timeline tl = simulate(net, s, ExecModel::nonblocking);
    CHECK(tl.completion == doctest::Approx(11));
    const double la = net.time(0, 2, 10), lb = net.time(1, 2, 1);
    REQUIRE(lb < la);
    const double printed = std::max(lb + net.recv_busy(2, 10), la);
    CHECK(printed == doctest::Approx(15));
    CHECK(printed > tl.completion);
    CHECK(wu_lower_bound(net, req) == doctest::Approx(11));
    CHECK(wu_lower_bound(net, req) <= tl.completion);
    check_all(net, req);
}

TEST_CASE("wu: lower bound of equal sizes is eq. (2) in earliest-reach-first order") {
    // Three sources to one destination, R = 2, direct costs 3, 4, 9 (S = 0, wire = time - 2).
    const Matrix lat{{0, 100, 100, 1}, {100, 0, 100, 2}, {100, 100, 0, 7}, {100, 100, 100, 0}};
    const Network net = Network::parametric(test::p_names(4), lat, Matrix(4, std::vector<double>(4, 1e18)),
                                            std::vector<Overhead>(4), std::vector<Overhead>(4, {2, 0}));
    const PatternRequest req{{Message{0, 8, {3}}, Message{1, 8, {3}}, Message{2, 8, {3}}}};
    CHECK(wu_lower_bound(net, req) == doctest::Approx(9));  // 3, max(3 + 2, 4) = 5, max(5 + 2, 9) = 9
    check_all(net, req);
}

TEST_CASE("wu: a single-source pattern is a single-node multicast") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 40; ++round) {
        const std::size_t n = 2 + rng() % 9;
        const Network net = round % 2 ? random_network(rng, n) : random_costs(n, rng(), {1, 100});
        const auto root = static_cast<NodeId>(rng() % n);
        std::vector<NodeId> dests;
        for (NodeId v = 0; v < n; ++v) {
            if (v != root && rng() % 3 != 0) dests.push_back(v);
        }
        if (dests.empty()) dests.push_back((root + 1) % static_cast<NodeId>(n));
        const double size = random_size(rng);
        for (ExecModel model : {ExecModel::nonblocking, ExecModel::blocking}) {
            const PatternRequest req{{Message{root, size, dests}}, model};
            const PlanRequest single = make_request(net, root, dests, size, model);
            // Same edge order as Bhat's FEF; ECF's completion is Bhat's ECEF key R_i + C_ij
            // wherever the receiver is idle: cost matrices, and the blocking model.
            CHECK(plan_wu_fef(net, req).tasks == plan_fef(net, single).tasks);
            if (net.is_cost_matrix() || model == ExecModel::blocking) {
                CHECK(plan_wu_ecf(net, req).tasks == plan_ecef(net, single).tasks);
            }
            check_all(net, req);
        }
    }
}

TEST_CASE("wu: all-to-all broadcast on small networks") {
    std::mt19937_64 rng(11);
    for (std::size_t n = 2; n <= 7; ++n) {
        for (int round = 0; round < 5; ++round) {
            const Network net = random_network(rng, n);
            const PatternRequest req = all_to_all(net, random_size(rng));
            const auto [wr, wrp] = check_all(net, req);
            CHECK(wrp <= wr);
            std::size_t transfers = 0;
            for (const auto& a : pattern_algorithms()) transfers += a.plan(net, req).transfer_count();
            // Every algorithm reaches each of the n(n-1) (message, destination) pairs once.
            CHECK(transfers == pattern_algorithms().size() * n * (n - 1));
        }
    }
}

TEST_CASE("wu: under the blocking model every plan is feasible and WRP is WR") {
    std::mt19937_64 rng(5);
    for (int round = 0; round < 40; ++round) {
        const Network net = random_network(rng, 2 + rng() % 8);
        PatternRequest req = random_pattern(rng, net);
        req.model = ExecModel::blocking;
        check_all(net, req);
        CHECK(plan_wrp(net, req).tasks == plan_wr(net, req).tasks);
    }
}

TEST_CASE("wu: property: feasible, above the lower bound, WRP no later than WR (300 patterns)") {
    std::mt19937_64 rng(2024);
    int preempted = 0;
    for (int round = 0; round < 300; ++round) {
        CAPTURE(round);
        const Network net = round % 5 == 4 ? random_costs(2 + rng() % 11, rng(), {1, 100})
                                           : random_network(rng, 2 + rng() % 11);
        const PatternRequest req = random_pattern(rng, net);
        const auto [wr, wrp] = check_all(net, req);
        preempted += wrp < wr;
    }
    CHECK(preempted > 0);
}

TEST_SUITE_END();

// ---- The pattern report: plan_pattern_* as `hetcast plan --pattern` prints them. ----
#include <map>
#include <set>
#include <sstream>

#include "hetcast/model/loader.hpp"
#include "hetcast/report/plan_report.hpp"

namespace {

// A pattern plan's JSON agrees with its timeline and its pattern: every (message, dest) is
// reached exactly once, completion_time is the latest `complete`, the bound is Wu's.
void check_pattern_json(const Network& net, const PatternRequest& req, const PatternResult& r) {
    const nlohmann::json j = to_json(net, req, r);
    CHECK(j.at("algorithm") == r.schedule.algorithm);
    CHECK(j.at("model") == std::string(to_string(req.model)));
    CHECK(j.at("lower_bound").get<double>() == r.lower_bound);
    REQUIRE(j.at("messages").size() == req.messages.size());
    std::set<std::pair<std::size_t, std::string>> expected;
    for (std::size_t k = 0; k < req.messages.size(); ++k) {
        const auto& jm = j.at("messages")[k];
        CHECK(jm.at("id") == k);
        CHECK(jm.at("source") == net.name(req.messages[k].source));
        CHECK(jm.at("size").get<double>() == req.messages[k].size);
        REQUIRE(jm.at("dests").size() == req.messages[k].dests.size());
        for (std::size_t i = 0; i < req.messages[k].dests.size(); ++i) {
            CHECK(jm.at("dests")[i] == net.name(req.messages[k].dests[i]));
            expected.insert({k, net.name(req.messages[k].dests[i])});
        }
    }
    std::set<std::pair<std::size_t, std::string>> reached;
    double latest = 0;
    for (const auto& t : j.at("transfers")) {
        const auto k = t.at("message").get<std::size_t>();
        REQUIRE(k < req.messages.size());
        CHECK(net.find(t.at("from").get<std::string>()).has_value());
        CHECK(reached.insert({k, t.at("to").get<std::string>()}).second);
        CHECK(t.at("start").get<double>() <= t.at("sender_free").get<double>());
        CHECK(t.at("arrival").get<double>() <= t.at("complete").get<double>());
        latest = std::max(latest, t.at("complete").get<double>());
    }
    CHECK(reached == expected);
    CHECK(j.at("completion_time").get<double>() == latest);
    CHECK(j.at("completion_time").get<double>() == r.timeline.completion);
}

}  // namespace

TEST_SUITE_BEGIN("pattern report");

TEST_CASE("pattern report: all ranks every algorithm, auto is the first, JSON matches the simulation") {
    std::mt19937_64 rng(31);
    for (int round = 0; round < 60; ++round) {
        CAPTURE(round);
        const Network net = round % 4 == 3 ? random_costs(2 + rng() % 9, rng(), {1, 100})
                                           : random_network(rng, 2 + rng() % 9);
        PatternRequest req = random_pattern(rng, net);
        req.model = round % 3 == 2 ? ExecModel::blocking : ExecModel::nonblocking;
        const double lb = pattern_lower_bound(net, req);
        const auto all = plan_pattern_all(net, req);
        REQUIRE(all.size() == pattern_algorithms().size());
        std::map<std::string, double> completion;
        for (std::size_t i = 0; i < all.size(); ++i) {
            const auto& r = all[i];
            CAPTURE(r.schedule.algorithm);
            if (i > 0) CHECK(all[i - 1].timeline.completion <= r.timeline.completion);
            CHECK(r.lower_bound == lb);
            CHECK(r.lower_bound <= r.timeline.completion * (1 + 1e-12));
            // The report's timeline is the simulator's on the algorithm's own plan.
            const Schedule again = find_pattern_algorithm(r.schedule.algorithm).plan(net, req);
            CHECK(simulate(net, again, req.model).completion == r.timeline.completion);
            completion[r.schedule.algorithm] = r.timeline.completion;
            check_pattern_json(net, req, r);
        }
        REQUIRE(completion.size() == pattern_algorithms().size());
        CHECK(completion.at("wrp") <= completion.at("wr"));
        const PatternResult best = plan_pattern_auto(net, req);
        CHECK(best.schedule.algorithm == "auto:" + all.front().schedule.algorithm);
        CHECK(best.timeline.completion == all.front().timeline.completion);
        const PatternResult one = plan_pattern_and_simulate(net, req, find_pattern_algorithm("ecf"));
        CHECK(one.schedule.algorithm == "ecf");
        CHECK(one.timeline.completion == completion.at("ecf"));
        check_pattern_json(net, req, best);
    }
}

TEST_CASE("pattern report: a one-message pattern reports the same transfers as the single-source plan") {
    std::mt19937_64 rng(8);
    for (int round = 0; round < 20; ++round) {
        const Network net = random_network(rng, 2 + rng() % 8);
        const auto root = static_cast<NodeId>(rng() % net.size());
        const PlanRequest single = make_request(net, root, {}, random_size(rng), ExecModel::nonblocking);
        const PatternRequest req{{Message{root, single.size, single.dests}}};
        const auto a = to_json(net, req, plan_pattern_and_simulate(net, req, find_pattern_algorithm("fef")));
        const auto b = to_json(net, single, plan_and_simulate(net, single, find_algorithm("fef")));
        CHECK(a.at("completion_time") == b.at("completion_time"));
        REQUIRE(a.at("transfers").size() == b.at("transfers").size());
        for (std::size_t i = 0; i < a.at("transfers").size(); ++i) {
            auto x = a.at("transfers")[i], y = b.at("transfers")[i];
            CHECK(x.at("message") == 0);
            x.erase("message");
            y.erase("message");
            CHECK(x == y);
        }
    }
}

TEST_CASE("pattern report: printed plan lists the messages, every transfer and the summary") {
    std::mt19937_64 rng(3);
    const Network net = random_network(rng, 6);
    const PatternRequest req{{Message{0, 1000, {1, 2, 3}}, Message{4, 2e5, {0, 5}}}};
    const PatternResult r = plan_pattern_and_simulate(net, req, find_pattern_algorithm("wrp"));
    std::ostringstream out;
    print_pattern(out, net, req, r);
    std::vector<std::string> lines;
    std::istringstream in(out.str());
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    // Title, two message lines, table header, five transfers, summary.
    REQUIRE(lines.size() == 1 + 2 + 1 + 5 + 1);
    CHECK(lines[0] == "wrp: 2 messages, nonblocking model");
    CHECK(lines[1] == "  message 0: multicast of 1000 bytes from " + net.name(0) + " to 3 nodes");
    CHECK(lines[2] == "  message 1: multicast of 200000 bytes from " + net.name(4) + " to 2 nodes");
    CHECK(lines[3].find("msg") != std::string::npos);
    CHECK(lines.back().rfind("completion " + format_seconds(r.timeline.completion) + ", lower bound " +
                                 format_seconds(r.lower_bound), 0) == 0);
    // The single-source table has no message column.
    const PlanRequest single = make_request(net, 0, {}, 1000, ExecModel::nonblocking);
    std::ostringstream plain_out;
    print_plan(plain_out, net, single, plan_and_simulate(net, single, find_algorithm("fef")));
    const std::string plain = plain_out.str();
    CHECK(plain.find("msg") == std::string::npos);
    CHECK(std::count(plain.begin(), plain.end(), '\n') == 1 + 1 + 5 + 1);
}

TEST_CASE("pattern report: the example pattern plans on three-subnets.yaml") {
    const std::filesystem::path dir = std::filesystem::path(HETCAST_SOURCE_DIR) / "conf" / "examples";
    const Network net = load_network(dir / "three-subnets.yaml");
    const PatternRequest req = load_pattern(dir / "three-subnets-pattern.yaml", net);
    REQUIRE(req.messages.size() == 3);
    CHECK(req.messages[0].dests.size() == net.size() - 1);
    const auto all = plan_pattern_all(net, req);
    REQUIRE(all.size() == pattern_algorithms().size());
    CHECK(all.front().lower_bound > 0);
    for (const auto& r : all) {
        CHECK(r.lower_bound <= r.timeline.completion);
        check_pattern_json(net, req, r);
    }
}

TEST_SUITE_END();
