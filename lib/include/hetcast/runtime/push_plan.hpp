#pragma once
/// A single-source push planned for the runtime: the schedule, the bound it is reported
/// against (by relay mode), what `auto` weighed, and the steady-state throughput bound.
#include <string>

#include "hetcast/runtime/peer.hpp"
#include "hetcast/sched/plan.hpp"

namespace hetcast {

/// A JobSpec for `req` with algorithm `algo` ("auto" included), without inputs. Throws
/// InputError for an unknown algorithm or one that cannot plan the request.
[[nodiscard]] JobSpec plan_push(const Network& net, const PlanRequest& req, const std::string& algo);

}  // namespace hetcast
