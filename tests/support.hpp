#pragma once
// Small builders shared by the tests.
#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/plan.hpp"

namespace hetcast::test {

inline std::vector<std::string> p_names(std::size_t n) {
    std::vector<std::string> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back("P" + std::to_string(i));
    return v;
}

inline Network costs(Matrix c) {
    const auto n = c.size();
    return Network::from_costs(p_names(n), std::move(c));
}

/// A broadcast (empty dests) or multicast request with the blocking model by default.
inline PlanRequest request(const Network& net, NodeId root = 0, std::vector<NodeId> dests = {},
                           ExecModel model = ExecModel::blocking, double size = 1e6) {
    return make_request(net, root, std::move(dests), size, model);
}

struct Edge {
    NodeId from;
    NodeId to;
    friend bool operator==(const Edge&, const Edge&) = default;
};

/// `n` hosts PREFIX0.. in two subnets, the even ones and the odd ones, every NIC and pair at
/// `nic` bytes/s, both uplinks at `uplink`, `latency` between every pair, no overheads.
inline Network alternate_two_subnets(std::size_t n, const std::string& prefix, double nic, double uplink,
                                     double latency) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    std::vector<std::string> names;
    Subnets subnets(2);
    for (std::size_t i = 0; i < n; ++i) {
        names.push_back(prefix + std::to_string(i));
        subnets[i % 2].push_back(static_cast<NodeId>(i));
    }
    Matrix lat(n, std::vector<double>(n, latency)), bw(n, std::vector<double>(n, nic));
    Network net = Network::parametric(names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
    net.set_subnets(subnets);
    net.set_capacities({std::vector<double>(n, nic), std::vector<double>(n, nic), std::vector<double>(n, inf),
                        std::vector<double>(2, uplink)});
    return net;
}

// Bhat's worked examples (paper 001).
inline Matrix bhat_eq1() { return {{0, 10, 995}, {2000, 0, 10}, {70, 5, 0}}; }
inline Matrix bhat_eq2() {
    return {{0, 156, 325, 39}, {156, 0, 163, 115}, {325, 163, 0, 257}, {39, 115, 257, 0}};
}
inline Matrix bhat_eq10() {
    return {{0, 2, 2, 2.1, 2},
            {100, 0, 100, 100, 100},
            {100, 100, 0, 100, 100},
            {1000, 0.1, 0.1, 0, 0.1},
            {100, 100, 100, 100, 0}};
}
inline constexpr double eq11_eps = 0.001;
inline Matrix bhat_eq11() {
    const double e = eq11_eps;
    return {{0, 1, 1, 1.1, 100}, {100, 0, 1, 100, 100}, {100, 100, 0, 1, 100}, {100, 100, 100, 0, 1.1}, {e, e, e, e, 0}};
}

/// Gives `net` random subnets (up to three) and random capacities drawn from `rate`, each
/// NIC and uplink infinite one time in four, a disk limit one time in three.
inline void add_random_capacities(std::mt19937_64& rng, Network& net, std::uniform_real_distribution<double>& rate) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const std::size_t n = net.size();
    const std::size_t groups = 1 + rng() % std::min<std::size_t>(n, 3);
    Subnets sub(groups);
    for (NodeId i = 0; i < n; ++i) sub[i < groups ? i : rng() % groups].push_back(i);
    net.set_subnets(sub);
    const auto maybe = [&] { return rng() % 4 == 0 ? inf : rate(rng); };
    Capacities c;
    for (std::size_t i = 0; i < n; ++i) {
        c.egress.push_back(maybe());
        c.ingress.push_back(maybe());
        c.disk.push_back(rng() % 3 == 0 ? rate(rng) : inf);
    }
    for (std::size_t k = 0; k < groups; ++k) c.uplink.push_back(maybe());
    net.set_capacities(c);
}

/// Every one of n nodes sends `size` bytes to every other.
inline PatternRequest all_to_all(std::size_t n, double size) {
    PatternRequest req;
    for (NodeId s = 0; s < n; ++s) {
        Message m{s, size, {}};
        for (NodeId d = 0; d < n; ++d) {
            if (d != s) m.dests.push_back(d);
        }
        req.messages.push_back(m);
    }
    return req;
}

}  // namespace hetcast::test
