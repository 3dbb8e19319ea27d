#pragma once
/// Grid-unaware baselines over the ranked participants.
#include "hetcast/sched/plan.hpp"

namespace hetcast {

/// The root sends to every destination itself, in rank order (ECO/MagPIe baseline).
[[nodiscard]] Schedule plan_flat(const Network& net, const PlanRequest& req);

/// Binomial tree over ranks (MPI's default): in round k rank r < 2^k sends to rank r + 2^k.
/// Each node sends to its children in round order, as soon as it is free.
[[nodiscard]] Schedule plan_binomial(const Network& net, const PlanRequest& req);

}  // namespace hetcast
