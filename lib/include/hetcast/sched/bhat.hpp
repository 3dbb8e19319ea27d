#pragma once
/// Bhat, Raghavendra, Prasanna §4.3: greedy single-source schedulers.
/// "Cost" of an edge is time(i→j, m); "ready" times advance under the request's model.
/// Ties go to the lower sender index, then the lower receiver index.
#include "hetcast/sched/plan.hpp"

namespace hetcast {

/// Banikazemi's Fastest Node First, Bhat's modified baseline: T_i = mean cost from i to
/// every other node; receiver = destination with the lowest T_j, sender = holder with the
/// lowest R_i + T_i; the transfer takes the real cost.
[[nodiscard]] Schedule plan_fnf(const Network& net, const PlanRequest& req);
/// Fastest Edge First: the cheapest edge across the A–B cut.
[[nodiscard]] Schedule plan_fef(const Network& net, const PlanRequest& req);
/// Earliest Completing Edge First: minimises R_i + C_ij (eq. 7).
[[nodiscard]] Schedule plan_ecef(const Network& net, const PlanRequest& req);
/// ECEF with look-ahead: minimises R_i + C_ij + L_j, L_j = min_{k ∈ B, k ≠ j} C_jk (eqs. 8, 9).
[[nodiscard]] Schedule plan_ecef_la(const Network& net, const PlanRequest& req);
/// ECEF that may relay through a node outside the destinations (the set I of §4.3)
/// when that completes a destination earlier.
[[nodiscard]] Schedule plan_ecef_relay(const Network& net, const PlanRequest& req);

}  // namespace hetcast
