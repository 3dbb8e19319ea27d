#pragma once
/// Lower bounds on the completion time.
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"

namespace hetcast {

/// Earliest reach times from `root` to every node: shortest paths over time(i→j, m)
/// through any node of the network (Bhat §4.1).
[[nodiscard]] std::vector<double> earliest_reach_times(const Network& net, NodeId root, double m);

/// Bhat's eq. (3): the largest earliest reach time over the destinations.
/// Valid for both execution models.
[[nodiscard]] double bhat_lower_bound(const Network& net, NodeId root,
                                      const std::vector<NodeId>& dests, double m);

}  // namespace hetcast
