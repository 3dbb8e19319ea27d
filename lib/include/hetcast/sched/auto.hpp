#pragma once
/// The mixed strategy of paper 004 §6: plan with every applicable algorithm, simulate
/// each under the request's model, keep the least predicted completion time.
#include "hetcast/sched/plan.hpp"

namespace hetcast {

/// The winning schedule; its `algorithm` reads "auto:<winner>". Ties go to the algorithm
/// listed first in algorithms(). `optimal` takes part when it applies.
[[nodiscard]] Schedule plan_auto(const Network& net, const PlanRequest& req);

}  // namespace hetcast
