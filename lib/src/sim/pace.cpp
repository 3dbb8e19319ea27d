#include "hetcast/sim/pace.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace hetcast {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

/// The finite FIFO uplink directions of a network (3n + s: out of subnet s, 3n + subnets + s:
/// into it) and what crosses them.
struct Uplinks {
    const Network& net;
    std::size_t n;
    std::vector<char> fifo;
    std::vector<double> caps;
    std::size_t subnets;
    std::vector<std::size_t> subnet_of;

    explicit Uplinks(const Network& network)
        : net(network), n(network.size()), fifo(fifo_resources(network)), caps(resource_capacities(network)),
          subnets((caps.size() - 3 * n) / 2), subnet_of(network.subnet_of()) {}
    [[nodiscard]] std::vector<std::size_t> on(NodeId from, NodeId to) const {
        std::vector<std::size_t> out;
        for (std::size_t r : flow_path(net, subnet_of, from, to).resources) {
            if (r >= 3 * n && fifo[r] && caps[r] < inf) out.push_back(r);
        }
        return out;
    }
    [[nodiscard]] std::size_t subnet(std::size_t r) const { return (r - 3 * n) % subnets; }
};

/// `own`'s paces given how many of its transfers cross each uplink direction at once
/// (`most`); those with no other job on their uplinks get `idle` (none when negative).
std::vector<Pace> paces(const Uplinks& u, const std::vector<Transfer>& own, const std::vector<std::vector<std::size_t>>& crossed,
                        const std::vector<std::size_t>& most, const std::vector<BackgroundFlow>& beside, double headroom,
                        double idle) {
    std::vector<std::size_t> beside_on(u.caps.size(), 0);
    std::vector<char> busy(u.subnets, 0);
    for (const auto& f : beside) {
        for (std::size_t r : u.on(f.from, f.to)) {
            ++beside_on[r];
            busy[u.subnet(r)] = 1;
        }
    }
    std::vector<Pace> out;
    for (std::size_t i = 0; i < own.size(); ++i) {
        if (crossed[i].empty()) continue;
        const bool shared = std::any_of(crossed[i].begin(), crossed[i].end(), [&](std::size_t r) { return busy[u.subnet(r)] != 0; });
        double rate = idle;
        if (shared) {
            // Paced at all, it keeps under every uplink it crosses, the idle ones too.
            rate = inf;
            for (std::size_t r : crossed[i]) {
                rate = std::min(rate, u.caps[r] * headroom / static_cast<double>(std::max<std::size_t>(most[r], 1) + beside_on[r]));
            }
        }
        if (rate >= 0) out.push_back({own[i].message, own[i].from, own[i].to, rate});
    }
    return out;
}

}  // namespace

std::vector<Pace> crossing_paces(const Network& net, const Timeline& own, const std::vector<BackgroundFlow>& beside,
                                 double headroom) {
    if (!net.capacities() || beside.empty() || own.transfers.empty()) return {};
    const Uplinks u(net);
    // The most transfers on each uplink direction at once: a sweep over their intervals.
    std::vector<std::vector<std::pair<double, int>>> events(u.caps.size());
    std::vector<std::vector<std::size_t>> crossed(own.transfers.size());
    for (std::size_t i = 0; i < own.transfers.size(); ++i) {
        const Transfer& t = own.transfers[i];
        crossed[i] = u.on(t.from, t.to);
        for (std::size_t r : crossed[i]) {
            events[r].push_back({t.start, +1});
            events[r].push_back({std::max(t.start, t.arrival), -1});
        }
    }
    std::vector<std::size_t> most(u.caps.size(), 0);
    for (std::size_t r = 0; r < u.caps.size(); ++r) {
        auto& e = events[r];
        std::sort(e.begin(), e.end());  // an end before a start at the same moment
        long at = 0;
        for (const auto& [when, d] : e) {
            at += d;
            most[r] = std::max<std::size_t>(most[r], static_cast<std::size_t>(std::max(at, 0L)));
        }
    }
    return paces(u, own.transfers, crossed, most, beside, headroom, -1);
}

std::vector<Pace> current_paces(const Network& net, const std::vector<Transfer>& running,
                                const std::vector<BackgroundFlow>& beside, double headroom) {
    if (!net.capacities() || running.empty()) return {};
    const Uplinks u(net);
    std::vector<std::vector<std::size_t>> crossed(running.size());
    std::vector<std::size_t> most(u.caps.size(), 0);
    for (std::size_t i = 0; i < running.size(); ++i) {
        crossed[i] = u.on(running[i].from, running[i].to);
        for (std::size_t r : crossed[i]) ++most[r];
    }
    return paces(u, running, crossed, most, beside, headroom, 0);
}

}  // namespace hetcast
