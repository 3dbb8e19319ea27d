#include "hetcast/sim/lower_bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/throughput.hpp"

namespace hetcast {

namespace {

/// Shortest path sums from `root` over a complete graph: dense Dijkstra, O(N^2).
template <class Cost>
std::vector<double> shortest_from(std::size_t n, NodeId root, Cost cost) {
    std::vector<double> dist(n, std::numeric_limits<double>::infinity());
    std::vector<char> done(n, 0);
    dist[root] = 0;
    for (std::size_t round = 0; round < n; ++round) {
        NodeId u = 0;
        double best = std::numeric_limits<double>::infinity();
        for (NodeId i = 0; i < n; ++i) {
            if (!done[i] && dist[i] < best) {
                best = dist[i];
                u = i;
            }
        }
        if (best == std::numeric_limits<double>::infinity()) break;
        done[u] = 1;
        for (NodeId v = 0; v < n; ++v) {
            if (!done[v] && v != u) dist[v] = std::min(dist[v], dist[u] + cost(u, v));
        }
    }
    return dist;
}

}  // namespace

std::vector<double> earliest_reach_times(const Network& net, NodeId root, double m) {
    return shortest_from(net.size(), root, [&](NodeId u, NodeId v) { return net.time(u, v, m); });
}

double bhat_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests, double m) {
    const auto ert = earliest_reach_times(net, root, m);
    double lb = 0;
    for (NodeId d : dests) lb = std::max(lb, ert[d]);
    return lb;
}

double capacity_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests, double m) {
    const auto& c = net.capacities();
    if (!c || dests.empty()) return 0;
    double slowest = c->egress[root];
    const auto sub = net.subnet_of();
    bool leaves_root_subnet = false;
    for (NodeId d : dests) {
        slowest = std::min({slowest, c->ingress[d], c->disk[d]});
        if (sub[d] != sub[root]) {
            leaves_root_subnet = true;
            if (!c->uplink.empty()) slowest = std::min(slowest, c->uplink[sub[d]]);
        }
    }
    if (leaves_root_subnet && !c->uplink.empty()) slowest = std::min(slowest, c->uplink[sub[root]]);
    return m / slowest;
}

namespace {

/// Per node, the largest bottleneck pair bandwidth of a path from `root` (Dijkstra on max-min).
std::vector<double> widest_paths(const Network& net, NodeId root) {
    const std::size_t n = net.size();
    const auto& bw = net.bandwidth();
    std::vector<double> width(n, 0);
    std::vector<char> done(n, 0);
    width[root] = std::numeric_limits<double>::infinity();
    for (std::size_t round = 0; round < n; ++round) {
        NodeId u = 0;
        double best = 0;
        for (NodeId i = 0; i < n; ++i) {
            if (!done[i] && width[i] > best) {
                best = width[i];
                u = i;
            }
        }
        if (best == 0) break;
        done[u] = 1;
        for (NodeId v = 0; v < n; ++v) {
            if (!done[v] && v != u) width[v] = std::max(width[v], std::min(width[u], bw[u][v]));
        }
    }
    return width;
}

/// Per node, the least latency sum of a path from `root`.
std::vector<double> least_latency(const Network& net, NodeId root) {
    const auto& lat = net.latency();
    return shortest_from(net.size(), root, [&](NodeId u, NodeId v) { return lat[u][v]; });
}

}  // namespace

double path_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests, double m) {
    if (net.is_cost_matrix()) return bhat_lower_bound(net, root, dests, m);
    const auto width = widest_paths(net, root);
    const auto lat = least_latency(net, root);
    double lb = 0;
    for (NodeId d : dests) {
        if (d != root) lb = std::max(lb, lat[d] + m / width[d]);
    }
    return lb;
}

double pipelined_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests, double m,
                             double throughput) {
    if (net.is_cost_matrix()) return bhat_lower_bound(net, root, dests, m);
    const double lb = std::max(capacity_lower_bound(net, root, dests, m), path_lower_bound(net, root, dests, m));
    return std::max(lb, m / (throughput > 0 ? throughput : steady_state_throughput(net, root, dests)));
}

double broadcast_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests, double m,
                             Relay relay, double throughput) {
    if (relay == Relay::cut_through) return pipelined_lower_bound(net, root, dests, m, throughput);
    return std::max(bhat_lower_bound(net, root, dests, m), capacity_lower_bound(net, root, dests, m));
}

double schedule_lower_bound(const Network& net, const Schedule& s) {
    if (!net.capacities() || net.is_cost_matrix() || s.tasks.size() != net.size()) return 0;
    const std::size_t n = net.size();
    const auto caps = resource_capacities(net);
    const auto& c = *net.capacities();
    const std::vector<std::size_t> sub = c.uplink.empty() ? std::vector<std::size_t>(n, 0) : net.subnet_of();
    std::vector<double> load(caps.size(), 0.0);
    std::vector<char> is_dest(n, 0);
    std::vector<double> arrival(n, 0.0), head(n, 0.0);
    std::vector<NodeId> queue;
    double bound = 0;
    for (MessageId m = 0; m < s.messages.size(); ++m) {
        const Message& msg = s.messages[m];
        if (msg.source >= n) return 0;
        for (NodeId d : msg.dests) {
            if (d < n) is_dest[d] = 1;
        }
        // From the source down the relay tree the send tasks describe. Cut through, a relay
        // starts its flow once the first piece is in (`head`), and its last byte leaves no
        // sooner than the relay's own arrived.
        const bool cut = s.relay == Relay::cut_through;
        const double piece = cut && s.piece > 0 ? std::min(static_cast<double>(s.piece), msg.size) : msg.size;
        queue.assign(1, msg.source);
        arrival[msg.source] = head[msg.source] = 0;
        for (std::size_t q = 0; q < queue.size() && q <= n; ++q) {
            const NodeId u = queue[q];
            const double ready = u == msg.source ? 0 : head[u] + net.recv_busy(u, piece);
            for (const Task& t : s.tasks[u]) {
                if (t.op != Op::send || t.message != m || t.peer >= n) continue;
                const NodeId v = t.peer;
                const FlowPath p = flow_path(net, sub, u, v);
                double rate = p.cap;
                for (std::size_t r : p.resources) rate = std::min(rate, caps[r]);
                const double start = ready + net.send_busy(u, v, msg.size);
                const double latency = net.wire(u, v, 0);
                arrival[v] = std::max(start + (msg.size > 0 ? msg.size / rate : 0), cut ? arrival[u] : 0) + latency;
                head[v] = cut ? start + (piece > 0 ? piece / rate : 0) + latency : arrival[v];
                if (is_dest[v]) {
                    bound = std::max(bound, arrival[v] + net.recv_busy(v, msg.size));
                    for (std::size_t r : p.resources) load[r] += msg.size;
                }
                queue.push_back(v);
            }
        }
        for (NodeId d : msg.dests) {
            if (d < n) is_dest[d] = 0;
        }
    }
    for (std::size_t r = 0; r < caps.size(); ++r) {
        if (load[r] > 0 && std::isfinite(caps[r])) bound = std::max(bound, load[r] / caps[r]);
    }
    // The simulator ends a flow within a nanosecond of its last byte.
    return bound * (1 - 1e-6);
}

}  // namespace hetcast
