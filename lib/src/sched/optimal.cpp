// Bhat, Raghavendra, Prasanna §4.2: the optimal single-source schedule by branch and bound,
// among the root and the destinations only.
//
// A schedule is a tree over the participants plus each sender's child order; every send
// starts as soon as its sender is free (a receiver is idle until it receives, so waiting
// never helps). The search builds the transfers in start-time order: at each step the open
// holder with the smallest ready time either sends next to a node of B or closes (sends
// nothing more), which generates every such schedule exactly once.
#include "hetcast/sched/optimal.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/sched/bhat.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr std::size_t max_p = optimal_max_participants;
using Mask = std::uint32_t;
using Times = std::array<double, max_p>;

constexpr Mask bit(std::size_t i) { return Mask{1} << i; }

struct Move {
    std::uint8_t from = 0;
    std::uint8_t to = 0;
};

class Search {
public:
    Search(const Network& net, const PlanRequest& req, double upper)
        : net_(net), req_(req), best_(upper) {
        // Local indices follow node order, so ties go to the lower node index whatever the
        // order of req.dests.
        node_.push_back(req.root);
        node_.insert(node_.end(), req.dests.begin(), req.dests.end());
        std::sort(node_.begin() + 1, node_.end());
        p_ = node_.size();
        for (std::size_t a = 0; a < p_; ++a) {
            for (std::size_t b = 0; b < p_; ++b) {
                if (a == b) continue;
                total_[a][b] = net.time(node_[a], node_[b], req.size);
                send_[a][b] = net.send_busy(node_[a], node_[b], req.size);
                wire_[a][b] = net.wire(node_[a], node_[b], req.size);
            }
            recv_[a] = net.recv_busy(node_[a], req.size);
        }
    }

    /// Looks for a schedule strictly faster than the upper bound; true when one was found.
    bool run() {
        ready_.fill(0.0);
        Times deadline;
        deadline.fill(inf);
        const Mask todo = (bit(p_) - 1) & ~bit(0);
        dfs(bit(0), todo, 0.0, deadline);
        return found_;
    }

    [[nodiscard]] double best() const { return best_; }

    [[nodiscard]] Schedule schedule() const {
        Schedule s("optimal", net_.size(), {Message{req_.root, req_.size, req_.dests}});
        for (const Move& m : best_path_) s.add_transfer(0, node_[m.from], node_[m.to]);
        return s;
    }

private:
    // The real times of a transfer, exactly as simulate() computes them: the receiver
    // has done nothing before its only receive.
    [[nodiscard]] StepTimes go(std::size_t from, std::size_t to, double ready) const {
        return step(net_, req_.model, node_[from], node_[to], req_.size, ready, 0.0);
    }

    // step()'s completion of from→to sent at `ready`, with the same roundings, so a bound
    // built from it never exceeds a real completion time. The non-blocking and postal
    // models complete alike; they differ only in when the sender is free.
    [[nodiscard]] double complete_from(std::size_t from, std::size_t to, double ready) const {
        if (req_.model == ExecModel::blocking) return ready + total_[from][to];
        return ready + send_[from][to] + wire_[from][to] + recv_[to];
    }

    // False when no completion of this state beats best_ or meets every deadline.
    // Each node j of B completes no earlier than its shortest path from an open holder
    // through nodes of B (closed holders send nothing more); this holds in every model.
    [[nodiscard]] bool promising(Mask open, Mask todo, const Times& deadline) const {
        Times dist;
        for (std::size_t j = 0; j < p_; ++j) {
            if (!(todo & bit(j))) continue;
            double d = inf;
            for (std::size_t i = 0; i < p_; ++i) {
                if (open & bit(i)) d = std::min(d, complete_from(i, j, ready_[i]));
            }
            dist[j] = d;
        }
        for (Mask left = todo; left != 0;) {
            std::size_t j = p_;
            for (std::size_t k = 0; k < p_; ++k) {
                if ((left & bit(k)) && (j == p_ || dist[k] < dist[j])) j = k;
            }
            if (dist[j] >= best_ || dist[j] >= deadline[j]) return false;
            left &= ~bit(j);
            for (std::size_t k = 0; k < p_; ++k) {
                if (left & bit(k)) dist[k] = std::min(dist[k], complete_from(j, k, dist[j]));
            }
        }
        return true;
    }

    void dfs(Mask open, Mask todo, double made, const Times& deadline) {
        if (todo == 0) {
            if (made < best_) {
                best_ = made;
                best_path_ = path_;
                found_ = true;
            }
            return;
        }
        if (!promising(open, todo, deadline)) return;

        std::size_t h = p_;
        for (std::size_t i = 0; i < p_; ++i) {
            if ((open & bit(i)) && (h == p_ || ready_[i] < ready_[h])) h = i;
        }
        const double r = ready_[h];

        struct Child {
            double complete;
            double sender_free;
            std::size_t to;
        };
        std::array<Child, max_p> kids;
        std::size_t n = 0;
        Times reach;  // completion of h→j now, for every j in B
        for (std::size_t j = 0; j < p_; ++j) {
            if (!(todo & bit(j))) continue;
            const StepTimes t = go(h, j, r);
            reach[j] = t.complete;
            if (t.complete >= deadline[j]) continue;
            // Best first: insertion by completion time (ties keep the lower index first).
            std::size_t k = n++;
            for (; k > 0 && kids[k - 1].complete > t.complete; --k) kids[k] = kids[k - 1];
            kids[k] = {t.complete, t.sender_free, j};
        }
        for (std::size_t k = 0; k < n; ++k) {
            const Child& c = kids[k];
            if (std::max(made, c.complete) >= best_) break;
            ready_[h] = c.sender_free;
            ready_[c.to] = c.complete;
            path_.push_back({static_cast<std::uint8_t>(h), static_cast<std::uint8_t>(c.to)});
            dfs(open | bit(c.to), todo & ~bit(c.to), std::max(made, c.complete), deadline);
            path_.pop_back();
            ready_[h] = r;
        }

        // h closes. A schedule in which some j of B then completes no earlier than h could
        // have delivered it now is no better than the same schedule with h→j appended to h
        // (and dropped from j's old sender), which the send branches above enumerate.
        if (open == bit(h)) return;
        Times d = deadline;
        for (std::size_t j = 0; j < p_; ++j) {
            if (todo & bit(j)) d[j] = std::min(d[j], reach[j]);
        }
        dfs(open & ~bit(h), todo, made, d);
    }

    const Network& net_;
    const PlanRequest& req_;
    std::vector<NodeId> node_;  // local index → node id; 0 is the root
    std::size_t p_ = 0;
    std::array<Times, max_p> total_{};
    std::array<Times, max_p> send_{};
    std::array<Times, max_p> wire_{};
    Times recv_{};
    Times ready_{};
    std::vector<Move> path_;
    std::vector<Move> best_path_;
    double best_;
    bool found_ = false;
};

}  // namespace

Schedule plan_optimal(const Network& net, const PlanRequest& req) {
    const std::size_t participants = req.dests.size() + 1;
    if (participants > optimal_max_participants) {
        throw InputError("optimal: " + std::to_string(participants) + " participants, at most " +
                         std::to_string(optimal_max_participants) + " (use ecef-la or another heuristic)");
    }
    if (req.dests.empty()) return Schedule("optimal", net.size(), {Message{req.root, req.size, req.dests}});

    // The best heuristic is the first upper bound; the search only looks for better.
    std::optional<Schedule> start;
    double upper = inf;
    for (auto plan : {plan_ecef, plan_ecef_la, plan_fef}) {
        Schedule s = plan(net, req);
        const double c = simulate(net, s, req.model).completion;
        if (c < upper) {
            upper = c;
            start = std::move(s);
        }
    }
    Search search(net, req, upper);
    if (search.run()) return search.schedule();
    start->algorithm = "optimal";
    return std::move(*start);
}

}  // namespace hetcast
