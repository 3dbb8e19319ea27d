// The steady-state throughput bound (Beaumont et al.'s LP on shared capacities), the
// throughput of one pipelined tree, and the lower bound that holds for cut-through schedules.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include "hetcast/error.hpp"
#include "hetcast/model/generators.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/simulate.hpp"
#include "hetcast/sim/throughput.hpp"
#include "netlab_networks.hpp"
#include "support.hpp"

using namespace hetcast;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double mbit = 1e6 / 8;
constexpr NodeId no_parent = std::numeric_limits<NodeId>::max();

bool close(double a, double b, double rel = 1e-6) {
    return std::abs(a - b) <= rel * std::max({1.0, std::abs(a), std::abs(b)});
}

std::vector<NodeId> all_but(std::size_t n, NodeId root) {
    std::vector<NodeId> d;
    for (NodeId i = 0; i < n; ++i) {
        if (i != root) d.push_back(i);
    }
    return d;
}

/// About two thirds of the nodes but `root`, drawn from `rng` (possibly none).
std::vector<NodeId> some_dests(std::mt19937_64& rng, std::size_t n, NodeId root) {
    std::vector<NodeId> d;
    for (NodeId k : all_but(n, root)) {
        if (rng() % 3 != 0) d.push_back(k);
    }
    return d;
}

/// n hosts in `groups` subnets (round robin), one pair bandwidth, NICs and uplinks (bytes/s).
Network capacity_net(std::size_t n, std::size_t groups, double pair_bw, double nic, double uplink) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) names.push_back("h" + std::to_string(i));
    Matrix lat(n, std::vector<double>(n, 0)), bw(n, std::vector<double>(n, pair_bw));
    Network net = Network::parametric(names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
    Subnets sub(groups);
    for (NodeId i = 0; i < n; ++i) sub[i % groups].push_back(i);
    net.set_subnets(sub);
    net.set_capacities({std::vector<double>(n, nic), std::vector<double>(n, nic), std::vector<double>(n, inf),
                        std::isfinite(uplink) ? std::vector<double>(groups, uplink) : std::vector<double>{}});
    return net;
}

/// Random pair bandwidths and latencies, random capacities (some infinite), random subnets.
Network random_capacity_net(std::mt19937_64& rng, std::size_t n) {
    std::uniform_real_distribution<double> rate(1e6, 1e8), lat(0, 1e-3);
    std::vector<std::string> names;
    Matrix l(n, std::vector<double>(n)), b(n, std::vector<double>(n));
    for (std::size_t i = 0; i < n; ++i) {
        names.push_back("n" + std::to_string(i));
        for (std::size_t j = 0; j < n; ++j) {
            l[i][j] = lat(rng);
            b[i][j] = rate(rng);
        }
    }
    Network net = Network::parametric(names, l, b, std::vector<Overhead>(n), std::vector<Overhead>(n));
    test::add_random_capacities(rng, net, rate);
    return net;
}

/// A one-message schedule along `parent` (no_parent for the root and for nodes left out).
Schedule tree_schedule(const std::vector<NodeId>& parent, NodeId root, double m = 1e6) {
    const std::size_t n = parent.size();
    std::vector<NodeId> dests;
    for (NodeId v = 0; v < n; ++v) {
        if (parent[v] != no_parent) dests.push_back(v);
    }
    Schedule s("tree", n, {Message{root, m, dests}});
    // Parents before children, so the task lists are executable as well.
    std::vector<NodeId> order{root};
    for (std::size_t q = 0; q < order.size(); ++q) {
        for (NodeId v = 0; v < n; ++v) {
            if (parent[v] == order[q]) {
                s.add_transfer(0, order[q], v);
                order.push_back(v);
            }
        }
    }
    return s;
}

/// A uniformly random parent among the nodes placed before, in a random order.
std::vector<NodeId> random_tree(std::mt19937_64& rng, std::size_t n, NodeId root) {
    std::vector<NodeId> order = all_but(n, root);
    std::shuffle(order.begin(), order.end(), rng);
    order.insert(order.begin(), root);
    std::vector<NodeId> parent(n, no_parent);
    for (std::size_t q = 1; q < n; ++q) parent[order[q]] = order[rng() % q];
    return parent;
}

/// The closed form: the least of the edges' pair bandwidths and capacity / edges crossing.
double tree_closed_form(const Network& net, const std::vector<NodeId>& parent) {
    const auto caps = resource_capacities(net);
    std::vector<double> users(caps.size(), 0);
    double t = inf;
    for (NodeId v = 0; v < parent.size(); ++v) {
        if (parent[v] == no_parent) continue;
        const FlowPath p = flow_path(net, parent[v], v);
        t = std::min(t, p.cap);
        for (std::size_t r : p.resources) users[r] += 1;
    }
    for (std::size_t r = 0; r < caps.size(); ++r) {
        if (users[r] > 0) t = std::min(t, caps[r] / users[r]);
    }
    return t;
}

/// Every spanning tree from `root` by brute force over the (n − 1)^(n − 1) parent maps.
double best_tree_brute_force(const Network& net, NodeId root) {
    const std::size_t n = net.size();
    std::vector<NodeId> pick(n, 0);  // v's parent is the pick-th node other than v
    double best = 0;
    for (;;) {
        std::vector<NodeId> parent(n, no_parent);
        for (NodeId v = 0; v < n; ++v) {
            if (v != root) parent[v] = pick[v] < v ? pick[v] : pick[v] + 1;
        }
        bool acyclic = true;
        for (NodeId v = 0; v < n && acyclic; ++v) {
            NodeId u = v;
            for (std::size_t steps = 0; u != root && acyclic; ++steps) {
                u = parent[u];
                acyclic = steps < n;
            }
        }
        if (acyclic) best = std::max(best, tree_closed_form(net, parent));
        NodeId v = 0;
        for (; v < n; ++v) {
            if (v == root) continue;
            if (++pick[v] < n - 1) break;
            pick[v] = 0;
        }
        if (v == n) return best;
    }
}

bool in_subtree(const std::vector<NodeId>& parent, NodeId v, NodeId top) {
    for (NodeId u = v; u != no_parent; u = parent[u]) {
        if (u == top) return true;
    }
    return false;
}

/// The best spanning tree a heuristic finds: greedy growth (attach the node that keeps the
/// throughput highest), then random re-parenting moves that never lose throughput, restarted.
double best_tree_heuristic(const Network& net, NodeId root, std::uint64_t seed) {
    const std::size_t n = net.size();
    std::mt19937_64 rng(seed);
    double best = 0;
    for (int restart = 0; restart < 20; ++restart) {
        std::vector<NodeId> parent(n, no_parent);
        std::vector<char> in(n, 0);
        in[root] = 1;
        for (std::size_t added = 1; added < n; ++added) {
            double top = -1;
            std::vector<std::pair<NodeId, NodeId>> ties;
            for (NodeId u = 0; u < n; ++u) {
                for (NodeId v = 0; v < n; ++v) {
                    if (!in[u] || in[v]) continue;
                    parent[v] = u;
                    const double t = tree_closed_form(net, parent);
                    parent[v] = no_parent;
                    if (t > top * (1 + 1e-12)) {
                        top = t;
                        ties.clear();
                    }
                    if (t >= top * (1 - 1e-12)) ties.emplace_back(u, v);
                }
            }
            const auto [u, v] = ties[restart == 0 ? 0 : rng() % ties.size()];
            parent[v] = u;
            in[v] = 1;
        }
        double now = tree_closed_form(net, parent);
        for (int step = 0; step < 3000; ++step) {
            const NodeId v = static_cast<NodeId>(rng() % n), u = static_cast<NodeId>(rng() % n);
            if (v == root || u == v || in_subtree(parent, u, v)) continue;
            const NodeId old = parent[v];
            parent[v] = u;
            const double t = tree_closed_form(net, parent);
            if (t >= now) {
                now = t;
            } else {
                parent[v] = old;
            }
        }
        best = std::max(best, now);
    }
    return best;
}

using test::lab_network;
using test::LabHost;
using test::LabSubnet;
std::vector<LabHost> hosts(const std::string& prefix, std::size_t count) { return test::lab_hosts(prefix, count); }

}  // namespace

TEST_CASE("throughput: the LP optimum dominates every tree, and the cuts dominate the LP") {
    std::mt19937_64 rng(5);
    int strictly = 0;
    for (int trial = 0; trial < 150; ++trial) {
        const std::size_t n = 2 + rng() % 7;
        const Network net = random_capacity_net(rng, n);
        const NodeId root = static_cast<NodeId>(rng() % n);
        const auto dests = all_but(n, root);
        const double t_star = steady_state_throughput(net, root, dests);
        REQUIRE(std::isfinite(t_star));
        CHECK(t_star > 0);
        const auto& c = *net.capacities();
        CHECK(t_star <= c.egress[root] * (1 + 1e-9));
        for (NodeId k : dests) CHECK(t_star <= std::min(c.ingress[k], c.disk[k]) * (1 + 1e-9));
        CHECK(t_star <= throughput_cut_bound(net, root, dests) * (1 + 1e-9));
        for (int t = 0; t < 5; ++t) {
            const auto parent = random_tree(rng, n, root);
            const double tree = tree_throughput(net, tree_schedule(parent, root));
            CHECK(close(tree, tree_closed_form(net, parent), 1e-9));
            CHECK(tree <= t_star * (1 + 1e-7));
            strictly += tree < t_star * (1 - 1e-6);
        }
        // A multicast: relays may only add throughput.
        std::vector<NodeId> some;
        for (NodeId k : dests) {
            if (rng() % 2 == 0) some.push_back(k);
        }
        if (some.empty()) continue;
        const double with = steady_state_throughput(net, root, some);
        const double without = steady_state_throughput(net, root, some, {.relays = false});
        CHECK(without <= with * (1 + 1e-7));
        CHECK(with >= t_star * (1 - 1e-7));
    }
    CHECK(strictly > 0);
}

TEST_CASE("throughput: a star and two chains on one subnet, by hand") {
    // 5 hosts, 200 MB/s NICs, 100 MB/s per pair (one stream), no uplinks.
    const Network net = capacity_net(5, 1, 100e6, 200e6, inf);
    std::vector<NodeId> star(5, 0), chain{no_parent, 0, 1, 2, 3};
    star[0] = no_parent;
    // Four streams share the root's NIC out: 200 / 4 = 50 each.
    CHECK(tree_throughput(net, tree_schedule(star, 0)) == doctest::Approx(50e6));
    CHECK(tree_throughput(net, tree_schedule(chain, 0)) == doctest::Approx(100e6));
    // Two chains in opposite orders, 100 MB/s each, fill every NIC: T* = 200 MB/s.
    CHECK(steady_state_throughput(net, 0, all_but(5, 0)) == doctest::Approx(200e6));
    CHECK(best_tree_brute_force(net, 0) == doctest::Approx(100e6));
    // A faster NIC: the star runs at the pair rate.
    const Network wide = capacity_net(5, 1, 100e6, 500e6, inf);
    CHECK(tree_throughput(wide, tree_schedule(star, 0)) == doctest::Approx(100e6));
    CHECK(steady_state_throughput(wide, 0, all_but(5, 0), {.relays = false}) == doctest::Approx(400e6));
}

TEST_CASE("throughput: two subnets behind 40 Mbit/s uplinks are uplink-bound, and one tree reaches it") {
    // 4 + 4 hosts, 200 Mbit/s NICs (25 MB/s), 40 Mbit/s uplinks (5 MB/s); a pair across the
    // router gets 5 MB/s, inside a subnet 25 MB/s.
    auto a = hosts("a", 4), b = hosts("b", 4);
    for (auto* h : {&a, &b}) {
        for (auto& host : *h) host.out_mbit = host.in_mbit = 200 / 0.956;
    }
    const Network net = lab_network({{40 / 0.956, a}, {40 / 0.956, b}});
    CHECK(net.bandwidth()[0][4] == doctest::Approx(5e6));
    CHECK(net.bandwidth()[0][1] == doctest::Approx(25e6));
    const double t_star = steady_state_throughput(net, 0, all_but(8, 0));
    // Every byte crosses a's uplink out and b's in at least once: 5 MB/s, and that is enough.
    CHECK(t_star == doctest::Approx(5e6));
    // a1 → a2 → a3 → a4 and a1 → b1 → b2, b3, b4: each uplink carries one stream.
    const std::vector<NodeId> tree{no_parent, 0, 1, 2, 0, 4, 4, 4};
    CHECK(tree_throughput(net, tree_schedule(tree, 0)) == doctest::Approx(5e6));
    // The flat tree: four streams share a's uplink.
    std::vector<NodeId> flat(8, 0);
    flat[0] = no_parent;
    CHECK(tree_throughput(net, tree_schedule(flat, 0)) == doctest::Approx(1.25e6));
}

TEST_CASE("throughput: two trees beat every single tree when each relay sends slower than the root") {
    // Beaumont et al.'s point on our model: root r sends at 20 MB/s, a and b take 20 MB/s in
    // but send only 10. A star splits r's NIC (10 each); a chain runs at the relay's 10.
    // Two trees, r → a → b and r → b → a at 10 MB/s each, fill everything: T* = 20.
    std::vector<std::string> names{"r", "a", "b"};
    Matrix lat(3, std::vector<double>(3, 0)), bw(3, std::vector<double>(3, 1e9));
    Network net = Network::parametric(names, lat, bw, std::vector<Overhead>(3), std::vector<Overhead>(3));
    net.set_capacities({{20e6, 10e6, 10e6}, {20e6, 20e6, 20e6}, {inf, inf, inf}, {}});
    const double t_star = steady_state_throughput(net, 0, {1, 2});
    const double tree = best_tree_brute_force(net, 0);
    CHECK(t_star == doctest::Approx(20e6));
    CHECK(tree == doctest::Approx(10e6));
    CHECK(t_star > 1.5 * tree);
}

TEST_CASE("throughput: edge cases and errors") {
    const Network net = capacity_net(4, 2, 10e6, 20e6, 5e6);
    CHECK(steady_state_throughput(net, 0, {}) == inf);
    CHECK(steady_state_throughput(net, 0, {0}) == inf);
    CHECK_THROWS_AS((void)steady_state_throughput(net, 0, {7}), InputError);
    // Too big for the LP: the cut bound, never below the optimum.
    const double cut = steady_state_throughput(net, 0, {1, 2, 3}, {.max_variables = 10});
    CHECK(cut == doctest::Approx(throughput_cut_bound(net, 0, {1, 2, 3})));
    CHECK(cut >= steady_state_throughput(net, 0, {1, 2, 3}) * (1 - 1e-9));
    // Without capacities only pair bandwidths limit: 3 destinations, 10 MB/s pairs, relays.
    const Network open = Network::parametric({"x", "y", "z", "w"}, Matrix(4, std::vector<double>(4, 0)),
                                             Matrix(4, std::vector<double>(4, 10e6)), std::vector<Overhead>(4),
                                             std::vector<Overhead>(4));
    CHECK(steady_state_throughput(open, 0, {1, 2, 3}) == doctest::Approx(30e6));
    CHECK(steady_state_throughput(Network::clusters({2, 2}, 1, 10), 0, {1, 2, 3}) == inf);

    Schedule two("two", 4, {Message{0, 1e6, {1}}, Message{0, 1e6, {2}}});
    two.add_transfer(0, 0, 1);
    two.add_transfer(1, 0, 2);
    CHECK_THROWS_AS((void)tree_throughput(net, two), InputError);
    Schedule twice("twice", 4, {Message{0, 1e6, {1, 2}}});
    twice.add_transfer(0, 0, 1);
    twice.add_transfer(0, 2, 1);
    CHECK_THROWS_AS((void)tree_throughput(net, twice), InputError);
    Schedule missing("missing", 4, {Message{0, 1e6, {1, 2}}});
    missing.add_transfer(0, 0, 1);
    CHECK_THROWS_AS((void)tree_throughput(net, missing), InputError);
    Schedule cycle("cycle", 4, {Message{0, 1e6, {1}}});
    cycle.add_transfer(0, 0, 1);
    cycle.add_transfer(0, 2, 3);
    cycle.add_transfer(0, 3, 2);
    CHECK_THROWS_AS((void)tree_throughput(net, cycle), InputError);
}

TEST_CASE("throughput: Bhat's eq. 3 is beaten by a cut-through chain, the pipelined bound is not") {
    // r → a → c, 10 MB/s and 1 ms per hop; r → c directly is 100 kB/s, so the chain is Bhat's
    // shortest path: 2 (1 ms + m / 10 MB/s).
    const double m = 100e6, piece = 1e6, b = 10e6, l = 1e-3;
    Matrix lat(3, std::vector<double>(3, l)), bw(3, std::vector<double>(3, b));
    bw[0][2] = 100e3;
    const Network net =
        Network::parametric({"r", "a", "c"}, lat, bw, std::vector<Overhead>(3), std::vector<Overhead>(3));
    const double bhat = bhat_lower_bound(net, 0, {1, 2}, m);
    CHECK(bhat == doctest::Approx(2 * (l + m / b)));
    // Cut through: a forwards each piece as it is in, so c's last byte is in one piece's
    // time after a's, plus a's latency: l + m/b + l + piece/b ≈ half of Bhat's bound.
    const double chain = 2 * l + (m + piece) / b;
    CHECK(bhat > 1.9 * chain);
    const double pipelined = pipelined_lower_bound(net, 0, {1, 2}, m);
    CHECK(pipelined <= chain);
    // The least latency to c is the direct pair (one hop), the widest path the chain.
    CHECK(pipelined == doctest::Approx(l + m / b));
    CHECK(broadcast_lower_bound(net, 0, {1, 2}, m, Relay::cut_through) == pipelined);
    CHECK(broadcast_lower_bound(net, 0, {1, 2}, m) == bhat);
    // The simulator agrees: the cut-through chain finishes under Bhat's bound.
    Schedule s("chain", 3, {Message{0, m, {1, 2}}});
    s.add_transfer(0, 0, 1);
    s.add_transfer(0, 1, 2);
    s.relay = Relay::cut_through;
    s.piece = static_cast<std::uint64_t>(piece);
    const double simulated = simulate(net, s, ExecModel::nonblocking).completion;
    MESSAGE("3-node chain, m = 100 MB: Bhat " << bhat << " s, cut-through by hand " << chain << " s, simulated "
                                              << simulated << " s, pipelined bound " << pipelined << " s");
    CHECK(simulated < bhat);
    CHECK(simulated >= pipelined * (1 - 1e-9));
}

TEST_CASE("throughput: the pipelined bound holds for random plans, store-and-forward and cut-through") {
    std::mt19937_64 rng(29);
    const auto& algos = algorithms();
    int planned = 0;
    for (int trial = 0; trial < 120; ++trial) {
        const std::size_t n = 2 + rng() % 8;
        const Network net = random_capacity_net(rng, n);
        const NodeId root = static_cast<NodeId>(rng() % n);
        const double m = 1e5 + static_cast<double>(rng() % 50'000'000);
        const PlanRequest req = make_request(net, root, all_but(n, root), m, ExecModel::nonblocking);
        const Algorithm& a = algos[rng() % algos.size()];
        if (a.name == "auto" || a.name == "optimal" || (a.applies && !a.applies(net, req))) continue;
        Schedule s = a.plan(net, req);
        const double lb = pipelined_lower_bound(net, root, req.dests, m);
        s.relay = Relay::store_and_forward;
        CHECK(lb <= simulate(net, s, ExecModel::nonblocking).completion * (1 + 1e-9));
        s.relay = Relay::cut_through;
        s.piece = 1 + rng() % (4 << 20);
        CHECK_MESSAGE(lb <= simulate(net, s, ExecModel::nonblocking).completion * (1 + 1e-9), a.name);
        ++planned;
    }
    CHECK(planned >= 40);
}

TEST_CASE("throughput: cut generation and the LP as written agree") {
    std::mt19937_64 rng(17);
    for (int trial = 0; trial < 60; ++trial) {
        const std::size_t n = 2 + rng() % 7;
        const Network net = random_capacity_net(rng, n);
        const NodeId root = static_cast<NodeId>(rng() % n);
        const std::vector<NodeId> dests = some_dests(rng, n, root);
        if (dests.empty()) continue;
        const bool relays = rng() % 2 == 0;
        const double cuts = steady_state_throughput(net, root, dests, {.relays = relays});
        const double flows = steady_state_throughput(net, root, dests, {.relays = relays, .explicit_flows = true});
        CHECK(cuts == doctest::Approx(flows).epsilon(1e-7));
    }
}

TEST_CASE("throughput: cut generation stopped after a few rounds still bounds T* from above, below the cuts") {
    std::mt19937_64 rng(29);
    for (int trial = 0; trial < 40; ++trial) {
        const std::size_t n = 6 + rng() % 20;
        const Network net = random_capacity_net(rng, n);
        const NodeId root = static_cast<NodeId>(rng() % n);
        const std::vector<NodeId> dests = some_dests(rng, n, root);
        if (dests.empty()) continue;
        const double optimum = steady_state_throughput(net, root, dests, {.max_cut_rounds = 100'000});
        const double cut = throughput_cut_bound(net, root, dests);
        for (std::size_t rounds : {0, 1, 2}) {
            const double t = steady_state_throughput(net, root, dests, {.max_cut_rounds = rounds});
            CHECK(t >= optimum * (1 - 1e-9));
            CHECK(t <= cut * (1 + 1e-9));
        }
    }
}

TEST_CASE("throughput: LP size and solve time for 9, 16, 50 and 100 hosts") {
    std::mt19937_64 rng(3);
    for (const std::size_t n : {9, 16, 50, 100}) {
        const std::size_t pairs = n * (n - 1), full = 1 + pairs + (n - 1) * (pairs - 2 * (n - 1) + 1);
        const auto timed = [&](const Network& net, const ThroughputOptions& opt = {}) {
            const auto start = std::chrono::steady_clock::now();
            const double t = steady_state_throughput(net, 0, all_but(n, 0), opt);
            return std::pair{t, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
        };
        const Network uniform = capacity_net(n, 3, 25e6, 25e6, 5e6);
        const auto [t, seconds] = timed(uniform);
        CHECK(t == doctest::Approx(5e6));
        const Network random = random_capacity_net(rng, n);
        const auto [tr, random_seconds] = timed(random);
        CHECK(tr <= throughput_cut_bound(random, 0, all_but(n, 0)) * (1 + 1e-9));
        // Pair bandwidths alone (Bhat's Figure 4 ranges): the cuts are the max-flows' own.
        const Network pairs_only = random_bhat(n, 11);
        const auto [tb, bhat_seconds] = timed(pairs_only);
        CHECK(tb <= throughput_cut_bound(pairs_only, 0, all_but(n, 0)) * (1 + 1e-9));
        std::string written = "not built";
        if (n <= 16) {
            const auto [tf, flow_seconds] = timed(random, {.explicit_flows = true});
            CHECK(tf == doctest::Approx(tr).epsilon(1e-7));
            written = std::to_string(flow_seconds) + " s";
        }
        MESSAGE(n << " hosts: " << 1 + pairs << " variables by cuts, solved in " << seconds << " s (3 subnets, T* = "
                  << t << " B/s), " << random_seconds << " s (random capacities, T* = " << tr
                  << " B/s), " << bhat_seconds << " s (pair bandwidths only, T* = " << tb
                  << " B/s); the LP as written: " << full << " variables, " << written);
    }
}

TEST_CASE("throughput: the shipped netlab topologies, T* against the best single tree") {
    struct Lab {
        std::string name;
        std::vector<LabSubnet> subnets;
    };
    auto slow_a = hosts("a", 4);
    slow_a[1].out_mbit = 20;
    auto uneven_b = hosts("b", 3);
    uneven_b[1] = {"b2", 20, 20};
    const std::vector<Lab> labs{
        {"two-subnets", {{40, hosts("a", 4)}, {40, hosts("b", 4)}}},
        {"three-subnets", {{50, hosts("a", 4)}, {40, hosts("b", 3)}, {30, hosts("c", 2)}}},
        {"uneven", {{30, hosts("a", 3)}, {50, uneven_b}, {80, hosts("c", 3)}}},
        {"slow-sender", {{100, slow_a}, {50, hosts("b", 3)}, {50, hosts("c", 3)}}},
    };
    for (const auto& lab : labs) {
        const Network net = lab_network(lab.subnets);
        const double t_star = steady_state_throughput(net, 0, all_but(net.size(), 0));
        const double tree = best_tree_heuristic(net, 0, 7);
        CHECK(tree <= t_star * (1 + 1e-7));
        MESSAGE(lab.name << ": T* = " << t_star / mbit << " Mbit/s, best tree found " << tree / mbit
                         << " Mbit/s, T*/tree = " << t_star / tree);
        // Several trees would gain less than 10% on every shipped topology.
        CHECK(t_star < 1.1 * tree);
    }
}
