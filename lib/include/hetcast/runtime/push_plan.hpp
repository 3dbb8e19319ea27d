#pragma once
/// A single-source push planned for the runtime: the schedule, the bound it is reported
/// against (by relay mode), what `auto` weighed, and the steady-state throughput bound.
#include <cstdint>
#include <string>

#include "hetcast/runtime/job.hpp"
#include "hetcast/sched/plan.hpp"

namespace hetcast {

/// A JobSpec for `req` with algorithm `algo` ("auto" included), without inputs. A plan that
/// cuts through uses `piece` bytes per piece when given, and is weighed with it (0: the
/// planner's choose_piece(), sched/pipeline.hpp). Throws
/// InputError for an unknown algorithm, one that cannot plan the request, or a piece size
/// out of [min_piece, max_piece] or that cuts the message into more than max_pieces.
[[nodiscard]] JobSpec plan_push(const Network& net, const PlanRequest& req, const std::string& algo,
                                std::uint64_t piece = 0);

}  // namespace hetcast
