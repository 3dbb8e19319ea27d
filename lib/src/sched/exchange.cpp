#include "hetcast/sched/exchange.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "hetcast/error.hpp"
#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sim/pattern_bound.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {

namespace {

/// `members` reached from `root` through a k-ary tree in breadth-first order.
void spread(Schedule& s, MessageId m, NodeId root, const std::vector<NodeId>& members, std::size_t k) {
    std::vector<NodeId> senders{root};
    std::size_t next_sender = 0, fed = 0;
    for (NodeId v : members) {
        s.add_transfer(m, senders[next_sender], v);
        senders.push_back(v);
        if (++fed == k) {
            fed = 0;
            ++next_sender;
        }
    }
}

/// `v` rotated left by `by`.
std::vector<NodeId> rotated(std::vector<NodeId> v, std::size_t by) {
    if (!v.empty()) std::rotate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(by % v.size()), v.end());
    return v;
}

/// A host sends "slowly" when its NIC out is below this share of the fastest one's: it
/// should relay nothing. Measured rates of equal NICs differ by a few percent, and ranking
/// by them would make the same few hosts relay every message.
constexpr double slow_sender = 0.8;

/// `group` rotated by `by` (so that messages take turns relaying), its slow senders moved to
/// the end: a k-ary tree's first members relay, the last ones are its leaves.
std::vector<NodeId> relay_order(const Network& net, const std::vector<NodeId>& group, std::size_t by) {
    auto v = rotated(group, by);
    if (const auto& c = net.capacities(); c && !v.empty()) {
        double fastest = 0;
        for (NodeId x : v) fastest = std::max(fastest, c->egress[x]);
        std::stable_partition(v.begin(), v.end(), [&](NodeId x) { return c->egress[x] >= slow_sender * fastest; });
    }
    return v;
}

/// Messages one after another, each through its own tree. Every node's list holds a
/// message's tasks before the next message's, so no list waits on a later message (with
/// `sources_first`, a source's own sends come first).
Schedule build(const Network& net, const PatternRequest& req, std::size_t k, bool sources_first) {
    const std::size_t n = net.size();
    const auto sub = net.subnet_of();
    const std::size_t subnets = net.subnets() ? net.subnets()->size() : 1;
    Schedule s("exchange", n, req.messages);
    std::vector<double> relayed(n, 0);
    for (MessageId m = 0; m < req.messages.size(); ++m) {
        const Message& msg = req.messages[m];
        std::vector<std::vector<NodeId>> in(subnets);
        for (NodeId d : msg.dests) in[sub[d]].push_back(d);
        // A source that sends slower than a destination of its own subnet sends once, to
        // the fastest of them, which roots the tree in its place.
        NodeId root = msg.source;
        auto local = relay_order(net, in[sub[msg.source]], m);
        if (const auto& c = net.capacities();
            c && !local.empty() && c->egress[msg.source] < slow_sender * c->egress[local.front()]) {
            root = local.front();
            local.erase(local.begin());
            s.add_transfer(m, msg.source, root);
        }
        // Other subnets first: their uplink is where the message waits longest.
        for (std::size_t k2 = 0; k2 < subnets; ++k2) {
            if (k2 == sub[msg.source] || in[k2].empty()) continue;
            auto group = relay_order(net, in[k2], m);
            // Of the hosts that do not send slowly, the one that relays least so far.
            const auto fast = net.capacities() ? slow_sender * net.capacities()->egress[group.front()] : 0.0;
            const auto relay = std::min_element(group.begin(), group.end(), [&](NodeId a, NodeId b) {
                const bool fa = !net.capacities() || net.capacities()->egress[a] >= fast;
                const bool fb = !net.capacities() || net.capacities()->egress[b] >= fast;
                return fa != fb ? fa : relayed[a] < relayed[b];
            });
            const NodeId r = *relay;
            group.erase(relay);
            relayed[r] += msg.size * static_cast<double>(group.size());
            s.add_transfer(m, root, r);
            spread(s, m, r, group, k);
        }
        spread(s, m, root, local, k);
    }
    // A source holds its own messages from the start: it sends them before it waits for
    // anyone else's. Non-blocking sends depend on nothing, so that cannot deadlock; a
    // blocking send waits for its receiver, and two sources sending to each other would.
    for (NodeId v = 0; v < n && sources_first; ++v) {
        std::stable_partition(s.tasks[v].begin(), s.tasks[v].end(), [&](const Task& t) {
            return t.op == Op::send && req.messages[t.message].source == v;
        });
    }
    return s;
}

/// The same transfers, each node's list ordered by when the simulation had each message
/// there: a receive and the sends that relay it at the message's arrival (not when the
/// list got to it), a source's own sends first.
Schedule by_time(const Schedule& s, const Timeline& tl) {
    std::map<std::pair<MessageId, NodeId>, double> arrived;  // (message, node) → arrival
    for (const Transfer& t : tl.transfers) arrived[{t.message, t.to}] = t.arrival;
    Schedule out = s;
    for (NodeId v = 0; v < out.tasks.size(); ++v) {
        auto& list = out.tasks[v];
        const auto key = [&](const Task& t) {
            return s.messages[t.message].source == v ? 0.0 : arrived.at({t.message, v});
        };
        // Stable: a receive stays before the sends of the same message.
        std::stable_sort(list.begin(), list.end(), [&](const Task& a, const Task& b) { return key(a) < key(b); });
    }
    return out;
}

}  // namespace

namespace {

/// The best exchange plan and, when the request can cut through, the best that does.
struct Plans {
    Schedule best;
    std::optional<Schedule> cut_through;
};

Plans plan(const Network& net, const PatternRequest& req) {
    check_pattern(net, req);
    Schedule best("exchange", net.size(), req.messages);
    std::optional<Schedule> best_ct;
    double best_time = std::numeric_limits<double>::infinity(), best_ct_time = best_time;
    // What a schedule is weighed by: its simulated completion, plus what its pieces cost
    // when it cuts through (sched/pipeline.hpp).
    const auto consider = [&](const Schedule& s) {
        try {
            Timeline tl = simulate(net, s, req.model);
            const bool ct = s.relay == Relay::cut_through;
            const double t = ct ? weighed_completion(net, s, req.model) : tl.completion;
            if (t < best_time) {
                best_time = t;
                best = s;
            }
            if (ct && t < best_ct_time) {
                best_ct_time = t;
                best_ct = s;
            }
            return std::optional<Timeline>(std::move(tl));
        } catch (const InfeasibleSchedule&) {
            return std::optional<Timeline>();  // a reordering that deadlocks is not kept
        }
    };
    // A few rounds of reordering: each lets receives that arrived early go first, which
    // moves other arrivals earlier in turn. A reordering that would deadlock is dropped;
    // the plain message-by-message lists never do.
    constexpr int rounds = 4;
    const auto reorder = [&](Schedule s) {
        auto tl = consider(s);
        for (int r = 0; r < rounds && tl; ++r) {
            s = by_time(s, *tl);
            tl = consider(s);
        }
    };
    const bool nonblocking = req.model == ExecModel::nonblocking;
    for (std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{4}, net.size()}) {
        if (nonblocking) {
            reorder(build(net, req, k, true));
        } else {
            consider(build(net, req, k, false));
        }
    }
    if (best_time == std::numeric_limits<double>::infinity()) return {build(net, req, 1, false), std::nullopt};
    // The same trees cut through: a relay passes each piece on as it is verified, so a
    // message crosses its tree at about its slowest hop instead of the sum of them.
    double largest = 0;
    for (const Message& m : req.messages) largest = std::max(largest, m.size);
    if (pattern_may_cut_through(net, req) && !piece_candidates(largest).empty()) {
        Schedule ct = with_cut_through(best);
        ct.piece = choose_piece(net, ct).piece;
        reorder(std::move(ct));
    }
    return {std::move(best), std::move(best_ct)};
}

}  // namespace

Schedule plan_exchange(const Network& net, const PatternRequest& req) { return plan(net, req).best; }

Schedule plan_exchange_cut_through(const Network& net, const PatternRequest& req) {
    Plans p = plan(net, req);
    if (!p.cut_through) {
        throw InputError("'exchange+ct': this pattern does not cut through (it needs the non-blocking model, a "
                         "network with bandwidths and a message over " + std::to_string(min_planned_piece) + " bytes)");
    }
    p.cut_through->algorithm = "exchange+ct";
    return *p.cut_through;
}

}  // namespace hetcast
