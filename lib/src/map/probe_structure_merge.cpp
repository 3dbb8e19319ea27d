// Structure first (map/probe.hpp, probe_structure()): pieces of one subnet that the ring of
// groups did not bring together, when the members' numbering scatters a subnet.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "probe_structure.hpp"

namespace hetcast::probing {

// Every pair of subnets found, one flow each way between fast members, many pairs per
// measurement (each host one flow out and one in: flows inside a subnet then share nothing,
// flows across share uplinks, which only lowers them). A reading above what any uplink
// carried and near its NICs joins the two. A pair of pieces already joined or already
// apart is not tested again, so the measurements grow with the pieces found, not the hosts.
bool Structure::merge() {
    const std::size_t count = subs_.size();
    if (count < 2) return false;
    nic_estimates();
    const double fastest = fastest_uplink();
    if (fastest <= 0) return false;  // no uplink limits anything: nothing tells pieces apart
    const double floor = tol() * fastest;
    std::vector<std::vector<NodeId>> senders(count), takers(count);
    for (std::size_t k = 0; k < count; ++k) {
        for (NodeId h : by_rate(subs_[k], eg_)) {
            if (eg_[h] > floor) senders[k].push_back(h);
        }
        for (NodeId h : by_rate(subs_[k], in_)) {
            if (in_[h] > floor) takers[k].push_back(h);
        }
    }
    UnionFind pieces(count);
    const auto roots_of = [&](std::size_t a, std::size_t b) {
        a = pieces.find(a);
        b = pieces.find(b);
        return std::pair<std::size_t, std::size_t>(std::min(a, b), std::max(a, b));
    };
    struct Pair {
        std::size_t a, b;
        bool sent[2] = {false, false};
    };
    // Only where the numbering scatters a group (a site numbered by room keeps a subnet in
    // one run, and the ring met its neighbours): else the pairs would grow as groups squared.
    std::vector<char> scattered(count, 0);
    for (std::size_t k = 0; k < count; ++k) {
        const auto [lo, hi] = std::minmax_element(subs_[k].begin(), subs_[k].end());
        scattered[k] = *hi - *lo + 1 > 2 * subs_[k].size() ? 1 : 0;
    }
    std::vector<Pair> todo;
    for (std::size_t a = 0; a < count; ++a) {
        for (std::size_t b = a + 1; b < count; ++b) {
            if (scattered[a] || scattered[b]) todo.push_back({a, b});
        }
    }
    std::vector<std::pair<std::size_t, std::size_t>> apart;  // pairs of groups tested and not joined
    while (!todo.empty()) {
        std::set<std::pair<std::size_t, std::size_t>> settled;
        for (const auto& [a, b] : apart) settled.insert(roots_of(a, b));
        std::erase_if(todo, [&](const Pair& p) {
            const auto roots = roots_of(p.a, p.b);
            return roots.first == roots.second || settled.count(roots);
        });
        std::vector<FlowPair> flows;
        struct Sent {
            std::size_t pair, from, to;
        };
        std::vector<Sent> owner;
        std::vector<char> sends(n_, 0), takes(n_, 0);
        std::set<std::pair<std::size_t, std::size_t>> now;  // pairs of roots in this measurement
        for (std::size_t i = 0; i < todo.size(); ++i) {
            Pair& p = todo[i];
            if (p.sent[0] || p.sent[1]) continue;
            const auto roots = roots_of(p.a, p.b);
            if (now.count(roots)) continue;
            bool any = false;
            for (int dir = 0; dir < 2; ++dir) {
                const std::size_t from = dir ? p.b : p.a, to = dir ? p.a : p.b;
                const auto s = std::find_if(senders[from].begin(), senders[from].end(), [&](NodeId h) { return !sends[h]; });
                const auto t = std::find_if(takers[to].begin(), takers[to].end(), [&](NodeId h) { return !takes[h]; });
                if (s == senders[from].end() || t == takers[to].end()) continue;
                sends[*s] = takes[*t] = 1;
                flows.emplace_back(*s, *t);
                owner.push_back({i, from, to});
                p.sent[dir] = true;
                any = true;
            }
            if (any) now.insert(roots);
        }
        if (flows.empty()) break;  // pieces without a member fast enough to show anything
        const auto got = run_flows(flows, "merging");
        for (std::size_t f = 0; f < flows.size(); ++f) {
            const auto [x, y] = flows[f];
            const double r = got[f];
            if (!std::isnan(r) && r > floor && r * tol() >= std::min(eg_[x], in_[y])) {
                pieces.unite(owner[f].from, owner[f].to);
            }
        }
        for (const auto& o : owner) apart.emplace_back(todo[o.pair].a, todo[o.pair].b);
        std::erase_if(todo, [](const Pair& p) { return p.sent[0] || p.sent[1]; });
    }
    std::vector<std::size_t> slot(count, none);
    Subnets subs;
    std::vector<double> up;
    for (std::size_t k = 0; k < count; ++k) {
        const std::size_t root = pieces.find(k);
        if (slot[root] == none) {
            slot[root] = subs.size();
            subs.emplace_back();
            up.push_back(0);
        }
        auto& g = subs[slot[root]];
        g.insert(g.end(), subs_[k].begin(), subs_[k].end());
        // Every uplink test so far met pieces that shared an uplink, or held hosts since moved.
        up[slot[root]] = inf;
    }
    if (subs.size() == count) return false;
    for (double& u : up) {
        if (u <= 0) u = inf;
    }
    subs_ = std::move(subs);
    up_ = std::move(up);
    for (std::size_t k = 0; k < subs_.size(); ++k) {
        for (NodeId h : subs_[k]) sub_[h] = k;
    }
    return true;
}

}  // namespace hetcast::probing
