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
    const bool cut_through = s.relay == Relay::cut_through;
    if (cut_through && net.is_cost_matrix()) {
        throw InputError("a cut-through schedule needs a network with bandwidths, not a cost matrix");
    }
    if (cut_through && s.piece == 0) throw InputError("a cut-through schedule needs pieces of at least one byte");
    const std::size_t n = net.size();
    const std::vector<double> caps = resource_capacities(net);
    const std::vector<char> fifo = fifo_resources(net);
    std::vector<std::size_t> pc(n, 0);
    std::vector<double> clock(n, 0.0);
    std::vector<char> blocked(n, 0);
    std::vector<std::size_t> issued(s.messages.size() * n, none);  // (message, receiver) → transfer
    Timeline tl;
    tl.transfers.reserve(s.transfer_count());

    // Bytes a receiver needs before its list goes past the receive: the first piece when
    // cutting through, else the whole message (then the head is the arrival itself).
    const auto head_of = [&](double size) {
        return cut_through ? std::min(static_cast<double>(s.piece), size) : size;
    };
    struct State {
        std::size_t supply = none;  ///< cut-through: the transfer that brings the message to the sender
        std::size_t slot = none;    ///< index in `active` while its flow runs
        bool head_in = false;       ///< the head has arrived, at head_at
        double head_at = 0;
        double reached = -1;        ///< when the receiver's list reached the receive; < 0: not yet
        bool arrived = false;
    };
    std::vector<State> state;
    state.reserve(s.transfer_count());

    struct Flow {
        std::size_t transfer;
        FlowPath path;
        double size;
        double head;
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

    const auto complete = [&](std::size_t k) {
        Transfer& tr = tl.transfers[k];
        tr.complete = std::max(tr.arrival, state[k].reached) + net.recv_busy(tr.to, s.messages[tr.message].size);
    };
    const auto run = [&](NodeId node) {
        blocked[node] = 0;
        for (; pc[node] < s.tasks[node].size(); ++pc[node]) {
            const Task& t = s.tasks[node][pc[node]];
            const double size = s.messages[t.message].size;
            if (t.op == Op::send) {
                const double free = clock[node] + net.send_busy(node, t.peer, size);
                issued[t.message * n + t.peer] = tl.transfers.size();
                tl.transfers.push_back({t.message, node, t.peer, clock[node], free, 0.0, 0.0});
                state.push_back({});
                if (cut_through && s.messages[t.message].source != node) {
                    state.back().supply = issued[t.message * n + node];
                }
                starts.push({free, tl.transfers.size() - 1});
                clock[node] = free;
            } else {
                const std::size_t k = issued[t.message * n + node];
                if (k == none || !state[k].head_in) {
                    blocked[node] = 1;
                    return;
                }
                // The receiver takes the head off the network before it goes on; with the
                // whole message as head this is the store-and-forward receive.
                state[k].reached = clock[node];
                clock[node] = std::max(state[k].head_at, clock[node]) + net.recv_busy(node, head_of(size));
                if (state[k].arrived) complete(k);
            }
        }
    };
    const auto head_arrived = [&](std::size_t k, double at) {
        state[k].head_in = true;
        state[k].head_at = at;
        const Transfer& tr = tl.transfers[k];
        const NodeId to = tr.to;
        if (blocked[to]) {
            const Task& t = s.tasks[to][pc[to]];
            if (t.message == tr.message && t.peer == tr.from) ready.push_back(to);
        }
    };
    const auto finish = [&](std::size_t k, double at) {
        Transfer& tr = tl.transfers[k];
        // A relayed flow carries its last byte no sooner than that byte reached the relay.
        const std::size_t sup = state[k].supply;
        const double last = sup == none ? at : std::max(at, tl.transfers[sup].arrival);
        tr.arrival = last + net.wire(tr.from, tr.to, 0);
        state[k].arrived = true;
        if (!state[k].head_in) head_arrived(k, tr.arrival);
        if (state[k].reached >= 0) complete(k);
    };
    const auto supply_slot = [&](const Flow& f) {
        const std::size_t sup = state[f.transfer].supply;
        return sup == none ? none : state[sup].slot;
    };
    const auto remove = [&](std::size_t i) {
        state[active[i].transfer].slot = none;
        if (i + 1 != active.size()) {
            active[i] = std::move(active.back());
            state[active[i].transfer].slot = i;
        }
        active.pop_back();
    };

    double now = 0;
    while (true) {
        while (!ready.empty()) {
            const NodeId node = ready.front();
            ready.pop_front();
            run(node);
        }
        if (active.empty() && starts.empty()) break;
        // Events: a flow starts, ends, brings in its head, or catches up with its supply.
        double next = starts.empty() ? inf : starts.top().at;
        for (const Flow& f : active) {
            next = std::min(next, now + f.left / f.rate);
            if (!state[f.transfer].head_in) next = std::min(next, now + (f.left - (f.size - f.head)) / f.rate);
            const std::size_t sup = supply_slot(f);
            if (sup != none && f.rate > active[sup].rate && f.left > active[sup].left) {
                next = std::min(next, now + (f.left - active[sup].left) / (f.rate - active[sup].rate));
            }
        }
        if (next > now) {
            for (Flow& f : active) f.left -= f.rate * (next - now);
        }
        now = next;
        // A relayed flow never runs ahead of what the relay has; within a nanosecond of
        // its supply it has caught up.
        for (Flow& f : active) {
            const std::size_t sup = supply_slot(f);
            if (sup != none && f.left - active[sup].left <= f.rate * 1e-9) f.left = active[sup].left;
        }
        // A flow is done when what is left would take less than a nanosecond, and not
        // before its supply is done.
        for (bool again = true; again;) {
            again = false;
            for (std::size_t i = 0; i < active.size();) {
                if (active[i].left <= active[i].rate * 1e-9 && supply_slot(active[i]) == none) {
                    finish(active[i].transfer, now);
                    remove(i);
                    again = true;
                } else {
                    ++i;
                }
            }
        }
        for (const Flow& f : active) {
            if (!state[f.transfer].head_in && f.left - (f.size - f.head) <= f.rate * 1e-9) {
                const Transfer& tr = tl.transfers[f.transfer];
                head_arrived(f.transfer, now + net.wire(tr.from, tr.to, 0));
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
            state[k].slot = active.size();
            active.push_back({k, flow_path(net, tr.from, tr.to), size, head_of(size), size});
        }
        if (active.empty()) continue;
        // Max-min rates in which a flow that has caught up with its supply rises no faster.
        std::vector<FlowPath> paths;
        std::vector<std::size_t> follows(active.size(), none);
        paths.reserve(active.size());
        for (std::size_t i = 0; i < active.size(); ++i) {
            paths.push_back(active[i].path);
            const std::size_t sup = supply_slot(active[i]);
            if (sup != none && active[i].left <= active[sup].left) follows[i] = sup;
        }
        const std::vector<double> rates = sharing_rates(caps, fifo, paths, follows);
        for (std::size_t i = 0; i < active.size(); ++i) active[i].rate = rates[i];
    }
    detail::close_timeline(net, s, pc, tl);
    return tl;
}

}  // namespace hetcast
