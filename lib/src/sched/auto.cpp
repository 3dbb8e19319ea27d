#include "hetcast/sched/auto.hpp"

#include <limits>
#include <optional>

#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {

AutoChoice plan_auto_explained(const Network& net, const PlanRequest& req) {
    std::optional<Schedule> best;
    double best_time = std::numeric_limits<double>::infinity();
    std::vector<std::pair<std::string, double>> predicted;
    const auto consider = [&](Schedule s) {
        const double t = weighed_completion(net, s, req.model);
        predicted.emplace_back(s.algorithm, t);
        if (!best || t < best_time) {
            best_time = t;
            best = std::move(s);
        }
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
    best->algorithm = "auto:" + best->algorithm;
    return AutoChoice{std::move(*best), std::move(predicted)};
}

Schedule plan_auto(const Network& net, const PlanRequest& req) { return plan_auto_explained(net, req).best; }

}  // namespace hetcast
