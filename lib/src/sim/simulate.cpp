#include "hetcast/sim/simulate.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <string>

#include "hetcast/error.hpp"
#include "hetcast/sim/flow.hpp"
#include "timeline_checks.hpp"

namespace hetcast {
namespace {

constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

std::string describe(const Network& net, const Schedule& s, NodeId node, const Task& t) {
    const auto& src = net.name(s.messages[t.message].source);
    return net.name(node) + (t.op == Op::send ? " sends " : " receives ") + "the message of " + src +
           (t.op == Op::send ? " to " : " from ") + net.name(t.peer);
}

}  // namespace

namespace detail {

void validate_schedule(const Network& net, const Schedule& s) {
    const std::size_t n = net.size();
    if (s.tasks.size() != n) throw InfeasibleSchedule("schedule has task lists for a different node count");
    for (const auto& msg : s.messages) {
        if (msg.source >= n) throw InfeasibleSchedule("message source out of range");
        for (NodeId d : msg.dests) {
            if (d >= n) throw InfeasibleSchedule("message destination out of range");
        }
    }
    const std::size_t slots = s.messages.size() * n;
    std::vector<NodeId> recv_from(slots, std::numeric_limits<NodeId>::max());
    std::vector<int> sends(slots, 0);
    for (NodeId node = 0; node < n; ++node) {
        std::vector<char> holds(s.messages.size(), 0);
        for (std::size_t m = 0; m < s.messages.size(); ++m) holds[m] = s.messages[m].source == node;
        for (const Task& t : s.tasks[node]) {
            if (t.message >= s.messages.size() || t.peer >= n || t.peer == node) {
                throw InfeasibleSchedule("task of " + net.name(node) + " names a bad message or peer");
            }
            const auto& msg = s.messages[t.message];
            if (t.op == Op::send) {
                if (!holds[t.message]) {
                    throw InfeasibleSchedule(describe(net, s, node, t) + " before it holds it");
                }
                ++sends[t.message * n + t.peer];
            } else {
                if (msg.source == node) {
                    throw InfeasibleSchedule(describe(net, s, node, t) + ", but it is the source");
                }
                auto& from = recv_from[t.message * n + node];
                if (from != std::numeric_limits<NodeId>::max()) {
                    throw InfeasibleSchedule(net.name(node) + " is reached twice by the message of " +
                                             net.name(msg.source));
                }
                from = t.peer;
                holds[t.message] = 1;
            }
        }
    }
    for (NodeId node = 0; node < n; ++node) {
        for (const Task& t : s.tasks[node]) {
            if (t.op == Op::send && recv_from[t.message * n + t.peer] != node) {
                throw InfeasibleSchedule(describe(net, s, node, t) + " but no matching receive exists");
            }
            if (t.op == Op::recv && sends[t.message * n + node] != 1) {
                throw InfeasibleSchedule(describe(net, s, node, t) + " but no matching send exists");
            }
        }
    }
    for (MessageId m = 0; m < s.messages.size(); ++m) {
        for (NodeId d : s.messages[m].dests) {
            if (recv_from[m * n + d] == std::numeric_limits<NodeId>::max()) {
                throw InfeasibleSchedule(net.name(d) + " is never reached by the message of " +
                                         net.name(s.messages[m].source));
            }
        }
    }
}

void close_timeline(const Network& net, const Schedule& s, const std::vector<std::size_t>& pc, Timeline& tl) {
    const std::size_t n = net.size();
    for (NodeId i = 0; i < n; ++i) {
        if (pc[i] < s.tasks[i].size()) {
            throw InfeasibleSchedule("deadlock: " + describe(net, s, i, s.tasks[i][pc[i]]) + " and waits forever");
        }
    }
    std::vector<char> is_dest(s.messages.size() * n, 0);
    for (MessageId m = 0; m < s.messages.size(); ++m) {
        for (NodeId d : s.messages[m].dests) is_dest[m * n + d] = 1;
    }
    for (const auto& tr : tl.transfers) {
        if (is_dest[tr.message * n + tr.to]) tl.completion = std::max(tl.completion, tr.complete);
    }
    std::sort(tl.transfers.begin(), tl.transfers.end(), [](const Transfer& a, const Transfer& b) {
        if (a.start != b.start) return a.start < b.start;
        if (a.from != b.from) return a.from < b.from;
        return a.to < b.to;
    });
}

}  // namespace detail

Timeline simulate(const Network& net, const Schedule& s, ExecModel model, LinkUse links) {
    if (s.relay == Relay::cut_through) {
        if (model != ExecModel::nonblocking) {
            throw InputError("a cut-through schedule is predicted in the nonblocking model only, not in the " +
                             std::string(to_string(model)) + " model");
        }
        return simulate_flows(net, s);
    }
    if (model == ExecModel::nonblocking && net.capacities()) return simulate_flows(net, s);
    detail::validate_schedule(net, s);
    const std::size_t n = net.size();
    // A node issues its sends in list order, so the sends on one link come in start order.
    std::vector<double> link_free(links == LinkUse::one_at_a_time ? n * n : 0, 0.0);
    std::vector<std::size_t> pc(n, 0);
    std::vector<double> clock(n, 0.0);
    std::vector<char> blocked(n, 0);
    // For each (message, receiver): the transfer whose send has been issued (non-blocking).
    std::vector<std::size_t> issued(s.messages.size() * n, none);
    Timeline tl;
    tl.transfers.reserve(s.transfer_count());

    auto at = [&](NodeId node) -> const Task* {
        return pc[node] < s.tasks[node].size() ? &s.tasks[node][pc[node]] : nullptr;
    };
    auto waiting_for = [&](NodeId node, Op op, MessageId m, NodeId peer) {
        const Task* t = at(node);
        return blocked[node] && t && t->op == op && t->message == m && t->peer == peer;
    };

    std::deque<NodeId> ready;
    for (NodeId i = 0; i < n; ++i) ready.push_back(i);
    while (!ready.empty()) {
        const NodeId node = ready.front();
        ready.pop_front();
        blocked[node] = 0;
        while (const Task* t = at(node)) {
            const double size = s.messages[t->message].size;
            if (model != ExecModel::blocking) {
                if (t->op == Op::send) {
                    StepTimes st = step(net, model, node, t->peer, size, clock[node], 0.0);
                    if (!link_free.empty() && model == ExecModel::nonblocking) {
                        const double latency = net.wire(node, t->peer, 0);
                        double& free = link_free[node * n + t->peer];
                        free = std::max(st.sender_free, free) + (net.wire(node, t->peer, size) - latency);
                        st.arrival = free + latency;
                    }
                    issued[t->message * n + t->peer] = tl.transfers.size();
                    tl.transfers.push_back({t->message, node, t->peer, st.start, st.sender_free, st.arrival, 0.0});
                    clock[node] = st.sender_free;
                    if (waiting_for(t->peer, Op::recv, t->message, node)) ready.push_back(t->peer);
                } else {
                    const std::size_t k = issued[t->message * n + node];
                    if (k == none) {
                        blocked[node] = 1;
                        break;
                    }
                    Transfer& tr = tl.transfers[k];
                    tr.complete = std::max(tr.arrival, clock[node]) + net.recv_busy(node, size);
                    clock[node] = tr.complete;
                }
                ++pc[node];
                continue;
            }
            // Blocking: sender and receiver meet; both are busy for the whole transfer.
            const NodeId from = t->op == Op::send ? node : t->peer;
            const NodeId to = t->op == Op::send ? t->peer : node;
            const NodeId other = t->peer;
            const Op other_op = t->op == Op::send ? Op::recv : Op::send;
            if (!waiting_for(other, other_op, t->message, node)) {
                blocked[node] = 1;
                break;
            }
            const StepTimes st = step(net, model, from, to, size, clock[from], clock[to]);
            tl.transfers.push_back({t->message, from, to, st.start, st.sender_free, st.arrival, st.complete});
            clock[from] = st.sender_free;
            clock[to] = st.complete;
            ++pc[node];
            ++pc[other];
            blocked[other] = 0;
            ready.push_back(other);
        }
    }
    detail::close_timeline(net, s, pc, tl);
    return tl;
}

Timeline simulate_beside(const Network& net, const Schedule& s, ExecModel model, const std::vector<BackgroundFlow>& beside) {
    const bool flows = s.relay == Relay::cut_through || (model == ExecModel::nonblocking && net.capacities());
    if (beside.empty() || !flows || model != ExecModel::nonblocking) return simulate(net, s, model);
    return simulate_flows(net, s, beside);
}

}  // namespace hetcast
