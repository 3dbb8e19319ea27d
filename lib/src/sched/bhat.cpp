// Bhat, Raghavendra, Prasanna, "Efficient Collective Communication in Distributed
// Heterogeneous Systems", §4.3: FNF (baseline), FEF, ECEF, ECEF with look-ahead, and the
// relay through the intermediate set I that §4.3 allows and §6 leaves as future work.
#include "hetcast/sched/bhat.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

namespace hetcast {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// The greedy state shared by the heuristics: A (holders and their ready times),
// B (destinations still to reach), and the schedule built so far.
class Greedy {
public:
    Greedy(const char* algo, const Network& net, const PlanRequest& req)
        : net_(net), req_(req), sched_(algo, net.size(), {Message{req.root, req.size, req.dests}}),
          ready_(net.size(), 0.0), holder_(net.size(), 0), in_b_(net.size(), 0),
          local_(net.size(), 0) {
        // Costs among the participants, computed once: the heuristics read them O(N^2) times.
        participants_ = req.dests;
        participants_.push_back(req.root);
        const std::size_t p = participants_.size();
        for (std::size_t k = 0; k < p; ++k) local_[participants_[k]] = static_cast<NodeId>(k);
        cost_.resize(p * p);
        for (std::size_t a = 0; a < p; ++a) {
            for (std::size_t b = 0; b < p; ++b) {
                cost_[a * p + b] = a == b ? 0.0 : net.time(participants_[a], participants_[b], req.size);
            }
        }
        holder_[req.root] = 1;
        holders_.push_back(req.root);
        for (NodeId d : req.dests) in_b_[d] = 1;
        remaining_ = req.dests.size();
    }

    [[nodiscard]] bool done() const { return remaining_ == 0; }
    [[nodiscard]] bool in_b(NodeId j) const { return in_b_[j] != 0; }
    [[nodiscard]] bool holds(NodeId i) const { return holder_[i] != 0; }
    [[nodiscard]] double ready(NodeId i) const { return ready_[i]; }
    [[nodiscard]] const std::vector<NodeId>& holders() const { return holders_; }
    /// time(i→j) between two participants.
    [[nodiscard]] double cost(NodeId i, NodeId j) const {
        return cost_[local_[i] * participants_.size() + local_[j]];
    }
    /// time(i→j) between any two nodes.
    [[nodiscard]] double any_cost(NodeId i, NodeId j) const { return net_.time(i, j, req_.size); }

    /// Completion time of i→j if scheduled now (the receiver has done nothing yet).
    [[nodiscard]] double complete_if(NodeId i, NodeId j) const {
        return step(net_, req_.model, i, j, req_.size, ready_[i], ready_[j]).complete;
    }

    /// Schedules i→j now; j joins A (and leaves B when it is a destination).
    void send(NodeId i, NodeId j) {
        const StepTimes t = step(net_, req_.model, i, j, req_.size, ready_[i], ready_[j]);
        ready_[i] = t.sender_free;
        ready_[j] = t.complete;
        sched_.add_transfer(0, i, j);
        holder_[j] = 1;
        holders_.push_back(j);
        if (in_b_[j]) {
            in_b_[j] = 0;
            --remaining_;
        }
    }

    Schedule take() { return std::move(sched_); }

private:
    const Network& net_;
    const PlanRequest& req_;
    Schedule sched_;
    std::vector<double> ready_;
    std::vector<char> holder_;
    std::vector<char> in_b_;
    std::vector<NodeId> holders_;
    std::vector<NodeId> local_;
    std::vector<NodeId> participants_;
    std::vector<double> cost_;
    std::size_t remaining_ = 0;
};

// The cheapest edge from one node into a shrinking set. It keeps the K cheapest edges
// that were alive at its last scan; since the set only shrinks, the first of them still
// alive is the cheapest alive edge, and the row is scanned again only when all K are gone.
// Ties go to the lower receiver.
class RowCursor {
public:
    RowCursor() = default;
    RowCursor(NodeId from, const std::vector<NodeId>& to) : from_(from), to_(&to) {}

    /// The cheapest edge whose receiver satisfies `alive`, or {inf, 0}.
    template <class Cost, class Alive>
    std::pair<double, NodeId> top(Cost cost, Alive alive) {
        while (true) {
            while (next_ < cand_.size() && !alive(cand_[next_].second)) ++next_;
            if (next_ < cand_.size()) return cand_[next_];
            if (exhausted_) return {inf, 0};
            refill(cost, alive);
        }
    }

private:
    static constexpr std::size_t k = 16;

    template <class Cost, class Alive>
    void refill(Cost cost, Alive alive) {
        cand_.clear();
        next_ = 0;
        std::size_t alive_count = 0;
        for (NodeId j : *to_) {
            if (j == from_ || !alive(j)) continue;
            ++alive_count;
            const std::pair<double, NodeId> e{cost(from_, j), j};
            if (cand_.size() < k) {
                cand_.push_back(e);
                std::push_heap(cand_.begin(), cand_.end());
            } else if (e < cand_.front()) {
                std::pop_heap(cand_.begin(), cand_.end());
                cand_.back() = e;
                std::push_heap(cand_.begin(), cand_.end());
            }
        }
        std::sort_heap(cand_.begin(), cand_.end());
        exhausted_ = alive_count <= k;
    }

    NodeId from_ = 0;
    const std::vector<NodeId>* to_ = nullptr;
    std::vector<std::pair<double, NodeId>> cand_;
    std::size_t next_ = 0;
    bool exhausted_ = false;
};

struct Choice {
    double key = inf;
    NodeId from = 0;
    NodeId to = 0;
    // Lower key first; ties to the lower sender, then the lower receiver.
    [[nodiscard]] bool better_than(const Choice& o) const {
        if (key != o.key) return key < o.key;
        if (from != o.from) return from < o.from;
        return to < o.to;
    }
};

// FEF and ECEF differ only in the key of a sender's cheapest edge (§4.3): the edge
// alone, or the sender's ready time plus the edge.
template <class Key>
Schedule cheapest_edge_first(const char* algo, const Network& net, const PlanRequest& req, Key key) {
    Greedy g(algo, net, req);
    std::vector<RowCursor> out(net.size());
    out[req.root] = RowCursor(req.root, req.dests);
    const auto alive = [&g](NodeId j) { return g.in_b(j); };
    const auto cost = [&g](NodeId i, NodeId j) { return g.cost(i, j); };
    while (!g.done()) {
        Choice best;
        for (NodeId i : g.holders()) {
            const auto [c, j] = out[i].top(cost, alive);
            if (c == inf) continue;
            const Choice here{key(g, i, c), i, j};
            if (here.better_than(best)) best = here;
        }
        g.send(best.from, best.to);
        if (!g.done()) out[best.to] = RowCursor(best.to, req.dests);
    }
    return g.take();
}

}  // namespace

Schedule plan_fnf(const Network& net, const PlanRequest& req) {
    Greedy g("fnf", net, req);
    const std::size_t n = net.size();
    std::vector<double> t(n, 0.0);
    if (n > 1) {
        for (NodeId i = 0; i < n; ++i) {
            double sum = 0;
            for (NodeId k = 0; k < n; ++k) {
                if (k != i) sum += g.any_cost(i, k);
            }
            t[i] = sum / static_cast<double>(n - 1);
        }
    }
    std::vector<NodeId> order = req.dests;
    std::stable_sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
        return t[a] != t[b] ? t[a] < t[b] : a < b;
    });
    for (NodeId j : order) {
        NodeId sender = req.root;
        double best = inf;
        for (NodeId i : g.holders()) {
            const double k = g.ready(i) + t[i];
            if (k < best || (k == best && i < sender)) {
                best = k;
                sender = i;
            }
        }
        g.send(sender, j);
    }
    return g.take();
}

Schedule plan_fef(const Network& net, const PlanRequest& req) {
    return cheapest_edge_first("fef", net, req, [](const Greedy&, NodeId, double c) { return c; });
}

Schedule plan_ecef(const Network& net, const PlanRequest& req) {
    return cheapest_edge_first("ecef", net, req,
                               [](const Greedy& g, NodeId i, double c) { return g.ready(i) + c; });
}

Schedule plan_ecef_la(const Network& net, const PlanRequest& req) {
    Greedy g("ecef-la", net, req);
    // Look-ahead of eq. (9): L_j = min over the other destinations k still in B of C_jk.
    std::vector<RowCursor> ahead(net.size());
    for (NodeId j : req.dests) ahead[j] = RowCursor(j, req.dests);
    std::vector<double> look(net.size(), 0.0);
    const auto cost = [&g](NodeId i, NodeId j) { return g.cost(i, j); };
    const auto alive = [&g](NodeId j) { return g.in_b(j); };
    while (!g.done()) {
        for (NodeId j : req.dests) {
            if (!g.in_b(j)) continue;
            const double l = ahead[j].top(cost, alive).first;
            look[j] = l == inf ? 0.0 : l;
        }
        Choice best;
        for (NodeId i : g.holders()) {
            for (NodeId j : req.dests) {
                if (!g.in_b(j)) continue;
                const Choice here{g.ready(i) + g.cost(i, j) + look[j], i, j};
                if (here.better_than(best)) best = here;
            }
        }
        g.send(best.from, best.to);
    }
    return g.take();
}

Schedule plan_ecef_relay(const Network& net, const PlanRequest& req) {
    Greedy g("ecef-relay", net, req);
    std::vector<NodeId> others;  // the intermediate set I
    std::vector<char> participant(net.size(), 0);
    participant[req.root] = 1;
    for (NodeId d : req.dests) participant[d] = 1;
    for (NodeId k : req.options.avoid) participant.at(k) = 1;
    for (NodeId k = 0; k < net.size(); ++k) {
        if (!participant[k]) others.push_back(k);
    }
    while (!g.done()) {
        Choice direct;
        for (NodeId i : g.holders()) {
            for (NodeId j : req.dests) {
                if (!g.in_b(j)) continue;
                const Choice here{g.complete_if(i, j), i, j};
                if (here.better_than(direct)) direct = here;
            }
        }
        // Best two-hop path i → k → j through a node k of I not yet used.
        Choice relay;
        NodeId via = 0;
        for (NodeId k : others) {
            if (g.holds(k)) continue;
            Choice reach;
            for (NodeId i : g.holders()) {
                const Choice here{g.complete_if(i, k), i, k};
                if (here.better_than(reach)) reach = here;
            }
            if (reach.key == inf) continue;
            for (NodeId j : req.dests) {
                if (!g.in_b(j)) continue;
                // k holds the message at reach.key and then sends at once.
                const double done = step(net, req.model, k, j, req.size, reach.key, 0.0).complete;
                const Choice here{done, reach.from, j};
                if (here.better_than(relay)) {
                    relay = here;
                    via = k;
                }
            }
        }
        if (relay.key < direct.key) {
            g.send(relay.from, via);
            g.send(via, relay.to);
        } else {
            g.send(direct.from, direct.to);
        }
    }
    return g.take();
}

}  // namespace hetcast
