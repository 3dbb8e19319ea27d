#include "hetcast/sched/auto.hpp"

#include <limits>
#include <optional>

#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {

namespace {

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

}  // namespace

AutoChoice plan_auto_explained(const Network& net, const PlanRequest& req) {
    std::vector<Schedule> candidates;
    std::vector<double> times;
    std::vector<std::pair<std::string, double>> predicted;
    const auto consider = [&](Schedule s) {
        const double t = weighed_completion(net, s, req.model);
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
    std::size_t best = 0;
    for (std::size_t k = 1; k < times.size(); ++k) {
        if (times[k] < times[best]) best = k;
    }
    // Among near-ties, the plan that loses least if every link is a FIFO depends least on
    // how TCP happens to share them (issue 23: plans that need fine-grained sharing are
    // fragile). It is at most near_tie slower than the least prediction.
    constexpr double near_tie = 0.03;
    if (const auto fifo = req.model == ExecModel::nonblocking ? all_fifo(net) : std::nullopt) {
        std::size_t robust = best;
        double robust_time = weighed_completion(*fifo, candidates[best], req.model);
        for (std::size_t k = 0; k < times.size(); ++k) {
            if (k == best || times[k] > times[best] * (1 + near_tie)) continue;
            const double t = weighed_completion(*fifo, candidates[k], req.model);
            if (t < robust_time * (1 - 1e-9)) {
                robust = k;
                robust_time = t;
            }
        }
        best = robust;
    }
    Schedule choice = std::move(candidates[best]);
    choice.algorithm = "auto:" + choice.algorithm;
    return AutoChoice{std::move(choice), std::move(predicted)};
}

Schedule plan_auto(const Network& net, const PlanRequest& req) { return plan_auto_explained(net, req).best; }

}  // namespace hetcast
