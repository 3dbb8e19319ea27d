#pragma once
/// Wu §3.1: a lower bound on the completion time of a multi-node multicast.
#include "hetcast/model/network.hpp"
#include "hetcast/sched/pattern.hpp"

namespace hetcast {

/// Wu's idealised model: a node receives one message at a time, each taking R_i(l_k) once
/// it is in, but sends in parallel with everything else. With L[k, i] the shortest path
/// from message k's source to destination i over time(·,·, l_k) (earliest_reach_times),
/// each destination's last receive completes no earlier than eq. (2)'s T_r(i, n_i); the
/// bound is the largest over the destinations. Valid for both execution models.
///
/// The receives are ordered by L[k, i] − R_i(l_k), the earliest the message can be in the
/// buffer, not by L[k, i] as printed: the two agree when the sizes are equal, but with
/// mixed sizes the printed earliest-reach-first order can exceed a feasible schedule.
[[nodiscard]] double wu_lower_bound(const Network& net, const PatternRequest& req);

}  // namespace hetcast
