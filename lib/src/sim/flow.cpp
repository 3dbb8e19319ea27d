#include "hetcast/sim/flow.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>

#include "hetcast/error.hpp"
#include "timeline_checks.hpp"

namespace hetcast {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

// Progressive filling in which flow f's rate rises at weight[f] times the common pace.
std::vector<double> fill(const std::vector<double>& capacity, const std::vector<FlowPath>& flows,
                         const std::vector<std::size_t>& follows, const std::vector<double>& weight) {
    std::vector<std::vector<std::size_t>> followers(flows.size());
    for (std::size_t f = 0; f < follows.size(); ++f) {
        if (follows[f] != none) followers[follows[f]].push_back(f);
    }
    std::vector<double> rate(flows.size(), inf);
    std::vector<char> frozen(flows.size(), 0);
    std::vector<double> left = capacity;
    std::vector<std::size_t> users(capacity.size(), 0);
    std::vector<double> pace(capacity.size(), 0.0);  // the weights of the unfrozen flows crossing it
    for (std::size_t f = 0; f < flows.size(); ++f) {
        for (std::size_t r : flows[f].resources) {
            ++users[r];
            pace[r] += weight[f];
        }
    }
    std::size_t unfrozen = flows.size();
    std::vector<std::size_t> now_frozen;
    while (unfrozen > 0) {
        // The next level: the least fair share of any resource still in use, or a flow's cap.
        double level = inf;
        for (std::size_t r = 0; r < left.size(); ++r) {
            if (users[r] > 0) level = std::min(level, std::max(0.0, left[r]) / pace[r]);
        }
        for (std::size_t f = 0; f < flows.size(); ++f) {
            if (!frozen[f]) level = std::min(level, flows[f].cap / weight[f]);
        }
        if (level == inf) break;  // the rest cross nothing finite: they keep infinity
        const double edge = level * (1 + 1e-12);
        now_frozen.clear();
        for (std::size_t f = 0; f < flows.size(); ++f) {
            if (frozen[f]) continue;
            bool hit = flows[f].cap / weight[f] <= edge;
            for (std::size_t r : flows[f].resources) {
                hit = hit || std::max(0.0, left[r]) / pace[r] <= edge;
            }
            if (hit) now_frozen.push_back(f);
        }
        // A flow that may not outrun another stops rising with it (it has risen with it so far).
        for (std::size_t i = 0; i < now_frozen.size(); ++i) {
            for (std::size_t g : followers[now_frozen[i]]) {
                if (!frozen[g] && std::find(now_frozen.begin(), now_frozen.end(), g) == now_frozen.end()) {
                    now_frozen.push_back(g);
                }
            }
        }
        for (std::size_t f : now_frozen) {
            frozen[f] = 1;
            rate[f] = std::min(level * weight[f], flows[f].cap);
            --unfrozen;
            for (std::size_t r : flows[f].resources) {
                left[r] -= rate[f];
                --users[r];
                pace[r] -= weight[f];
            }
        }
    }
    return rate;
}

}  // namespace

std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<FlowPath>& flows,
                                  const std::vector<std::size_t>& follows) {
    return fill(capacity, flows, follows, std::vector<double>(flows.size(), 1.0));
}

std::vector<double> sharing_rates(const std::vector<double>& capacity, const std::vector<char>& fifo,
                                  const std::vector<FlowPath>& flows, const std::vector<std::size_t>& follows) {
    std::vector<double> rate = max_min_rates(capacity, flows, follows);
    if (std::find(fifo.begin(), fifo.end(), 1) == fifo.end()) return rate;
    // The flows on each saturated FIFO resource; two resources with the same flows are one
    // bottleneck (the second of two equal links in series never queues).
    std::vector<std::vector<std::size_t>> on(capacity.size());
    for (std::size_t f = 0; f < flows.size(); ++f) {
        for (std::size_t r : flows[f].resources) on[r].push_back(f);
    }
    std::vector<char> full(capacity.size(), 0);
    for (std::size_t r = 0; r < capacity.size(); ++r) {
        if (!fifo[r] || !std::isfinite(capacity[r]) || on[r].empty()) continue;
        double load = 0;
        for (std::size_t f : on[r]) load += rate[f];
        full[r] = load >= capacity[r] * (1 - 1e-9);
    }
    std::vector<double> weight(flows.size(), 1.0);
    bool weighted = false;
    for (std::size_t f = 0; f < flows.size(); ++f) {
        std::vector<const std::vector<std::size_t>*> seen;
        for (std::size_t r : flows[f].resources) {
            if (!full[r]) continue;
            if (std::none_of(seen.begin(), seen.end(), [&](const auto* v) { return *v == on[r]; })) seen.push_back(&on[r]);
        }
        if (seen.size() >= 2) {
            weight[f] = std::pow(fifo_second_bottleneck_weight, static_cast<double>(seen.size() - 1));
            weighted = true;
        }
    }
    if (!weighted) return rate;
    // A flow held to another's rate rises at that one's pace.
    for (std::size_t f = 0; f < follows.size(); ++f) {
        for (std::size_t g = f; g < follows.size() && follows[g] != none; g = follows[g]) weight[f] = weight[follows[g]];
    }
    return fill(capacity, flows, follows, weight);
}

std::vector<char> fifo_resources(const Network& net) {
    const auto& c = net.capacities();
    if (!c) return {};
    const std::size_t n = net.size();
    const std::size_t subnets = net.subnets() ? net.subnets()->size() : 1;
    std::vector<char> fifo(3 * n + 2 * subnets, 0);
    if (c->queues == Queues::fair) return fifo;
    for (std::size_t i = 0; i < n; ++i) {
        fifo[i] = c->queues == Queues::fifo;  // egress: the host's own qdisc
        fifo[n + i] = 1;                      // ingress: the switch's port to the host
    }
    for (std::size_t k = 0; k < 2 * subnets; ++k) fifo[3 * n + k] = 1;
    return fifo;
}

std::vector<double> resource_capacities(const Network& net) {
    const std::size_t n = net.size();
    const std::size_t subnets = net.subnets() ? net.subnets()->size() : 1;
    std::vector<double> caps(3 * n + 2 * subnets, inf);
    const auto& c = net.capacities();
    if (!c) return caps;
    for (std::size_t i = 0; i < n; ++i) {
        caps[i] = c->egress[i];
        caps[n + i] = c->ingress[i];
        caps[2 * n + i] = c->disk[i];
    }
    for (std::size_t k = 0; k < c->uplink.size(); ++k) {
        caps[3 * n + k] = c->uplink[k];
        caps[3 * n + subnets + k] = c->uplink[k];
    }
    return caps;
}

FlowPath flow_path(const Network& net, NodeId from, NodeId to) {
    const auto& c = net.capacities();
    return flow_path(net, c && !c->uplink.empty() ? net.subnet_of() : std::vector<std::size_t>{}, from, to);
}

FlowPath flow_path(const Network& net, const std::vector<std::size_t>& sub, NodeId from, NodeId to) {
    const std::size_t n = net.size();
    const std::size_t subnets = net.subnets() ? net.subnets()->size() : 1;
    FlowPath p;
    p.cap = net.bandwidth().empty() ? inf : net.bandwidth()[from][to];
    const auto& c = net.capacities();
    if (!c) return p;
    const auto add = [&](std::size_t r, double cap) {
        if (std::isfinite(cap)) p.resources.push_back(r);
    };
    add(from, c->egress[from]);
    add(n + to, c->ingress[to]);
    add(2 * n + to, c->disk[to]);
    if (!c->uplink.empty()) {
        if (sub[from] != sub[to]) {
            add(3 * n + sub[from], c->uplink[sub[from]]);
            add(3 * n + subnets + sub[to], c->uplink[sub[to]]);
        }
    }
    return p;
}

}  // namespace hetcast
