#include "hetcast/sched/auto.hpp"

#include <limits>
#include <optional>

#include "hetcast/sim/simulate.hpp"

namespace hetcast {

Schedule plan_auto(const Network& net, const PlanRequest& req) {
    std::optional<Schedule> best;
    double best_time = std::numeric_limits<double>::infinity();
    for (const auto& a : algorithms()) {
        if (a.name == "auto" || (a.applies && !a.applies(net, req))) continue;
        Schedule s = a.plan(net, req);
        const double t = simulate(net, s, req.model).completion;
        if (t < best_time) {
            best_time = t;
            best = std::move(s);
        }
    }
    best->algorithm = "auto:" + best->algorithm;
    return std::move(*best);
}

}  // namespace hetcast
