#pragma once
/// A single-source push planned for the runtime: the schedule, the bound it is reported
/// against (by relay mode), what `auto` weighed, and the steady-state throughput bound.
#include <cstdint>
#include <future>
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

/// plan_push() without the bounds it is reported against (lower_bound and throughput_bound
/// 0): for a caller that computes push_throughput() beside other work, then set_bounds().
[[nodiscard]] JobSpec plan_push_only(const Network& net, const PlanRequest& req, const std::string& algo,
                                     std::uint64_t piece = 0);
/// The steady-state throughput no schedule of `req` beats (0: unknown, without capacities or
/// destinations). An LP: a quarter of a second at 96 hosts, the longest part of planning a push.
[[nodiscard]] double push_throughput(const Network& net, const PlanRequest& req);
/// push_throughput() on a thread of its own (at get() when no thread can be started); `net`
/// must outlive the future.
[[nodiscard]] std::future<double> push_throughput_async(const Network& net, PlanRequest req);
/// The bound a push of `req` is reported against: Bhat's for its relay mode, or what the
/// steady-state `throughput` forces when larger.
[[nodiscard]] double push_lower_bound(const Network& net, const PlanRequest& req, Relay relay, double throughput);
/// Sets spec's throughput_bound to `throughput` and its lower_bound (push_lower_bound()).
void set_bounds(const Network& net, const PlanRequest& req, double throughput, JobSpec& spec);

}  // namespace hetcast
