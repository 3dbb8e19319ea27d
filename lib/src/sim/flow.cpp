#include "hetcast/sim/flow.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>

#include "timeline_checks.hpp"

namespace hetcast {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

}  // namespace

std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<FlowPath>& flows) {
    std::vector<double> rate(flows.size(), inf);
    std::vector<char> frozen(flows.size(), 0);
    std::vector<double> left = capacity;
    std::vector<std::size_t> users(capacity.size(), 0);
    for (const auto& f : flows) {
        for (std::size_t r : f.resources) ++users[r];
    }
    std::size_t unfrozen = flows.size();
    std::vector<std::size_t> now_frozen;
    while (unfrozen > 0) {
        // The next level: the least fair share of any resource still in use, or a flow's cap.
        double level = inf;
        for (std::size_t r = 0; r < left.size(); ++r) {
            if (users[r] > 0) level = std::min(level, std::max(0.0, left[r]) / static_cast<double>(users[r]));
        }
        for (std::size_t f = 0; f < flows.size(); ++f) {
            if (!frozen[f]) level = std::min(level, flows[f].cap);
        }
        if (level == inf) break;  // the rest cross nothing finite: they keep infinity
        const double edge = level * (1 + 1e-12);
        now_frozen.clear();
        for (std::size_t f = 0; f < flows.size(); ++f) {
            if (frozen[f]) continue;
            bool hit = flows[f].cap <= edge;
            for (std::size_t r : flows[f].resources) {
                hit = hit || std::max(0.0, left[r]) / static_cast<double>(users[r]) <= edge;
            }
            if (hit) now_frozen.push_back(f);
        }
        for (std::size_t f : now_frozen) {
            frozen[f] = 1;
            rate[f] = level;
            --unfrozen;
            for (std::size_t r : flows[f].resources) {
                left[r] -= level;
                --users[r];
            }
        }
    }
    return rate;
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
        const auto sub = net.subnet_of();
        if (sub[from] != sub[to]) {
            add(3 * n + sub[from], c->uplink[sub[from]]);
            add(3 * n + subnets + sub[to], c->uplink[sub[to]]);
        }
    }
    return p;
}

Timeline simulate_flows(const Network& net, const Schedule& s) {
    detail::validate_schedule(net, s);
    const std::size_t n = net.size();
    const std::vector<double> caps = resource_capacities(net);
    std::vector<std::size_t> pc(n, 0);
    std::vector<double> clock(n, 0.0);
    std::vector<char> blocked(n, 0);
    std::vector<std::size_t> issued(s.messages.size() * n, none);  // (message, receiver) → transfer
    std::vector<char> arrived;
    Timeline tl;
    tl.transfers.reserve(s.transfer_count());

    struct Flow {
        std::size_t transfer;
        FlowPath path;
        double left;  ///< bytes
        double rate = 0;
    };
    std::vector<Flow> active;
    struct Start {
        double at;
        std::size_t transfer;
        bool operator>(const Start& o) const { return at != o.at ? at > o.at : transfer > o.transfer; }
    };
    std::priority_queue<Start, std::vector<Start>, std::greater<>> starts;
    std::deque<NodeId> ready;
    for (NodeId i = 0; i < n; ++i) ready.push_back(i);

    const auto run = [&](NodeId node) {
        blocked[node] = 0;
        for (; pc[node] < s.tasks[node].size(); ++pc[node]) {
            const Task& t = s.tasks[node][pc[node]];
            const double size = s.messages[t.message].size;
            if (t.op == Op::send) {
                const double free = clock[node] + net.send_busy(node, t.peer, size);
                issued[t.message * n + t.peer] = tl.transfers.size();
                tl.transfers.push_back({t.message, node, t.peer, clock[node], free, 0.0, 0.0});
                arrived.push_back(0);
                starts.push({free, tl.transfers.size() - 1});
                clock[node] = free;
            } else {
                const std::size_t k = issued[t.message * n + node];
                if (k == none || !arrived[k]) {
                    blocked[node] = 1;
                    return;
                }
                Transfer& tr = tl.transfers[k];
                tr.complete = std::max(tr.arrival, clock[node]) + net.recv_busy(node, size);
                clock[node] = tr.complete;
            }
        }
    };
    const auto finish = [&](std::size_t k, double at) {
        Transfer& tr = tl.transfers[k];
        tr.arrival = at + net.wire(tr.from, tr.to, 0);
        arrived[k] = 1;
        const NodeId to = tr.to;
        if (blocked[to]) {
            const Task& t = s.tasks[to][pc[to]];
            if (t.message == tr.message && t.peer == tr.from) ready.push_back(to);
        }
    };

    double now = 0;
    while (true) {
        while (!ready.empty()) {
            const NodeId node = ready.front();
            ready.pop_front();
            run(node);
        }
        if (active.empty() && starts.empty()) break;
        double next = starts.empty() ? inf : starts.top().at;
        for (const Flow& f : active) next = std::min(next, now + f.left / f.rate);
        if (next > now) {
            for (Flow& f : active) f.left -= f.rate * (next - now);
        }
        now = next;
        bool changed = false;
        // A flow is done when what is left would take less than a nanosecond.
        for (std::size_t i = 0; i < active.size();) {
            if (active[i].left <= active[i].rate * 1e-9) {
                finish(active[i].transfer, now);
                active[i] = std::move(active.back());
                active.pop_back();
                changed = true;
            } else {
                ++i;
            }
        }
        while (!starts.empty() && starts.top().at <= now) {
            const std::size_t k = starts.top().transfer;
            starts.pop();
            const Transfer& tr = tl.transfers[k];
            const double size = s.messages[tr.message].size;
            if (size <= 0) {
                finish(k, now);
                continue;
            }
            active.push_back({k, flow_path(net, tr.from, tr.to), size});
            changed = true;
        }
        if (changed && !active.empty()) {
            std::vector<FlowPath> paths;
            paths.reserve(active.size());
            for (const Flow& f : active) paths.push_back(f.path);
            const auto rates = max_min_rates(caps, paths);
            for (std::size_t i = 0; i < active.size(); ++i) active[i].rate = rates[i];
        }
    }
    detail::close_timeline(net, s, pc, tl);
    return tl;
}

}  // namespace hetcast
