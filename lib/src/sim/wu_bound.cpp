#include "hetcast/sim/wu_bound.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "hetcast/sim/lower_bound.hpp"

namespace hetcast {

// Eq. (2) as printed sorts a destination's messages by L and is not a lower bound when the
// receive overheads R differ: L = (10, 5) with R = (10, 1) gives max(5 + 10, 10) = 15, yet
// receiving the first message first completes at max(10 + 1, 5) = 11. The destination is a
// single machine with release dates r = L − R (a message cannot be taken off the network
// before it arrives, and arrival + R ≥ L) and processing times R; Jackson's earliest-release
// order minimises the last completion over every order (1|r_j|C_max), so eq. (2)'s recurrence
// over that order bounds whatever order a schedule uses.
double wu_lower_bound(const Network& net, const PatternRequest& req) {
    check_pattern(net, req);
    struct Receive {
        double release;
        double reach;
        double busy;
    };
    std::vector<std::vector<Receive>> at(net.size());
    std::map<std::pair<NodeId, double>, std::vector<double>> reach;
    for (const Message& m : req.messages) {
        auto it = reach.find({m.source, m.size});
        if (it == reach.end()) {
            it = reach.emplace(std::pair{m.source, m.size}, earliest_reach_times(net, m.source, m.size)).first;
        }
        for (NodeId d : m.dests) {
            const double busy = net.recv_busy(d, m.size);
            const double l = it->second[d];
            at[d].push_back({l - busy, l, busy});
        }
    }
    double bound = 0;
    for (auto& receives : at) {
        if (receives.empty()) continue;
        std::sort(receives.begin(), receives.end(), [](const Receive& a, const Receive& b) {
            return a.release != b.release ? a.release < b.release : a.reach < b.reach;
        });
        double t = receives.front().reach;
        for (std::size_t k = 1; k < receives.size(); ++k) t = std::max(t + receives[k].busy, receives[k].reach);
        bound = std::max(bound, t);
    }
    return bound;
}

}  // namespace hetcast
