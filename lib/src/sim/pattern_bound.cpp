#include "hetcast/sim/pattern_bound.hpp"

#include <algorithm>

#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/wu_bound.hpp"

namespace hetcast {

double pattern_capacity_bound(const Network& net, const PatternRequest& req) {
    const auto& c = net.capacities();
    if (!c) return 0;
    check_pattern(net, req);
    const std::size_t n = net.size();
    const auto sub = net.subnet_of();
    const std::size_t subnets = c->uplink.size();
    std::vector<double> out(n, 0), in(n, 0), up_out(subnets, 0), up_in(subnets, 0);
    std::vector<char> entered(subnets);
    for (const Message& m : req.messages) {
        if (m.dests.empty()) continue;
        out[m.source] += m.size;
        std::fill(entered.begin(), entered.end(), 0);
        bool leaves = false;
        for (NodeId d : m.dests) {
            in[d] += m.size;
            if (subnets == 0 || sub[d] == sub[m.source]) continue;
            leaves = true;
            if (!entered[sub[d]]) up_in[sub[d]] += m.size;
            entered[sub[d]] = 1;
        }
        if (leaves) up_out[sub[m.source]] += m.size;
    }
    double bound = 0;
    const auto take = [&bound](double volume, double capacity) {
        if (volume > 0) bound = std::max(bound, volume / capacity);
    };
    for (NodeId i = 0; i < n; ++i) {
        take(out[i], c->egress[i]);
        take(in[i], c->ingress[i]);
        take(in[i], c->disk[i]);
    }
    for (std::size_t k = 0; k < subnets; ++k) {
        take(up_out[k], c->uplink[k]);
        take(up_in[k], c->uplink[k]);
    }
    return bound;
}

bool pattern_may_cut_through(const Network& net, const PatternRequest& req) {
    if (req.model != ExecModel::nonblocking || net.is_cost_matrix()) return false;
    return std::any_of(req.messages.begin(), req.messages.end(),
                       [](const Message& m) { return m.size > static_cast<double>(min_planned_piece); });
}

double pattern_lower_bound(const Network& net, const PatternRequest& req) {
    const double capacities = pattern_capacity_bound(net, req);
    if (!pattern_may_cut_through(net, req)) return std::max(wu_lower_bound(net, req), capacities);
    check_pattern(net, req);
    double paths = 0;
    for (const Message& m : req.messages) paths = std::max(paths, path_lower_bound(net, m.source, m.dests, m.size));
    return std::max(paths, capacities);
}

}  // namespace hetcast
