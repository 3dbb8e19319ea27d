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

/// What shared capacities alone force (docs/model.md): every destination takes m bytes in
/// through its NIC and its disk, the root sends at least m out through its NIC, and a
/// subnet holding a destination but not the root takes m in through its uplink (and the
/// root's subnet sends m out through its own). Holds for any schedule, store-and-forward or
/// pipelined. 0 without capacities.
[[nodiscard]] double capacity_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests,
                                          double m);

/// The bound a single-source push is reported against: the larger of Bhat's eq. (3) and
/// capacity_lower_bound().
[[nodiscard]] double broadcast_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests,
                                           double m);

}  // namespace hetcast
