// Pipelined (cut-through) broadcast trees: pipeline, chain and auto's cut-through variants,
// on random capacity networks and on the shapes of the netlab topologies (conf/netlab).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "hetcast/sched/auto.hpp"
#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/error.hpp"
#include "hetcast/runtime/push_plan.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "netlab_networks.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/simulate.hpp"

using namespace hetcast;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double mib = 1 << 20;

using Host = test::LabHost;
using test::with_queues;
Network netlab(const std::vector<test::LabSubnet>& subnets) { return test::lab_network(subnets); }
std::vector<Host> hosts(char subnet, std::size_t count) { return test::lab_hosts(std::string(1, subnet), count); }

Network slow_sender() {
    auto a = hosts('a', 4);
    a[1].out_mbit = 20;
    return netlab({{100, a}, {50, hosts('b', 3)}, {50, hosts('c', 3)}});
}
Network uneven() {
    auto b = hosts('b', 3);
    b[1] = {"b2", 20, 20};
    return netlab({{30, hosts('a', 3)}, {50, b}, {80, hosts('c', 3)}});
}
Network two_subnets() { return netlab({{40, hosts('a', 4)}, {40, hosts('b', 4)}}); }
Network three_subnets() { return netlab({{50, hosts('a', 4)}, {40, hosts('b', 3)}, {30, hosts('c', 2)}}); }

/// A random capacity network; `slow` hosts send at a tenth of the slowest NIC or less.
Network random_capacity_net(std::mt19937_64& rng, std::size_t n, std::size_t slow = 0) {
    std::uniform_real_distribution<double> rate(5e6, 1e8), lat(0, 1e-3);
    std::vector<std::string> names;
    Matrix l(n, std::vector<double>(n)), b(n, std::vector<double>(n));
    for (std::size_t i = 0; i < n; ++i) {
        names.push_back("n" + std::to_string(i));
        for (std::size_t j = 0; j < n; ++j) {
            l[i][j] = lat(rng);
            b[i][j] = rate(rng) * 2;
        }
    }
    Network net = Network::parametric(names, l, b, std::vector<Overhead>(n), std::vector<Overhead>(n));
    const std::size_t groups = 1 + rng() % std::min<std::size_t>(n, 3);
    Subnets sub(groups);
    for (NodeId i = 0; i < n; ++i) sub[i < groups ? i : rng() % groups].push_back(i);
    net.set_subnets(sub);
    Capacities c;
    for (std::size_t i = 0; i < n; ++i) {
        c.egress.push_back(rate(rng));
        c.ingress.push_back(rate(rng));
        c.disk.push_back(rng() % 4 == 0 ? rate(rng) : inf);
    }
    for (std::size_t k = 0; k < slow; ++k) c.egress[rng() % n] = 5e5;
    for (std::size_t k = 0; k < groups; ++k) c.uplink.push_back(rng() % 4 == 0 ? inf : rate(rng));
    net.set_capacities(c);
    return net;
}

std::vector<TreeEdge> edges_of(const Schedule& s) {
    std::vector<TreeEdge> e;
    for (NodeId i = 0; i < s.tasks.size(); ++i) {
        for (const Task& t : s.tasks[i]) {
            if (t.op == Op::send) e.emplace_back(i, t.peer);
        }
    }
    return e;
}

double predict(const Network& net, const Schedule& s) { return simulate(net, s, ExecModel::nonblocking).completion; }

PlanRequest broadcast(const Network& net, double size) {
    return make_request(net, 0, {}, size, ExecModel::nonblocking);
}

/// The least predicted completion over the store-and-forward algorithms as they plan.
double best_store_and_forward(const Network& net, const PlanRequest& req) {
    double best = inf;
    for (const auto& a : algorithms()) {
        if (a.name == "auto" || (a.applies && !a.applies(net, req))) continue;
        const Schedule s = a.plan(net, req);
        if (s.relay == Relay::store_and_forward) best = std::min(best, predict(net, s));
    }
    return best;
}

}  // namespace

TEST_CASE("pipeline and chain: every destination once, relays receive before they send, simulate() accepts them") {
    std::mt19937_64 rng(31);
    for (int trial = 0; trial < 200; ++trial) {
        CAPTURE(trial);
        const std::size_t n = 2 + rng() % 11;
        Network net = random_capacity_net(rng, n, rng() % 3);
        if (rng() % 2 == 0) {  // host NICs as FIFO queues: other trees win (senders_apart)
            Capacities c = *net.capacities();
            c.queues = Queues::fifo;
            net.set_capacities(c);
        }
        const NodeId root = static_cast<NodeId>(rng() % n);
        std::vector<NodeId> dests;
        for (NodeId i = 0; i < n; ++i) {
            if (i != root && rng() % 3 != 0) dests.push_back(i);
        }
        if (dests.empty()) dests.push_back((root + 1) % static_cast<NodeId>(n));
        const double size = rng() % 2 ? 64 << 10 : static_cast<double>(1 + rng() % 64) * mib;
        const PlanRequest req = make_request(net, root, dests, size, ExecModel::nonblocking);
        for (const char* name : {"pipeline", "chain"}) {
            CAPTURE(name);
            const Schedule s = find_algorithm(name).plan(net, req);
            CHECK(s.algorithm == name);
            CHECK((s.relay == Relay::cut_through) == (size > static_cast<double>(min_planned_piece)));
            std::vector<int> received(n, 0);
            for (NodeId i = 0; i < n; ++i) {
                for (std::size_t k = 0; k < s.tasks[i].size(); ++k) {
                    const Task& t = s.tasks[i][k];
                    if (t.op == Op::recv) {
                        ++received[i];
                        CHECK(k == 0);
                    }
                }
            }
            for (NodeId i = 0; i < n; ++i) {
                const bool dest = std::find(dests.begin(), dests.end(), i) != dests.end();
                CHECK(received[i] == (dest ? 1 : 0));
            }
            const double t = predict(net, s);
            CHECK(t >= capacity_lower_bound(net, root, dests, size) * (1 - 1e-9));
        }
    }
}

TEST_CASE("pipeline: its tree carries at least what the rank chain carries, on networks with slow hosts") {
    std::mt19937_64 rng(37);
    for (int trial = 0; trial < 150; ++trial) {
        CAPTURE(trial);
        const std::size_t n = 3 + rng() % 10;
        const Network net = random_capacity_net(rng, n, 1 + rng() % 2);
        const PlanRequest req = make_request(net, static_cast<NodeId>(rng() % n), {}, 256 * mib, ExecModel::nonblocking);
        const Schedule pipeline = plan_pipeline(net, req), chain = plan_chain(net, req);
        CHECK(tree_throughput(net, edges_of(pipeline)) >= tree_throughput(net, edges_of(chain)) * (1 - 1e-9));
        // Both weighed with the piece each chose, as plan_pipeline() weighs its trees; a tree
        // with more slack may be kept within tree_tie.
        CHECK(weighed_completion(net, pipeline, req.model) <= weighed_completion(net, chain, req.model) * (1 + tree_tie + 1e-9));
    }
}

TEST_CASE("pipeline: a slow sender is never the way into a subnet") {
    // 5 subnets of 10 (node i in subnet i mod 5), 5 MB/s uplinks; h3 sends at 2.4 MB/s. A
    // tree that enters subnet 3 through h3 can carry no more than 2.5 MB/s.
    const std::size_t n = 50, groups = 5;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) names.push_back("h" + std::to_string(i));
    Network net = Network::parametric(names, Matrix(n, std::vector<double>(n, 1e-4)),
                                      Matrix(n, std::vector<double>(n, 23.9e6)), std::vector<Overhead>(n),
                                      std::vector<Overhead>(n));
    Subnets sub(groups);
    for (NodeId i = 0; i < n; ++i) sub[i % groups].push_back(i);
    net.set_subnets(sub);
    Capacities c{std::vector<double>(n, 23.9e6), std::vector<double>(n, 23.9e6), std::vector<double>(n, inf),
                 std::vector<double>(groups, 5e6)};
    c.egress[3] = 2.4e6;
    net.set_capacities(c);
    const PlanRequest req = broadcast(net, 32 * mib);
    const Schedule s = plan_pipeline(net, req);
    CHECK(tree_throughput(net, edges_of(s)) == doctest::Approx(5e6));
    CHECK(s.tasks[3].size() == 1);
    // Four subnet hops of a 2 MiB piece at 5 MB/s are the start-up.
    CHECK(predict(net, s) <= capacity_lower_bound(net, 0, req.dests, req.size) + 4 * 2 * mib / 5e6 + 0.1);
}

TEST_CASE("pipeline: store-and-forward outside the non-blocking model and on cost matrices") {
    const Network net = two_subnets();
    for (ExecModel model : {ExecModel::blocking, ExecModel::postal}) {
        const PlanRequest req = make_request(net, 0, {}, 32 * mib, model);
        const Schedule s = plan_pipeline(net, req);
        CHECK(s.relay == Relay::store_and_forward);
        CHECK(simulate(net, s, model).completion > 0);
    }
    const Network costs = Network::from_costs({"a", "b", "c"}, {{0, 1, 2}, {1, 0, 1}, {2, 1, 0}});
    const Schedule s = plan_chain(costs, make_request(costs, 0, {}, 32 * mib, ExecModel::nonblocking));
    CHECK(s.relay == Relay::store_and_forward);
    CHECK(simulate(costs, s, ExecModel::nonblocking).completion == doctest::Approx(2));
}

TEST_CASE("tree throughput: the resource most edges share, or the slowest pair") {
    const Network net = two_subnets();  // a1..a4 = 0..3, b1..b4 = 4..7
    const double nic = 0.956 * 200e6 / 8, uplink = 0.956 * 40e6 / 8;
    CHECK(tree_throughput(net, {}) == inf);
    CHECK(tree_throughput(net, {{0, 1}}) == doctest::Approx(nic));
    CHECK(tree_throughput(net, {{0, 1}, {0, 2}, {0, 3}}) == doctest::Approx(nic / 3));
    CHECK(tree_throughput(net, {{0, 4}}) == doctest::Approx(uplink));
    CHECK(tree_throughput(net, {{0, 4}, {1, 5}}) == doctest::Approx(uplink / 2));
}

TEST_CASE("netlab slow-sender: pipeline keeps a2 a leaf and comes within 10% of the bound for 32 MiB") {
    const Network net = slow_sender();
    const PlanRequest req = broadcast(net, 32 * mib);
    const Schedule s = plan_pipeline(net, req);
    REQUIRE(s.relay == Relay::cut_through);
    const NodeId a2 = net.id("a2");
    CHECK(std::none_of(s.tasks[a2].begin(), s.tasks[a2].end(), [](const Task& t) { return t.op == Op::send; }));
    CHECK(predict(net, s) <= 1.10 * capacity_lower_bound(net, 0, req.dests, req.size));
}

TEST_CASE("netlab topologies: no sender's NIC is split down to the tree's rate where a link on the way also holds it there") {
    // A NIC split to the same share as an uplink further on costs TCP ~12% (measured on
    // netlab slow-sender: 41.8 of 47.8 Mbit/s when a1's NIC fed four children below a
    // 50 Mbit/s uplink); the flow model calls that free, so the planner keeps the headroom.
    for (const Network& net : {slow_sender(), uneven(), two_subnets(), three_subnets()}) {
        CAPTURE(net.name(0));
        const PlanRequest req = broadcast(net, 32 * mib);
        const auto edges = edges_of(plan_pipeline(net, req));
        const double rate = tree_throughput(net, edges);
        const auto caps = resource_capacities(net);
        std::vector<std::size_t> users(caps.size(), 0);
        for (const auto& [u, v] : edges) {
            for (std::size_t r : flow_path(net, u, v).resources) ++users[r];
        }
        const auto tight = [&](std::size_t r) { return caps[r] / static_cast<double>(users[r]) < 1.15 * rate; };
        for (const auto& [u, v] : edges) {
            CAPTURE(net.name(u));
            CAPTURE(net.name(v));
            const auto path = flow_path(net, u, v).resources;
            const bool nic = std::find(path.begin(), path.end(), std::size_t{u}) != path.end() && tight(u);
            const bool beyond = std::any_of(path.begin(), path.end(), [&](std::size_t r) { return r != u && tight(r); });
            CHECK_FALSE((nic && beyond));
        }
    }
}

TEST_CASE("netlab two-subnets and three-subnets: pipeline within 10% of the bound for 32 MiB") {
    for (const Network& net : {two_subnets(), three_subnets()}) {
        const PlanRequest req = broadcast(net, 32 * mib);
        const Schedule s = plan_pipeline(net, req);
        CHECK(s.relay == Relay::cut_through);
        CHECK(predict(net, s) <= 1.10 * capacity_lower_bound(net, 0, req.dests, req.size));
        // Each remote subnet's uplink is crossed once, inwards.
        const auto sub = net.subnet_of();
        std::vector<int> into(net.subnets()->size(), 0);
        for (const auto& [u, v] : edges_of(s)) {
            if (sub[u] != sub[v]) ++into[sub[v]];
        }
        CHECK(into[0] == 0);
        for (std::size_t k = 1; k < into.size(); ++k) CHECK(into[k] == 1);
    }
}

TEST_CASE("netlab topologies: auto cuts through 32 MiB and stores and forwards 64 KiB") {
    for (const Network& net : {slow_sender(), uneven(), two_subnets(), three_subnets()}) {
        CAPTURE(net.name(0));
        const PlanRequest big = broadcast(net, 32 * mib);
        const AutoChoice choice = plan_auto_explained(net, big);
        CHECK(choice.best.relay == Relay::cut_through);
        CHECK(choice.best.algorithm.rfind("auto:", 0) == 0);
        double least = inf;
        for (const auto& [name, t] : choice.predicted) least = std::min(least, t);
        CHECK(weighed_completion(net, choice.best, big.model) <= least * 1.03);  // a near-tie robust to FIFO links may win
        CHECK(least < best_store_and_forward(net, big));
        CHECK(std::any_of(choice.predicted.begin(), choice.predicted.end(),
                          [](const auto& p) { return p.first == "flat-tree+ct"; }));

        const PlanRequest small = broadcast(net, 64 << 10);
        const Schedule s = plan_auto(net, small);
        CHECK(s.relay == Relay::store_and_forward);
        CHECK(predict(net, s) <= predict(net, with_cut_through(plan_pipeline(net, small))) * 1.03);
    }
}

TEST_CASE("an X+ct candidate auto weighs can be asked for by name, and plans the same") {
    for (const Network& net : {slow_sender(), two_subnets(), three_subnets()}) {
        CAPTURE(net.name(0));
        const PlanRequest big = broadcast(net, 32 * mib);
        int named = 0;
        for (const auto& [name, t] : plan_auto_explained(net, big).predicted) {
            if (name.size() < 3 || name.compare(name.size() - 3, 3, "+ct") != 0) continue;
            CAPTURE(name);
            const Schedule s = find_algorithm(name).plan(net, big);
            CHECK(s.algorithm == name);
            CHECK(s.relay == Relay::cut_through);
            CHECK(weighed_completion(net, s, big.model) == doctest::Approx(t));
            ++named;
        }
        CHECK(named >= 3);
        CHECK_THROWS_AS((void)find_algorithm("flat-tree+ct").plan(net, broadcast(net, 16 << 10)), InputError);
    }
    CHECK_THROWS_AS((void)find_algorithm("auto+ct"), InputError);
}

TEST_CASE("netlab topologies: predictions at 32 MiB and 64 KiB") {
    const std::vector<std::pair<std::string, Network>> nets = {{"slow-sender", slow_sender()},
                                                               {"uneven", uneven()},
                                                               {"two-subnets", two_subnets()},
                                                               {"three-subnets", three_subnets()}};
    for (const auto& [name, net] : nets) {
        for (const double size : {32 * mib, 64.0 * 1024}) {
            const PlanRequest req = broadcast(net, size);
            const double lb = capacity_lower_bound(net, 0, req.dests, size);
            const double pipeline = predict(net, plan_pipeline(net, req)), chain = predict(net, plan_chain(net, req));
            const double sf = best_store_and_forward(net, req);
            MESSAGE(name << " " << size << " B: pipeline " << pipeline << " s, chain " << chain
                         << " s, best store-and-forward " << sf << " s, capacity bound " << lb << " s, auto "
                         << plan_auto(net, req).algorithm);
            CHECK(pipeline >= lb * (1 - 1e-9));
        }
    }
}

TEST_CASE("piece size: 2 MiB, doubled until a message has at most max_pieces, none past 8 MiB pieces") {
    CHECK(piece_for(3 * mib) == default_piece);
    CHECK(piece_for(static_cast<double>(default_piece) * max_pieces) == default_piece);
    CHECK(piece_for(static_cast<double>(default_piece) * max_pieces + 1) == 2 * default_piece);
    CHECK(piece_for(static_cast<double>(max_cut_through_piece) * max_pieces) == max_cut_through_piece);
    CHECK(piece_for(static_cast<double>(max_cut_through_piece) * max_pieces + 1) == 0);
    const Network net = two_subnets();
    PlanRequest huge = make_request(net, 0, {}, static_cast<double>(max_cut_through_piece) * max_pieces * 2,
                                    ExecModel::nonblocking);
    CHECK_FALSE(cuts_through(net, huge));
    CHECK(plan_pipeline(net, huge).relay == Relay::store_and_forward);
    huge.size = 300.0 * (1ull << 30);
    const Schedule big = plan_pipeline(net, huge);
    CHECK(big.relay == Relay::cut_through);
    CHECK(big.piece == 8ull << 20);
}

TEST_CASE("plan_push: a piece size asked for replaces the planner's, within bounds") {
    const Network net = two_subnets();
    const PlanRequest req = make_request(net, 0, {}, 32 * mib, ExecModel::nonblocking);
    CHECK(plan_push(net, req, "pipeline").schedule.piece == plan_pipeline(net, req).piece);
    const JobSpec s = plan_push(net, req, "pipeline", 1 << 20);
    CHECK(s.schedule.relay == Relay::cut_through);
    CHECK(s.schedule.piece == 1 << 20);
    CHECK(plan_push(net, req, "flat", 1 << 20).schedule.relay == Relay::store_and_forward);
    CHECK_THROWS_AS((void)plan_push(net, req, "pipeline", 1000), InputError);
    CHECK_THROWS_AS((void)plan_push(net, req, "pipeline", 16 << 20), InputError);
    const PlanRequest huge = make_request(net, 0, {}, 100.0 * (1ull << 30), ExecModel::nonblocking);
    CHECK_THROWS_AS((void)plan_push(net, huge, "pipeline", 64 << 10), InputError);
    // auto's report says what it weighed; its bound is the one for the relay mode it chose.
    const JobSpec a = plan_push(net, req, "auto");
    CHECK(a.candidates.size() > 10);
    CHECK(a.throughput_bound > 0);
    CHECK(a.lower_bound == doctest::Approx(broadcast_lower_bound(net, 0, req.dests, req.size, a.schedule.relay)));
}

namespace {


}  // namespace

TEST_CASE("netlab random --seed 1, all-FIFO: where host NICs are FIFO the source sends only inside its subnet") {
    // All-FIFO netlab: a1 sent to seven hosts of its subnet and across the 20 Mbit/s uplink
    // at once; the uplink then carried 10.6 Mbit/s (25.3 s for 32 MiB, bound 14.0 s).
    auto a = hosts('a', 9), b = hosts('b', 11);
    for (auto& h : a) h.out_mbit = h.in_mbit = 150;
    for (auto& h : b) h.out_mbit = h.in_mbit = 50;
    a[1].out_mbit = 25;
    b[4].out_mbit = b[9].out_mbit = 14;
    const Network fair = netlab({{20, a}, {20, b}}), fifo = with_queues(fair, Queues::fifo);
    const PlanRequest req = broadcast(fair, 32 * mib);
    const double bound = capacity_lower_bound(fair, 0, req.dests, req.size);
    const auto sub = fair.subnet_of();
    const auto sends_across = [&](const Schedule& s) {
        const auto e = edges_of(s);
        return std::any_of(e.begin(), e.end(), [&](const TreeEdge& x) { return x.first == 0 && sub[x.second] != 0; });
    };
    // Planned for FIFO NICs: the source stays inside its subnet, and the tree is predicted
    // near the bound either way.
    const Schedule apart = plan_pipeline(fifo, req);
    CHECK_FALSE(sends_across(apart));
    CHECK(simulate_flows(fifo, apart).completion <= 1.05 * bound);
    CHECK(simulate_flows(fair, apart).completion <= 1.05 * bound);
    // Planned for fair NICs, the tree the flow model liked best sent across from the source,
    // which FIFO NICs punish (predicted 1.2x the bound and more on them); of the near-ties
    // the tree with the most slack is kept now, and it holds on FIFO NICs too.
    const Schedule fair_plan = plan_pipeline(fair, req);
    CHECK(simulate_flows(fifo, fair_plan).completion <= 1.05 * bound);
}

namespace {

/// A random LAN of 2-4 subnets of 2 to `most` hosts, each subnet's NICs at 50 to `fastest`
/// Mbit/s: `shape(host, rate)` sets each host's rates, `uplink(rate)` the subnet's uplink.
template <class Shape, class Uplink>
std::vector<test::LabSubnet> random_lab(std::mt19937_64& rng, int most, int fastest, Shape shape, Uplink uplink) {
    std::uniform_int_distribution<int> subnets(2, 4), size(2, most), nic(50, fastest);
    std::vector<test::LabSubnet> lab;
    for (int k = 0, s = subnets(rng); k < s; ++k) {
        const double rate = nic(rng);
        auto h = hosts(static_cast<char>('a' + k), static_cast<std::size_t>(size(rng)));
        for (auto& x : h) shape(x, rate);
        lab.push_back({uplink(rate), h});
    }
    return lab;
}

}  // namespace

TEST_CASE("pipeline, FIFO host NICs: on random LANs with slow senders, trees with senders apart keep it near the bound") {
    // Without senders_apart()'s trees: median 1.12x, 90th percentile 1.39x (the flow model's
    // FIFO rule); a subnet of slow senders alone may keep any tree from the bound.
    std::mt19937_64 rng(23);
    std::uniform_int_distribution<int> up(20, 150);
    std::vector<double> ratio;
    for (int i = 0; i < 60; ++i) {
        const auto lab = random_lab(rng, 10, 200, [&](Host& x, double rate) {
            x.in_mbit = rate;
            x.out_mbit = rng() % 6 == 0 ? rate / 8 : rate;  // a slow sender, as netlab random draws them
        }, [&](double) { return static_cast<double>(up(rng)); });
        const Network net = with_queues(netlab(lab), Queues::fifo);
        const PlanRequest req = make_request(net, static_cast<NodeId>(rng() % net.size()), {}, 32 * mib, ExecModel::nonblocking);
        const double t = simulate_flows(net, plan_pipeline(net, req)).completion;
        ratio.push_back(t / capacity_lower_bound(net, req.root, req.dests, req.size));
    }
    std::sort(ratio.begin(), ratio.end());
    MESSAGE("x bound: median " << ratio[ratio.size() / 2] << ", 90th " << ratio[ratio.size() * 9 / 10] << ", worst " << ratio.back());
    CHECK(ratio[ratio.size() / 2] <= 1.05);
    CHECK(ratio[ratio.size() * 9 / 10] <= 1.35);
}

TEST_CASE("pipeline: where a slow host holds every tree to its rate, the tree kept has slack for the others") {
    // Trees grown tight to a slow host's rate tie with trees grown for a multiple of it; the
    // tight ones run every flow at the edge of its share of a NIC, and on netlab's seed 14 of
    // issue 23 (one switch, a 25 Mbit/s host among 110s) took 1.12-1.21x the bound. The one
    // kept among near-ties lands the other copies early on average.
    std::mt19937_64 rng(14);
    std::uniform_int_distribution<int> count(8, 20), nic(50, 300), slower(3, 6);
    for (int i = 0; i < 40; ++i) {
        const double rate = nic(rng);
        auto h = hosts('a', static_cast<std::size_t>(count(rng)));
        for (auto& x : h) x.in_mbit = x.out_mbit = rate;
        const std::size_t slow = 1 + rng() % (h.size() - 1);
        h[slow].in_mbit = h[slow].out_mbit = rate / slower(rng);
        const Network net = netlab({{rate * 2, h}});
        const PlanRequest req = broadcast(net, 32 * mib);
        const Timeline tl = simulate_flows(net, plan_pipeline(net, req));
        double sum = 0;
        std::size_t others = 0;
        for (const Transfer& t : tl.transfers) {
            if (t.to == slow) continue;
            sum += t.complete;
            ++others;
        }
        CAPTURE(i);
        CHECK(tl.completion <= capacity_lower_bound(net, req.root, req.dests, req.size) * 1.02);
        CHECK(sum / static_cast<double>(others) <= 0.75 * tl.completion);
    }
}

TEST_CASE("netlab random --seed 4: pipeline enters b once, and reaches the bound") {
    // Realistic queues, the topology's own map: pipeline sent a3 -> b1 and a3 -> b2 across b's
    // 55 Mbit/s FIFO uplink, b1 a 25 Mbit/s host; predicted 13.6 s (1.21x the bound).
    auto a = hosts('a', 6), b = hosts('b', 5);
    for (auto& h : a) h.out_mbit = h.in_mbit = 290;
    a[5].out_mbit = a[5].in_mbit = 105;
    for (auto& h : b) h.out_mbit = h.in_mbit = 50;
    b[0].out_mbit = b[0].in_mbit = 25;
    b[3].out_mbit = 12;
    const Network net = netlab({{140, a}, {55, b}});
    const PlanRequest req = broadcast(net, 32 * mib);
    const Schedule s = plan_pipeline(net, req);
    const auto sub = net.subnet_of();
    const auto e = edges_of(s);
    CHECK(std::count_if(e.begin(), e.end(), [&](const TreeEdge& x) { return sub[x.first] != sub[x.second]; }) == 1);
    CHECK(simulate_flows(net, s).completion <= 1.02 * capacity_lower_bound(net, req.root, req.dests, req.size));
}

TEST_CASE("pipeline, FIFO uplinks: on random LANs with slow hosts and uplinks just above their NICs, near the bound") {
    // 90th percentile 1.15x, worst 1.69x.
    std::mt19937_64 rng(4);
    std::uniform_real_distribution<double> above(1.0, 1.6);  // the uplink over the subnet's NICs
    std::vector<double> ratio;
    for (int i = 0; i < 60; ++i) {
        const auto lab = random_lab(rng, 8, 300, [&](Host& x, double rate) {
            x.in_mbit = x.out_mbit = rate;
            if (rng() % 5 == 0) x.in_mbit = x.out_mbit = rate / 2;  // a slow NIC
            if (rng() % 6 == 0) x.out_mbit = rate / 4;              // a slow sender
        }, [&](double rate) { return rate * above(rng); });
        const Network net = netlab(lab);
        const PlanRequest req = make_request(net, 0, {}, 32 * mib, ExecModel::nonblocking);
        ratio.push_back(simulate_flows(net, plan_pipeline(net, req)).completion /
                        capacity_lower_bound(net, req.root, req.dests, req.size));
    }
    std::sort(ratio.begin(), ratio.end());
    MESSAGE("x bound: median " << ratio[ratio.size() / 2] << ", 90th " << ratio[ratio.size() * 9 / 10] << ", worst " << ratio.back());
    CHECK(ratio[ratio.size() / 2] <= 1.02);
    CHECK(ratio[ratio.size() * 9 / 10] <= 1.2);
}

TEST_CASE("netlab hosts-96: subnets get trees, not chains, where NICs carry two flows at the bound") {
    // 8 subnets of 12, 20 Mbit/s NICs, uplinks 10-15, b5 a 10 Mbit/s NIC, c7 a 5 Mbit/s
    // sender: the bound is 10 Mbit/s. Grown with the headroom only, every subnet was a chain
    // of 11 hops, 19 on the deepest path, each a 64 KiB piece late: predicted 7.71 s, 1.10x.
    std::vector<test::LabSubnet> lab;
    const double uplinks[] = {15, 12, 10, 12, 15, 12, 10, 15};
    for (int k = 0; k < 8; ++k) lab.push_back({uplinks[k], hosts(static_cast<char>('a' + k), 12)});
    for (auto& s : lab) {
        for (auto& h : s.hosts) h.in_mbit = h.out_mbit = 20;
    }
    lab[1].hosts[4].in_mbit = lab[1].hosts[4].out_mbit = 10;
    lab[2].hosts[6].out_mbit = 5;
    const Network net = netlab(lab);
    PlanRequest req = broadcast(net, 8 * mib);
    req.options.piece = 64 << 10;
    const Schedule s = with_cut_through(plan_pipeline(net, req), req.options.piece);
    const double bound = capacity_lower_bound(net, req.root, req.dests, req.size);
    std::vector<NodeId> parent(net.size(), req.root);
    for (const auto& [u, v] : edges_of(s)) parent[v] = u;
    std::size_t deepest = 0;
    for (NodeId v = 0; v < net.size(); ++v) {
        std::size_t d = 0;
        for (NodeId x = v; x != req.root; x = parent[x]) ++d;
        deepest = std::max(deepest, d);
    }
    CHECK(deepest <= 12);
    CHECK(simulate_flows(net, s).completion <= 1.08 * bound);
}

TEST_CASE("pipeline: on random LANs of large subnets whose NICs carry just two flows at the bound, trees near it") {
    // The hosts-96 shape at random: NICs twice the slowest uplink, the other uplinks up to
    // 1.5 times it. Grown with the headroom only, every subnet a chain: median 1.07x, 90th
    // percentile 1.11x (1.05x and 1.07x now).
    std::mt19937_64 rng(96);
    std::uniform_int_distribution<int> subnets(3, 8), size(6, 16), slowest(10, 100);
    std::uniform_real_distribution<double> up(1.0, 1.5);
    std::vector<double> ratio;
    for (int i = 0; i < 30; ++i) {
        const double bound_mbit = slowest(rng);
        std::vector<test::LabSubnet> lab;
        for (int k = 0, n = subnets(rng); k < n; ++k) {
            auto h = hosts(static_cast<char>('a' + k), static_cast<std::size_t>(size(rng)));
            for (auto& x : h) x.in_mbit = x.out_mbit = 2 * bound_mbit;
            lab.push_back({k == 0 ? bound_mbit : bound_mbit * up(rng), h});
        }
        const Network net = netlab(lab);
        PlanRequest req = broadcast(net, 8 * mib);
        req.options.piece = 64 << 10;
        const Schedule s = with_cut_through(plan_pipeline(net, req), req.options.piece);
        ratio.push_back(simulate_flows(net, s).completion / capacity_lower_bound(net, req.root, req.dests, req.size));
    }
    std::sort(ratio.begin(), ratio.end());
    MESSAGE("x bound: median " << ratio[ratio.size() / 2] << ", 90th " << ratio[ratio.size() * 9 / 10] << ", worst " << ratio.back());
    CHECK(ratio[ratio.size() / 2] <= 1.06);
    CHECK(ratio[ratio.size() * 9 / 10] <= 1.08);
}
