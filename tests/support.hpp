#pragma once
// Small builders shared by the tests.
#include <string>
#include <vector>

#include "hetcast/model/network.hpp"
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

}  // namespace hetcast::test
