#pragma once
// Shared by the simulators: the static checks of a schedule and the closing of a timeline.
#include <cstddef>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast::detail {

/// Ids in range, every send matched by exactly one receive and back, every destination
/// reached exactly once, nobody relays what it has not received. Throws InfeasibleSchedule.
void validate_schedule(const Network& net, const Schedule& s);

/// Throws InfeasibleSchedule when a node stopped before the end of its list (`pc`); sets
/// the completion (latest complete over the destinations) and sorts the transfers.
void close_timeline(const Network& net, const Schedule& s, const std::vector<std::size_t>& pc, Timeline& tl);

}  // namespace hetcast::detail
