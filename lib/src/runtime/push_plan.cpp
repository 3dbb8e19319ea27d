#include "hetcast/runtime/push_plan.hpp"

#include "hetcast/sched/auto.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/throughput.hpp"

namespace hetcast {

JobSpec plan_push(const Network& net, const PlanRequest& req, const std::string& algo) {
    JobSpec spec;
    spec.network = &net;
    spec.model = req.model;
    if (algo == "auto") {
        AutoChoice choice = plan_auto_explained(net, req);
        spec.schedule = std::move(choice.best);
        spec.candidates = std::move(choice.predicted);
    } else {
        spec.schedule = find_algorithm(algo).plan(net, req);
    }
    spec.lower_bound = broadcast_lower_bound(net, req.root, req.dests, req.size, spec.schedule.relay);
    if (net.capacities() && !req.dests.empty()) spec.throughput_bound = steady_state_throughput(net, req.root, req.dests);
    return spec;
}

}  // namespace hetcast
