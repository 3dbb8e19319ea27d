#pragma once
/// Lower bounds on the completion time (docs/model.md, "Completion time and lower bound" and
/// "Throughput bound"). Which one holds depends on how relays forward:
///   bhat_lower_bound            store-and-forward only
///   capacity_lower_bound        any schedule
///   pipelined_lower_bound       any schedule, store-and-forward or cut-through
///   broadcast_lower_bound       picks by Relay
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"

namespace hetcast {

/// Earliest reach times from `root` to every node: shortest paths over time(i→j, m)
/// through any node of the network (Bhat §4.1).
[[nodiscard]] std::vector<double> earliest_reach_times(const Network& net, NodeId root, double m);

/// Bhat's eq. (3): the largest earliest reach time over the destinations.
/// Valid in every execution model, but only for store-and-forward relays: it adds up whole
/// transfers along a path, and a cut-through path takes about its slowest hop, not the sum.
[[nodiscard]] double bhat_lower_bound(const Network& net, NodeId root,
                                      const std::vector<NodeId>& dests, double m);

/// What shared capacities alone force (docs/model.md): every destination takes m bytes in
/// through its NIC and its disk, the root sends at least m out through its NIC, and a
/// subnet holding a destination but not the root takes m in through its uplink (and the
/// root's subnet sends m out through its own). Holds for any schedule, store-and-forward or
/// pipelined. 0 without capacities.
[[nodiscard]] double capacity_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests,
                                          double m);

/// A bound that holds for cut-through (pipelined) schedules as well as store-and-forward
/// ones: the largest of
///   - capacity_lower_bound();
///   - per destination d, the least latency sum Σ L_ij of a path root → d plus m over the
///     widest path's bottleneck pair bandwidth: the whole message crosses every hop of d's
///     path at most B_ij fast, and its last byte still has every hop's latency to go;
///   - m / steady_state_throughput() (sim/throughput.hpp).
/// The path term assumes d takes the whole message from one parent, as in every schedule
/// with one Message per push; the other two hold even when a message is split over several
/// trees. Send and receive overheads are left out (they only add). A cost-matrix network has
/// no bytes to pipeline: there it is bhat_lower_bound().
/// `throughput`: steady_state_throughput() when the caller has it already (0: computed here).
[[nodiscard]] double pipelined_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests,
                                           double m, double throughput = 0);

/// pipelined_lower_bound()'s path term alone (no capacities, no throughput LP): per
/// destination, the least latency sum of a path from `root` plus m over the widest path's
/// bottleneck pair bandwidth. Holds for store-and-forward and cut-through schedules in which
/// each destination takes the whole message from one parent.
[[nodiscard]] double path_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests, double m);

/// The bound a single-source push is reported against. Store-and-forward: the larger of
/// Bhat's eq. (3) and capacity_lower_bound(); cut-through: pipelined_lower_bound().
[[nodiscard]] double broadcast_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests,
                                           double m, Relay relay = Relay::store_and_forward, double throughput = 0);

/// A bound on simulate_flows(net, s).completion for this schedule, in O(transfers): the
/// largest of, per finite resource, the bytes its flows to destinations carry over its
/// capacity, and per destination the arrival its relay path forces (each hop at most as
/// fast as the least capacity it crosses, plus its latency; store-and-forward hops add up,
/// cut-through hops cannot end before the previous one). For pruning candidates before
/// simulating them; 0 without capacities.
[[nodiscard]] double schedule_lower_bound(const Network& net, const Schedule& s);

}  // namespace hetcast
