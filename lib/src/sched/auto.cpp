#include "hetcast/sched/auto.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {

namespace {

/// Among near-ties, the plan that loses least if every link is a FIFO depends least on how
/// TCP happens to share them (issue 23: plans that need fine-grained sharing are fragile);
/// where every link is a FIFO, the one that loses least to their lottery (sim/lottery.hpp).
/// It is at most near_tie slower than the least prediction.
constexpr double near_tie = 0.03;

/// The same network with every link end a FIFO: where a plan's flows of different
/// bottlenecks meet, it predicts their loss (docs/model.md, "Sharing on FIFO links").
std::optional<Network> all_fifo(const Network& net) {
    const auto& c = net.capacities();
    if (!c || c->queues == Queues::fifo) return std::nullopt;
    Network out = net;
    Capacities f = *c;
    f.queues = Queues::fifo;
    out.set_capacities(std::move(f));
    return out;
}

/// Beside running flows, the plan best alone is kept unless another is faster beside them by
/// more than this: the others' flows hold every candidate to its share of the same links and
/// the times differ by little (8 pushes at once on two-subnets: with picks made on those
/// differences the makespan was 12-24% longer).
constexpr double beside_margin = 0.10;

/// The index of the least time; among those within near_tie of it, the one whose prediction
/// with every link a FIFO is least (ties to the earlier). Beside running flows (`times`
/// beside them), the pick alone unless one is faster beside them by beside_margin, then
/// among the near ties of that one the one best alone.
std::size_t pick(const Network& net, const PlanRequest& req, const std::vector<const Schedule*>& candidates,
                 const std::vector<double>& times) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < times.size(); ++k) {
        if (times[k] < times[best]) best = k;
    }
    if (!req.beside.empty()) {
        std::vector<double> alone(times.size());
        for (std::size_t k = 0; k < times.size(); ++k) alone[k] = weighed_completion(net, *candidates[k], req.model);
        PlanRequest by_itself = req;
        by_itself.beside.clear();
        const std::size_t first = pick(net, by_itself, candidates, alone);
        if (times[first] <= times[best] * (1 + beside_margin)) return first;
        std::size_t robust = best;
        for (std::size_t k = 0; k < times.size(); ++k) {
            if (times[k] <= times[best] * (1 + near_tie) && alone[k] < alone[robust] * (1 - 1e-9)) robust = k;
        }
        return robust;
    }
    bool tied = false;
    for (std::size_t k = 0; k < times.size(); ++k) tied = tied || (k != best && times[k] <= times[best] * (1 + near_tie));
    if (!tied || req.model != ExecModel::nonblocking) return best;
    const auto fifo = all_fifo(net);
    const bool fifo_hosts = net.capacities() && net.capacities()->queues == Queues::fifo;
    if (!fifo && !fifo_hosts) return best;
    // Where some links are fair: the plan's time were every link a FIFO. Where every link is
    // one already: its time when the relays' feeds behind shared FIFO NICs draw lots.
    const auto what_if = [&](const Schedule& s) {
        if (fifo) return weighed_completion(*fifo, s, req.model, req.beside);
        return lottery_weighed_completion(net, s, req.model, req.beside);
    };
    std::size_t robust = best;
    double robust_time = what_if(*candidates[best]);
    for (std::size_t k = 0; k < times.size(); ++k) {
        if (k == best || times[k] > times[best] * (1 + near_tie)) continue;
        const double t = what_if(*candidates[k]);
        if (t < robust_time * (1 - 1e-9)) {
            robust = k;
            robust_time = t;
        }
    }
    return robust;
}

AutoChoice exhaustive(const Network& net, const PlanRequest& req) {
    std::vector<Schedule> candidates;
    std::vector<double> times;
    std::vector<std::pair<std::string, double>> predicted;
    const auto consider = [&](Schedule s) {
        const double t = weighed_completion(net, s, req.model, req.beside);
        predicted.emplace_back(s.algorithm, t);
        candidates.push_back(std::move(s));
        times.push_back(t);
    };
    const bool cut = cuts_through(net, req);
    for (const auto& a : algorithms()) {
        if (a.name == "auto" || (a.applies && !a.applies(net, req))) continue;
        Schedule s = a.plan(net, req);
        const bool variant = cut && s.relay == Relay::store_and_forward && s.messages.size() == 1;
        Schedule ct = variant ? with_cut_through(net, req, s) : Schedule("", 0, {});
        consider(std::move(s));
        if (variant) {
            ct.algorithm += "+ct";
            consider(std::move(ct));
        }
    }
    std::vector<const Schedule*> views;
    for (const auto& c : candidates) views.push_back(&c);
    Schedule choice = std::move(candidates[pick(net, req, views, times)]);
    choice.algorithm = "auto:" + choice.algorithm;
    return AutoChoice{std::move(choice), std::move(predicted)};
}

/// Planners whose own cost grows past what a plan of this many participants can afford:
/// ECEF-LA and ECEF with relays are O(n³); Bhat's other heuristics need the n × n cost
/// matrix and O(n² log n); the grid-aware ones took a second or more each at 5000 hosts;
/// `pipeline` without subnets to grow its tree in is O(n³).
bool affordable(const Network& net, const std::string& name, std::size_t participants) {
    // O(n³) unless it can grow its tree per subnet.
    if (name == "pipeline") return participants <= pipeline_flat_max || (net.subnets() && net.subnets()->size() > 1);
    if (name == "ecef-la" || name == "ecef-relay" || name == "optimal") return participants <= auto_exhaustive_max;
    if (name == "fef" || name == "ecef" || name == "fnf" || name == "ecef-lat-min" || name == "ecef-lat-max" ||
        name == "bottom-up") {
        return participants <= auto_quadratic_max;
    }
    return true;
}

/// The piece for the winner, by a walk from the piece it was compared at (`known`: its
/// weighed completion with it): up to larger pieces while they stay within piece_tie of the
/// least, down to smaller ones while they improve on it, neither to a piece whose bound
/// (schedule_lower_bound() plus what its pieces cost) is above the least by more than
/// piece_tie. Of those weighed, the largest within piece_tie of the least, like
/// choose_piece(), which weighs them all.
PieceChoice walk_pieces(const Network& net, const Schedule& s, double known, const std::vector<BackgroundFlow>& beside) {
    double largest = 0;
    for (const Message& m : s.messages) largest = std::max(largest, m.size);
    const std::vector<std::uint64_t> pieces = piece_candidates(largest);
    const auto at = std::find(pieces.begin(), pieces.end(), s.piece);
    if (at == pieces.end()) return {s.piece, known};
    std::vector<double> time(pieces.size(), -1);
    const std::size_t start = static_cast<std::size_t>(at - pieces.begin());
    time[start] = known;
    double least = known;
    const auto weigh = [&](std::size_t i) {
        Schedule c = s;
        c.piece = pieces[i];
        if (schedule_lower_bound(net, c) + piece_overhead(net, c) > least * (1 + piece_tie)) return false;
        time[i] = weighed_completion(net, c, ExecModel::nonblocking, beside);
        least = std::min(least, time[i]);
        return true;
    };
    for (std::size_t i = start + 1; i < pieces.size() && weigh(i) && time[i] <= least * (1 + piece_tie); ++i) {
    }
    for (std::size_t i = start; i-- > 0;) {
        const double before = least;
        if (!weigh(i) || time[i] >= before) break;
    }
    PieceChoice best{s.piece, known};
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        if (time[i] >= 0 && time[i] <= least * (1 + piece_tie)) best = {pieces[i], time[i]};  // ascending: the largest near-tie
    }
    return best;
}

/// The piece candidates are compared with: of piece_candidates(), the one nearest to a
/// 256th of the message (on a log scale), about where choose_piece() lands on a site's map
/// between a piece's start-up per hop and the cost of many pieces.
std::uint64_t comparison_piece(double size) {
    std::uint64_t best = 0;
    for (const std::uint64_t p : piece_candidates(size)) {
        if (best == 0 || std::abs(std::log(static_cast<double>(p) * 256 / size)) <
                             std::abs(std::log(static_cast<double>(best) * 256 / size))) {
            best = p;
        }
    }
    return best != 0 ? best : piece_for(size);
}

AutoChoice scaled(const Network& net, const PlanRequest& req) {
    const bool cut = cuts_through(net, req);
    // One piece for every candidate while they are compared; the winner weighs its own.
    PlanRequest fixed = req;
    if (cut && fixed.options.piece == 0) fixed.options.piece = comparison_piece(req.size);
    struct Candidate {
        Schedule s;
        double bound = 0;
    };
    std::vector<Candidate> all;
    const bool bounded = req.model == ExecModel::nonblocking && net.capacities().has_value();
    const auto add = [&](Schedule s) {
        for (const auto& c : all) {
            if (c.s.relay == s.relay && c.s.piece == s.piece && c.s.tasks == s.tasks) return;  // predicts the same
        }
        const double bound = bounded ? schedule_lower_bound(net, s) : 0;
        all.push_back({std::move(s), bound});
    };
    const std::size_t participants = req.dests.size() + 1;
    for (const auto& a : algorithms()) {
        if (a.name == "auto" || !affordable(net, a.name, participants) || (a.applies && !a.applies(net, fixed))) continue;
        Schedule s = a.plan(net, fixed);
        if (cut && s.relay == Relay::store_and_forward && s.messages.size() == 1) {
            Schedule ct = with_cut_through(s, fixed.options.piece);
            ct.algorithm += "+ct";
            add(std::move(s));
            add(std::move(ct));
        } else {
            add(std::move(s));
        }
    }
    // Least bound first: a candidate whose bound is above the best prediction by more than
    // a near tie can neither win nor be a near tie, and is not simulated.
    std::vector<std::size_t> order(all.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return all[a].bound < all[b].bound; });
    std::vector<const Schedule*> views;
    std::vector<double> times;
    std::vector<std::pair<std::string, double>> predicted;
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t k : order) {
        if (all[k].bound > least * (1 + near_tie)) continue;
        const double t = weighed_completion(net, all[k].s, req.model, req.beside);
        views.push_back(&all[k].s);
        times.push_back(t);
        predicted.emplace_back(all[k].s.algorithm, t);
        least = std::min(least, t);
    }
    const std::size_t best = pick(net, req, views, times);
    Schedule choice = *views[best];
    if (choice.relay == Relay::cut_through && req.options.piece == 0) {
        const PieceChoice p = walk_pieces(net, choice, times[best], req.beside);
        choice.piece = p.piece;
        predicted[best].second = p.weighed;
    }
    choice.algorithm = "auto:" + choice.algorithm;
    return AutoChoice{std::move(choice), std::move(predicted)};
}

}  // namespace

AutoChoice plan_auto_explained(const Network& net, const PlanRequest& req, AutoScope scope) {
    if (scope == AutoScope::by_size) {
        scope = req.dests.size() + 1 > auto_exhaustive_max ? AutoScope::scaled : AutoScope::exhaustive;
    }
    return scope == AutoScope::exhaustive ? exhaustive(net, req) : scaled(net, req);
}

Schedule plan_auto(const Network& net, const PlanRequest& req) { return plan_auto_explained(net, req).best; }

}  // namespace hetcast
