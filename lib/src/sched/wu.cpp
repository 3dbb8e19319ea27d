// Wu, Yeh, Liu, "Scheduling Multiple Multicast for Heterogeneous Network of Workstations
// With Non-blocking Message-Passing", §4: FEF and ECF extended to several sources (§4.1,
// §4.2), Work Racing (§4.3) and Work Racing Preemptive (§4.4).
#include "hetcast/sched/wu.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <tuple>

#include "hetcast/error.hpp"
#include "hetcast/sched/exchange.hpp"
#include "hetcast/sim/exec_model.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// S_j(l_k), the wire time and R_i(l_k) of every message, tabulated once per distinct size,
// receiver-major so that a receiver's candidate senders are adjacent: the greedy loops read
// them O(N^3) times. Past a memory budget they are computed on demand.
class Costs {
public:
    Costs(const Network& net, const std::vector<Message>& msgs) : net_(net), n_(net.size()) {
        std::map<double, std::size_t> index;
        std::vector<std::size_t> which;
        for (const Message& m : msgs) {
            size_.push_back(m.size);
            which.push_back(index.try_emplace(m.size, index.size()).first->second);
        }
        if (index.size() * n_ * n_ > budget) {
            table_.assign(msgs.size(), nullptr);
            return;
        }
        tables_.resize(index.size());
        for (const auto& [m, t] : index) fill(tables_[t], m);
        for (std::size_t t : which) table_.push_back(&tables_[t]);
    }

    [[nodiscard]] double send(MessageId k, NodeId j, NodeId i) const {
        const Table* t = table_[k];
        return t ? t->send[i * n_ + j] : net_.send_busy(j, i, size_[k]);
    }
    [[nodiscard]] double wire(MessageId k, NodeId j, NodeId i) const {
        const Table* t = table_[k];
        return t ? t->wire[i * n_ + j] : net_.wire(j, i, size_[k]);
    }
    [[nodiscard]] double recv(MessageId k, NodeId i) const {
        const Table* t = table_[k];
        return t ? t->recv[i] : net_.recv_busy(i, size_[k]);
    }

private:
    struct Table {
        std::vector<double> send, wire, recv;
    };
    static constexpr std::size_t budget = (std::size_t{64} << 20) / (2 * sizeof(double));  // 64 MiB

    void fill(Table& t, double m) const {
        t.send.resize(n_ * n_);
        t.wire.resize(n_ * n_);
        t.recv.resize(n_);
        for (NodeId i = 0; i < n_; ++i) {
            t.recv[i] = net_.recv_busy(i, m);
            for (NodeId j = 0; j < n_; ++j) {
                if (i == j) continue;
                t.send[i * n_ + j] = net_.send_busy(j, i, m);
                t.wire[i * n_ + j] = net_.wire(j, i, m);
            }
        }
    }

    const Network& net_;
    std::size_t n_;
    std::vector<double> size_;
    std::vector<Table> tables_;
    std::vector<const Table*> table_;
};

// Every node's task list with its simulated times (Wu §3's TaskList_i). Appending a
// transfer moves no earlier time; neither does a send placed by send_slot (§4.4).
class Lists {
public:
    struct Slot {
        std::size_t pos = 0;
        double start = 0;
    };
    struct Times {
        double arrival = 0;
        double complete = 0;
    };

    Lists(const char* algo, const Network& net, const PatternRequest& req, const Costs& costs)
        : net_(net), req_(req), costs_(costs), n_(net.size()), sched_(algo, net.size(), req.messages),
          end_(n_), arrival_(n_), tail_(n_, 0), idle_(n_, -inf), recv_pos_(req.messages.size() * n_, 0) {}

    /// Avail_v of §4: when v has run its whole list (WRP's receive available time).
    [[nodiscard]] double ready(NodeId v) const { return end_[v].empty() ? 0.0 : end_[v].back(); }
    [[nodiscard]] Slot append_slot(NodeId j) const { return {end_[j].size(), ready(j)}; }

    /// §4.4's send available time of j for message k: the first place in j's list after its
    /// last send (rule 1) and after its receive of k (rule 2), before a receive whose
    /// completion a send busy for `busy` does not delay (rule 3); else the end of the list.
    /// Only receives follow j's last send, so a send placed there moves no other time.
    [[nodiscard]] Slot send_slot(MessageId k, NodeId j, double busy) const {
        // No receive after the last send waits long enough (up to rounding of the idle time).
        if (busy > idle_[j] + ready(j) * 1e-15) return append_slot(j);
        const auto& end = end_[j];
        std::size_t p = tail_[j];
        if (req_.messages[k].source != j) p = std::max(p, recv_pos_[k * n_ + j] + 1);
        for (; p < end.size(); ++p) {
            const double start = p == 0 ? 0.0 : end[p - 1];
            if (start + busy <= std::max(arrival_[j][p], start)) return {p, start};
        }
        return append_slot(j);
    }

    /// k: j→i with j sending at `send_at` and i receiving after its last task, in the
    /// arithmetic of step(), so that the estimate is the simulated time to the bit.
    [[nodiscard]] Times estimate(MessageId k, NodeId j, NodeId i, double send_at) const {
        const double s = costs_.send(k, j, i);
        const double x = costs_.wire(k, j, i);
        const double r = costs_.recv(k, i);
        const double recv_at = ready(i);
        if (req_.model == ExecModel::blocking) {
            const double c = std::max(send_at, recv_at) + (s + x + r);
            return {c, c};
        }
        const double a = send_at + s + x;
        return {a, std::max(a, recv_at) + r};
    }

    /// Puts k: j→i's send at `slot` in j's list and appends its receive to i's list.
    void commit(MessageId k, NodeId j, NodeId i, Slot slot) {
        const StepTimes t = step(net_, req_.model, j, i, req_.messages[k].size, slot.start, ready(i));
        auto& list = sched_.tasks[j];
        const auto at = static_cast<std::ptrdiff_t>(slot.pos);
        list.insert(list.begin() + at, Task{Op::send, k, i});
        end_[j].insert(end_[j].begin() + at, t.sender_free);
        arrival_[j].insert(arrival_[j].begin() + at, 0.0);
        for (std::size_t q = slot.pos + 1; q < list.size(); ++q) ++recv_pos_[list[q].message * n_ + j];
        tail_[j] = slot.pos + 1;
        idle_[j] = -inf;
        for (std::size_t q = tail_[j]; q < list.size(); ++q) idle_[j] = std::max(idle_[j], idle(j, q));
        sched_.tasks[i].push_back({Op::recv, k, j});
        end_[i].push_back(t.complete);
        arrival_[i].push_back(t.arrival);
        recv_pos_[k * n_ + i] = end_[i].size() - 1;
        idle_[i] = std::max(idle_[i], idle(i, end_[i].size() - 1));
    }

    Schedule take() { return std::move(sched_); }

private:
    // How long v's receive at q waits for its message after v reaches it.
    [[nodiscard]] double idle(NodeId v, std::size_t q) const {
        const double start = q == 0 ? 0.0 : end_[v][q - 1];
        return std::max(arrival_[v][q], start) - start;
    }

    const Network& net_;
    const PatternRequest& req_;
    const Costs& costs_;
    std::size_t n_;
    Schedule sched_;
    std::vector<std::vector<double>> end_;      ///< per node and task: when the task is done
    std::vector<std::vector<double>> arrival_;  ///< per node and receive: when its message is in
    std::vector<std::size_t> tail_;             ///< per node: first task after its last send
    std::vector<double> idle_;                  ///< per node: the longest idle() after its last send
    std::vector<std::size_t> recv_pos_;         ///< [message * n + node]: where node receives it
};

// A candidate transfer, ordered by its key (edge weight or completion), then the earlier
// arrival, then the lower sender, receiver and message.
struct Pick {
    double key = inf;
    double arrival = inf;
    NodeId from = 0;
    NodeId to = 0;
    MessageId message = 0;
    [[nodiscard]] auto operator<=>(const Pick& o) const {
        return std::tie(key, arrival, from, to, message) <=> std::tie(o.key, o.arrival, o.from, o.to, o.message);
    }
    [[nodiscard]] bool operator==(const Pick&) const = default;
};

// §4.1 and §4.2 share one loop: the least pick over every message k, holder j ∈ A_k and
// destination i ∈ B_k. Per (k, i) the best pick over the holders is kept in a heap as a lower
// bound: a transfer j→i only raises the times of j and i, so a pick computed earlier is at
// most its sender's current value, which is at most every other holder's. A popped pick whose
// sender's or receiver's time has moved since is evaluated again and pushed back; a fresh one
// is the least. A new holder is offered to its message's destinations at once.
template <class Key>
Schedule edge_greedy(const char* algo, const Network& net, const PatternRequest& req, bool timed, Key key) {
    check_pattern(net, req);
    const Costs costs(net, req.messages);
    Lists lists(algo, net, req, costs);
    const std::size_t n = net.size();
    const std::size_t msgs = req.messages.size();
    std::vector<std::vector<NodeId>> holders(msgs);
    std::vector<std::vector<NodeId>> left(msgs);
    std::vector<Pick> current(msgs * n);
    std::vector<std::uint32_t> moved(n, 0);  // how often a node's time has changed
    std::vector<std::uint32_t> seen_from(msgs * n, 0);
    std::vector<std::uint32_t> seen_to(msgs * n, 0);
    std::priority_queue<Pick, std::vector<Pick>, std::greater<>> heap;
    const auto offer = [&](const Pick& p) {
        const std::size_t e = p.message * n + p.to;
        current[e] = p;
        seen_from[e] = moved[p.from];
        seen_to[e] = moved[p.to];
        heap.push(p);
    };
    const auto search = [&](MessageId k, NodeId i) {
        Pick b;
        for (NodeId j : holders[k]) b = std::min(b, key(lists, costs, k, j, i));
        offer(b);
    };
    std::size_t total = 0;
    for (MessageId k = 0; k < msgs; ++k) {
        holders[k] = {req.messages[k].source};
        left[k] = req.messages[k].dests;
        total += left[k].size();
        for (NodeId i : left[k]) search(k, i);
    }
    for (std::size_t done = 0; done < total;) {
        const Pick p = heap.top();
        heap.pop();
        const std::size_t e = p.message * n + p.to;
        if (!(p == current[e])) continue;  // superseded, or already sent
        if (seen_from[e] != moved[p.from] || (seen_to[e] != moved[p.to] && req.model == ExecModel::blocking)) {
            search(p.message, p.to);
            continue;
        }
        if (seen_to[e] != moved[p.to]) {
            // Non-blocking: the receiver's time enters as max(arrival, ready) for every
            // holder alike, so the holder with the least (arrival, index) stays the best.
            offer(key(lists, costs, p.message, p.from, p.to));
            continue;
        }
        const MessageId k = p.message;
        lists.commit(k, p.from, p.to, lists.append_slot(p.from));
        current[e].key = -inf;
        ++done;
        if (timed) {
            ++moved[p.from];
            ++moved[p.to];
        }
        holders[k].push_back(p.to);
        std::erase(left[k], p.to);
        for (NodeId i : left[k]) {
            const Pick c = key(lists, costs, k, p.to, i);
            if (c < current[k * n + i]) offer(c);
        }
    }
    return lists.take();
}

struct Decision {
    MessageId message;
    NodeId from;
    NodeId to;
};

// §4.3 (WR) and §4.4 (WRP when `preempt`). Step 1: the node with pending messages and the
// least virtual time W receives next (ties: the faster receiver, then the lower index).
// Step 2: among its pending messages SR_i and their holders A_k, the transfer completing
// first; WRP times a holder's send at its send available time instead of its list's end.
std::vector<Decision> work_racing(Lists& lists, const Costs& costs, const Network& net, const PatternRequest& req,
                                  bool preempt) {
    const std::size_t n = net.size();
    const std::size_t msgs = req.messages.size();
    std::vector<std::vector<MessageId>> pending(n);
    std::vector<std::vector<NodeId>> holders(msgs);
    std::vector<double> held_at(msgs * n, 0.0);  // W_{s,n} of eq. (6): W of s when it got the message
    std::vector<double> w(n, 0.0);
    double mean = 0;
    std::size_t total = 0;
    for (MessageId k = 0; k < msgs; ++k) {
        const Message& m = req.messages[k];
        holders[k] = {m.source};
        for (NodeId d : m.dests) pending[d].push_back(k);
        total += m.dests.size();
        mean += m.size / static_cast<double>(msgs);
    }
    // "Choose the fastest one" (§4.3 Step 1) is not defined further: the lower receive overhead.
    std::vector<double> speed(n);
    for (NodeId v = 0; v < n; ++v) speed[v] = net.recv_busy(v, mean);

    std::vector<Decision> out;
    out.reserve(total);
    while (out.size() < total) {
        NodeId i = static_cast<NodeId>(n);
        for (NodeId v = 0; v < n; ++v) {
            if (!pending[v].empty() && (i == n || std::tie(w[v], speed[v]) < std::tie(w[i], speed[i]))) i = v;
        }
        Pick best;
        Lists::Slot slot;
        for (MessageId k : pending[i]) {
            for (NodeId j : holders[k]) {
                const Lists::Slot s = preempt ? lists.send_slot(k, j, costs.send(k, j, i)) : lists.append_slot(j);
                const Lists::Times t = lists.estimate(k, j, i, s.start);
                const Pick p{t.complete, t.arrival, j, i, k};
                if (p < best) {
                    best = p;
                    slot = s;
                }
            }
        }
        const MessageId k = best.message;
        const NodeId j = best.from;
        lists.commit(k, j, i, slot);
        // Eqs. (5), (6): the message is in at the sender's virtual time (0 at the source)
        // plus S and the wire time; i takes it off the network after its earlier receives.
        const double arrives = held_at[k * n + j] + costs.send(k, j, i) + costs.wire(k, j, i);
        w[i] = std::max(w[i], arrives) + costs.recv(k, i);
        held_at[k * n + i] = w[i];
        holders[k].push_back(i);
        std::erase(pending[i], k);
        out.push_back({k, j, i});
    }
    return out;
}

}  // namespace

Schedule plan_wu_fef(const Network& net, const PatternRequest& req) {
    // §4.1: the weight of an edge is the point-to-point time, eq. (1).
    return edge_greedy("fef", net, req, false,
                       [](const Lists&, const Costs& c, MessageId k, NodeId j, NodeId i) {
                           return Pick{c.send(k, j, i) + c.wire(k, j, i) + c.recv(k, i), 0.0, j, i, k};
                       });
}

Schedule plan_wu_ecf(const Network& net, const PatternRequest& req) {
    return edge_greedy("ecf", net, req, true, [](const Lists& l, const Costs&, MessageId k, NodeId j, NodeId i) {
        const Lists::Times t = l.estimate(k, j, i, l.ready(j));
        return Pick{t.complete, t.arrival, j, i, k};
    });
}

Schedule plan_wr(const Network& net, const PatternRequest& req) {
    check_pattern(net, req);
    const Costs costs(net, req.messages);
    Lists lists("wr", net, req, costs);
    (void)work_racing(lists, costs, net, req, false);
    return lists.take();
}

// §4.4's greedy picks holders by their preemptive send times, so its W and its order of
// receivers drift away from WR's, and on some patterns it completes later than WR. WR's own
// decisions replayed with the same preemption cannot: by induction over the decisions every
// task ends no later than in WR, since a send's slot starts at most at the end of its
// sender's list, a receive is appended after the end of its receiver's list, and a placed
// send moves no other time. plan_wrp keeps whichever of the two completes first when simulated.
Schedule plan_wrp(const Network& net, const PatternRequest& req) {
    check_pattern(net, req);
    const Costs costs(net, req.messages);
    if (req.model != ExecModel::nonblocking) {
        Lists lists("wrp", net, req, costs);
        (void)work_racing(lists, costs, net, req, false);
        return lists.take();
    }
    Lists greedy("wrp", net, req, costs);
    (void)work_racing(greedy, costs, net, req, true);
    Lists wr("wr", net, req, costs);
    const std::vector<Decision> decisions = work_racing(wr, costs, net, req, false);
    Lists hoisted("wrp", net, req, costs);
    for (const Decision& d : decisions) {
        hoisted.commit(d.message, d.from, d.to, hoisted.send_slot(d.message, d.from, costs.send(d.message, d.from, d.to)));
    }
    Schedule a = greedy.take();
    Schedule b = hoisted.take();
    const double ta = simulate(net, a, req.model).completion;
    const double tb = simulate(net, b, req.model).completion;
    return tb < ta ? b : a;
}

const std::vector<PatternAlgorithm>& pattern_algorithms() {
    static const std::vector<PatternAlgorithm> all = {
        {"fef", "Fastest Edge First over every message (Wu 4.1)", plan_wu_fef},
        {"ecf", "Earliest Completion First over every message (Wu 4.2)", plan_wu_ecf},
        {"wr", "Work Racing: the least virtual time receives next (Wu 4.3)", plan_wr},
        {"wrp", "Work Racing Preemptive: sends fill idle waits for receives (Wu 4.4)", plan_wrp},
        {"exchange", "a tree per message crossing each uplink once, trees sharing NICs and uplinks", plan_exchange},
    };
    return all;
}

const PatternAlgorithm& find_pattern_algorithm(std::string_view name) {
    for (const auto& a : pattern_algorithms()) {
        if (a.name == name) return a;
    }
    // By name only, as the single-source X+ct: exchange already weighs cutting through.
    static const PatternAlgorithm exchange_ct{"exchange+ct", "exchange, cut through", plan_exchange_cut_through};
    if (name == exchange_ct.name) return exchange_ct;
    std::string known;
    for (const auto& a : pattern_algorithms()) known += (known.empty() ? "" : ", ") + a.name;
    throw InputError("unknown pattern algorithm '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace hetcast
