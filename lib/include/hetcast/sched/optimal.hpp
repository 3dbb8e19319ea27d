#pragma once
/// Exact minimum completion time by branch and bound (Bhat §4.2), among the root and
/// the destinations only.
#include "hetcast/sched/plan.hpp"

namespace hetcast {

inline constexpr std::size_t optimal_max_participants = 10;

/// Throws InputError when the request has more than optimal_max_participants participants.
[[nodiscard]] Schedule plan_optimal(const Network& net, const PlanRequest& req);

}  // namespace hetcast
