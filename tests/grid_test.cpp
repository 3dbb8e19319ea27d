// Two-level planners: Barchet-Steffenel & Mounié's grid-aware heuristics (paper 004 §4–5)
// and ECO's subnet scheme (paper 003 §4).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <ostream>
#include <set>

#include "hetcast/error.hpp"
#include "hetcast/sched/grid.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/simulate.hpp"
#include "support.hpp"

using namespace hetcast;

TEST_SUITE_BEGIN("grid");

namespace {

constexpr double eps = 1e-9;

const std::vector<std::string> two_level_names = {"flat-tree",    "two-level-ecef", "two-level-ecef-la",
                                                  "ecef-lat-min", "ecef-lat-max",   "bottom-up",
                                                  "eco"};

std::vector<std::size_t> subnet_index(const Network& net) {
    std::vector<std::size_t> of(net.size());
    const Subnets& s = *net.subnets();
    for (std::size_t k = 0; k < s.size(); ++k) {
        for (NodeId n : s[k]) of[n] = k;
    }
    return of;
}

// A grid as a cost matrix: clusters of the given sizes, g + L = `inter[a][b]` between
// any members of clusters a and b, `local[a]` between members of cluster a. With one or
// two members, the ECEF broadcast inside cluster a takes exactly T_a = local[a].
Network grid(const Matrix& inter, const std::vector<double>& local, const std::vector<std::size_t>& sizes) {
    std::vector<std::size_t> cluster;
    Subnets subnets(sizes.size());
    for (std::size_t a = 0; a < sizes.size(); ++a) {
        for (std::size_t k = 0; k < sizes[a]; ++k) {
            subnets[a].push_back(static_cast<NodeId>(cluster.size()));
            cluster.push_back(a);
        }
    }
    const std::size_t n = cluster.size();
    Matrix c(n);
    for (std::size_t i = 0; i < n; ++i) {
        c[i].resize(n, 0.0);
        for (std::size_t j = 0; j < n; ++j) {
            if (i != j) c[i][j] = cluster[i] == cluster[j] ? local[cluster[i]] : inter[cluster[i]][cluster[j]];
        }
    }
    Network net = test::costs(c);
    net.set_subnets(std::move(subnets));
    return net;
}

struct Hop {
    NodeId from;
    NodeId to;
    double complete;
    friend bool operator==(const Hop&, const Hop&) = default;
};

std::ostream& operator<<(std::ostream& os, const Hop& h) {
    return os << h.from << "->" << h.to << "@" << h.complete;
}

// The inter-subnet transfers of a timeline, in start order.
std::vector<Hop> inter_hops(const Network& net, const Timeline& tl) {
    const auto of = subnet_index(net);
    std::vector<Hop> out;
    for (const auto& t : tl.transfers) {
        if (of[t.from] != of[t.to]) out.push_back({t.from, t.to, t.complete});
    }
    return out;
}

// Paper 004 has no worked example; this grid is computed by hand. Four clusters, root in
// cluster 0, g + L between clusters (symmetric) and broadcast times T:
//
//        0  1  2  3
//   0  [ -  1  4  9 ]        T = (2, 2, 0, 5)
//   1  [ 1  -  7  8 ]
//   2  [ 4  7  -  2 ]
//   3  [ 9  8  2  - ]
//
// Cost matrix: a sender is busy for the whole g + L, so RT_i advances by it. A cluster's
// broadcast starts after its coordinator's last inter-cluster send; makespan =
// max_k (RT_k + T_k).
//
// flat-tree: 0→1 @1, 0→2 @5, 0→3 @14. Makespan max(14+2, 1+2, 5+0, 14+5) = 19.
// ecef: 0→1 @1 (keys 1, 4, 9); RT0 = RT1 = 1: 0→2 @5 (0→3 10, 1→2 8, 1→3 9);
//   then 2→3 @7 (0→3 14, 1→3 9). Makespan max(5+2, 1+2, 7+0, 7+5) = 12.
// ecef-la (F_j = min over the others of B of g + L): F = (7, 2, 2) for 1, 2, 3:
//   0→2 @4 (keys 8, 6, 11); F1 = F3 = 8: 0→1 @5 (13; 0→3 21, 2→1 19, 2→3 14);
//   2→3 @6 (F = 0: 0→3 14, 1→3 13, 2→3 6). Makespan max(5+2, 5+2, 6+0, 6+5) = 11.
// ecef-lat-min (F_j = min over the others of B of g + L + T):
//   F1 = min(7+0, 8+5) = 7, F2 = min(7+2, 2+5) = 7, F3 = min(8+2, 2+0) = 2:
//   0→1 @1 (keys 8, 11, 11); F2 = 2+5 = 7, F3 = 2+0 = 2, RT0 = RT1 = 1:
//   1→3 @9 (0→2 12, 0→3 12, 1→2 15, 1→3 11); F = 0: 0→2 @5 (1→2 16, 3→2 11).
//   Makespan max(5+2, 9+2, 5+0, 9+5) = 14.
// ecef-lat-max (F_j = max): F1 = max(7, 13) = 13, F2 = max(9, 7) = 9, F3 = max(10, 2) = 10:
//   0→2 @4 (keys 14, 13, 19); F1 = 8+5 = 13, F3 = 8+2 = 10, RT0 = RT2 = 4:
//   2→3 @6 (0→1 18, 0→3 23, 2→1 24, 2→3 16); 0→1 @5 (2→1 13, 3→1 14).
//   Makespan max(5+2, 5+2, 6+0, 6+5) = 11.
// bottom-up (max over j of min over i of RT_i + g + L, plus T_j):
//   j = 1: 1+2 = 3, j = 2: 4+0 = 4, j = 3: 9+5 = 14 → 0→3 @9;
//   RT0 = RT3 = 9: j = 1: min(10, 17)+2 = 12, j = 2: min(13, 11)+0 = 11 → 0→1 @10;
//   j = 2: min(0: 14, 1: 17, 3: 11) → 3→2 @11. Makespan max(10+2, 10+2, 11+0, 11+5) = 16.
const Matrix hand_inter = {{0, 1, 4, 9}, {1, 0, 7, 8}, {4, 7, 0, 2}, {9, 8, 2, 0}};
const std::vector<double> hand_t = {2, 2, 0, 5};

struct Expected {
    Schedule (*plan)(const Network&, const PlanRequest&);
    std::vector<Hop> hops;  // between clusters, in start order
    double makespan;
};

}  // namespace

TEST_CASE("grid: Steffenel's heuristics on a hand-computed four-cluster grid") {
    const std::vector<Expected> cases = {
        {plan_flat_tree, {{0, 1, 1}, {0, 2, 5}, {0, 3, 14}}, 19},
        {plan_two_level_ecef, {{0, 1, 1}, {0, 2, 5}, {2, 3, 7}}, 12},
        {plan_two_level_ecef_la, {{0, 2, 4}, {0, 1, 5}, {2, 3, 6}}, 11},
        {plan_ecef_lat_min, {{0, 1, 1}, {0, 2, 5}, {1, 3, 9}}, 14},
        {plan_ecef_lat_max, {{0, 2, 4}, {0, 1, 5}, {2, 3, 6}}, 11},
        {plan_bottom_up, {{0, 3, 9}, {0, 1, 10}, {3, 2, 11}}, 16},
    };
    // Clusters of 2, 2, 1, 2 members: coordinators are nodes 0, 2, 4, 5.
    const Network members = grid(hand_inter, hand_t, {2, 2, 1, 2});
    const std::vector<NodeId> coord = {0, 2, 4, 5};
    // The same grid at cluster level, a node per cluster with T given by the network.
    Network clusters = test::costs(hand_inter);
    clusters.set_subnets({{0}, {1}, {2}, {3}});
    clusters.set_local_broadcast(hand_t);
    for (ExecModel model : {ExecModel::blocking, ExecModel::nonblocking}) {
        for (const auto& c : cases) {
            CAPTURE(c.makespan);
            std::vector<Hop> expected;
            for (const Hop& h : c.hops) expected.push_back({coord[h.from], coord[h.to], h.complete});
            const Timeline tl = simulate(members, c.plan(members, test::request(members, 0, {}, model)), model);
            CHECK(inter_hops(members, tl) == expected);
            CHECK(tl.completion == c.makespan);

            // The cluster-level network takes the same decisions; its timeline holds only the
            // inter-cluster transfers (each node stands for its whole cluster).
            const Timeline top = simulate(clusters, c.plan(clusters, test::request(clusters, 0, {}, model)), model);
            CHECK(inter_hops(clusters, top) == c.hops);
        }
    }
}

TEST_CASE("grid: ECEF-LAT sends to the slowest cluster first, ECEF-LAt to a fast one (004 5.2)") {
    // g + L = 1 everywhere; T = (0, 1, 1, 10). LAT: F1 = F2 = max(1+1, 1+10) = 11, F3 = 2,
    // so 0→3 (key 3) beats 0→1 and 0→2 (12). LAt: F = 2 for all, a tie: the lower receiver.
    Matrix inter(4, std::vector<double>(4, 1));
    Network net = test::costs(inter);
    net.set_subnets({{0}, {1}, {2}, {3}});
    net.set_local_broadcast({0, 1, 1, 10});
    const auto req = test::request(net);
    CHECK(inter_hops(net, simulate(net, plan_ecef_lat_max(net, req), req.model)).front() == Hop{0, 3, 1});
    CHECK(inter_hops(net, simulate(net, plan_ecef_lat_min(net, req), req.model)).front() == Hop{0, 1, 1});
    CHECK(inter_hops(net, simulate(net, plan_bottom_up(net, req), req.model)).front() == Hop{0, 3, 1});
}

TEST_CASE("grid: in the non-blocking model a coordinator's ready time advances by g only") {
    // Cluster-level parametric network: g = 1 (send overhead), L = 10 from the root, 0.5
    // between 1 and 2, zero-byte messages. Blocking: RT0 = 11 after 0→1, so 1→2 (12.5)
    // beats 0→2 (22). Non-blocking: RT0 = 1, so 0→2 (1 + 1 + 10 = 12) beats 1→2 (12.5).
    const Matrix lat = {{0, 10, 10}, {10, 0, 0.5}, {10, 0.5, 0}};
    const Matrix bw(3, std::vector<double>(3, 1e9));
    Network net = Network::parametric(test::p_names(3), lat, bw, std::vector<Overhead>(3, {1, 0}),
                                      std::vector<Overhead>(3));
    net.set_subnets({{0}, {1}, {2}});
    for (auto plan : {plan_two_level_ecef, plan_ecef_lat_min, plan_ecef_lat_max}) {
        const auto blocking = make_request(net, 0, {}, 0, ExecModel::blocking);
        CHECK(inter_hops(net, simulate(net, plan(net, blocking), blocking.model)) ==
              std::vector<Hop>{{0, 1, 11}, {1, 2, 12.5}});
        const auto nonblocking = make_request(net, 0, {}, 0, ExecModel::nonblocking);
        CHECK(inter_hops(net, simulate(net, plan(net, nonblocking), nonblocking.model)) ==
              std::vector<Hop>{{0, 1, 11}, {0, 2, 12}});
    }
}

TEST_CASE("grid: the coordinator is the destination cheapest to reach from the root, ties to the lower id") {
    // Cluster 1 = {1, 2, 3}: the root reaches 1 at 9, 2 and 3 at 7.
    Matrix c(4, std::vector<double>(4, 1));
    c[0][1] = 9;
    c[0][2] = c[0][3] = 7;
    Network net = test::costs(c);
    net.set_subnets({{0}, {1, 2, 3}});
    for (const auto& name : two_level_names) {
        CAPTURE(name);
        const auto req = test::request(net);
        const Timeline tl = simulate(net, find_algorithm(name).plan(net, req), req.model);
        CHECK(inter_hops(net, tl) == std::vector<Hop>{{0, 2, 7}});
        // A multicast that leaves out node 2 makes node 3 the coordinator.
        const auto mc = test::request(net, 0, {1, 3});
        CHECK(inter_hops(net, simulate(net, find_algorithm(name).plan(net, mc), mc.model)) ==
              std::vector<Hop>{{0, 3, 7}});
    }
}

TEST_CASE("grid: ECO's k-ary trees inside each subnet (003 4), k = 2 and 3") {
    // Two clusters, 3 and 7 nodes: the root c0n0 reaches c1n0 (node 3) first, then each
    // subnet runs its tree over its members ranked from the coordinator.
    const Network net = Network::clusters({3, 7}, 1, 10);
    const auto sends = [](const Schedule& s, NodeId n) {
        std::vector<NodeId> to;
        for (const auto& t : s.tasks[n]) {
            if (t.op == Op::send) to.push_back(t.peer);
        }
        return to;
    };
    auto req = test::request(net);
    req.options.degree = 2;
    Schedule s = plan_eco(net, req);
    CHECK(s.algorithm == "eco");
    CHECK(sends(s, 0) == std::vector<NodeId>{3, 1, 2});
    CHECK(sends(s, 3) == std::vector<NodeId>{4, 5});
    CHECK(sends(s, 4) == std::vector<NodeId>{6, 7});
    CHECK(sends(s, 5) == std::vector<NodeId>{8, 9});
    for (NodeId n : {1u, 2u, 6u, 7u, 8u, 9u}) CHECK(sends(s, n).empty());
    // Node 3 holds at 10, node 5 at 12 (after 4), node 9 at 14 (after 8).
    CHECK(simulate(net, s, req.model).completion == 14);

    req.options.degree = 3;
    s = plan_eco(net, req);
    CHECK(sends(s, 0) == std::vector<NodeId>{3, 1, 2});
    CHECK(sends(s, 3) == std::vector<NodeId>{4, 5, 6});
    CHECK(sends(s, 4) == std::vector<NodeId>{7, 8, 9});
    CHECK(sends(s, 5).empty());
    // Node 4 holds at 11, then serves 7, 8, 9.
    CHECK(simulate(net, s, req.model).completion == 14);

    // Ranks wrap around from the coordinator (ECO Fig. 1d): root c1n4 (node 7) ranks its
    // subnet 7, 8, 9, 3, 4, 5, 6; the other subnet's coordinator is c0n0.
    req = test::request(net, 7);
    req.options.degree = 2;
    s = plan_eco(net, req);
    CHECK(sends(s, 7) == std::vector<NodeId>{0, 8, 9});
    CHECK(sends(s, 8) == std::vector<NodeId>{3, 4});
    CHECK(sends(s, 9) == std::vector<NodeId>{5, 6});
    CHECK(sends(s, 0) == std::vector<NodeId>{1, 2});

    req.options.degree = 0;
    CHECK_THROWS_AS((void)plan_eco(net, req), InputError);
}

TEST_CASE("grid: every two-level algorithm simulates feasibly on random clustered networks") {
    std::mt19937_64 rng(404);
    for (int trial = 0; trial < 120; ++trial) {
        CAPTURE(trial);
        const std::size_t n = 2 + rng() % 30;
        const std::size_t clusters = 1 + rng() % std::min<std::size_t>(n, 6);
        // Random membership, every cluster non-empty.
        std::vector<std::size_t> of(n);
        for (std::size_t i = 0; i < n; ++i) of[i] = i < clusters ? i : rng() % clusters;
        std::shuffle(of.begin(), of.end(), rng);
        Subnets subnets(clusters);
        for (std::size_t i = 0; i < n; ++i) subnets[of[i]].push_back(static_cast<NodeId>(i));

        std::uniform_real_distribution<double> u(0, 1);
        Matrix lat(n, std::vector<double>(n, 0)), bw(n, std::vector<double>(n, 0));
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < n; ++j) {
                const bool inside = of[i] == of[j];
                lat[i][j] = inside ? 1e-5 + 1e-4 * u(rng) : 1e-3 + 2e-2 * u(rng);
                bw[i][j] = inside ? 1e8 + 1e9 * u(rng) : 1e6 + 1e7 * u(rng);
            }
        }
        std::vector<Overhead> send(n), recv(n);
        for (std::size_t i = 0; i < n; ++i) {
            send[i] = {1e-4 * u(rng), 1e-9 * u(rng)};
            recv[i] = {1e-4 * u(rng), 1e-9 * u(rng)};
        }
        Network net = trial % 3 == 0 ? test::costs([&] {
            Matrix c(n, std::vector<double>(n, 0));
            for (std::size_t i = 0; i < n; ++i) {
                for (std::size_t j = 0; j < n; ++j) c[i][j] = of[i] == of[j] ? 1 + 4 * u(rng) : 20 + 80 * u(rng);
            }
            return c;
        }())
                                     : Network::parametric(test::p_names(n), lat, bw, send, recv);
        net.set_subnets(subnets);
        if (trial % 5 == 1) {
            std::vector<double> t(n);
            for (auto& x : t) x = 0.05 * u(rng);
            net.set_local_broadcast(t);
        }

        const NodeId root = static_cast<NodeId>(rng() % n);
        std::vector<NodeId> dests;
        if (trial % 2 == 1) {
            for (NodeId i = 0; i < n; ++i) {
                if (i != root && rng() % 3 == 0) dests.push_back(i);
            }
        }
        for (ExecModel model : {ExecModel::blocking, ExecModel::nonblocking}) {
            const PlanRequest req = make_request(net, root, dests, 1e5, model);
            std::vector<char> participant(n, 0);
            participant[root] = 1;
            std::set<std::size_t> reached{of[root]};
            for (NodeId d : req.dests) {
                participant[d] = 1;
                reached.insert(of[d]);
            }
            const double lb = bhat_lower_bound(net, root, req.dests, req.size);
            for (const auto& name : two_level_names) {
                CAPTURE(name);
                const Schedule s = find_algorithm(name).plan(net, req);
                CHECK(s.algorithm == name);
                const Timeline tl = simulate(net, s, model);
                CHECK(lb <= tl.completion + eps);
                std::size_t across = 0;
                for (const auto& t : tl.transfers) {
                    CHECK(participant[t.from]);
                    CHECK(participant[t.to]);
                    across += of[t.from] != of[t.to];
                }
                // One inter-subnet transfer per subnet holding a participant, but the root's.
                CHECK(across == reached.size() - 1);
                // A coordinator sends inside its subnet only after its last inter-subnet send.
                for (NodeId i = 0; i < n; ++i) {
                    bool local_seen = false;
                    for (const auto& t : s.tasks[i]) {
                        if (t.op != Op::send) continue;
                        if (of[t.peer] == of[i]) local_seen = true;
                        else CHECK_FALSE(local_seen);
                    }
                }
            }
        }
    }
}

TEST_CASE("grid: a multicast skips subnets without destinations and uses no other node") {
    // Clusters of 3: {0,1,2} {3,4,5} {6,7,8} {9,10,11}; destinations in clusters 0, 2 and 3.
    const Network net = Network::clusters({3, 3, 3, 3}, 1, 10);
    const std::vector<NodeId> dests = {2, 7, 8, 10};
    for (ExecModel model : {ExecModel::blocking, ExecModel::nonblocking}) {
        const auto req = test::request(net, 0, dests, model);
        for (const auto& name : two_level_names) {
            CAPTURE(name);
            const Schedule s = find_algorithm(name).plan(net, req);
            for (NodeId i : {1u, 3u, 4u, 5u, 6u, 9u, 11u}) CHECK(s.tasks[i].empty());
            const Timeline tl = simulate(net, s, model);
            CHECK(inter_hops(net, tl).size() == 2);
            // Every destination is reached exactly once (simulate checks it too).
            std::vector<NodeId> to;
            for (const auto& t : tl.transfers) to.push_back(t.to);
            std::sort(to.begin(), to.end());
            CHECK(to == dests);
        }
    }
}

TEST_SUITE_END();
