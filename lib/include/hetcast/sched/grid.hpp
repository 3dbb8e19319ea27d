#pragma once
/// Two-level (grid-aware) planners: ECO's scheme (Lowekamp & Beguelin §4, paper 003) and
/// the inter-cluster heuristics of Barchet-Steffenel & Mounié (paper 004 §4–5).
///
/// Every planner here works on a subnet map: net.subnets() when the network has one, else
/// ECO's partition of eco_edge_costs(net, req.size) at req.options.tolerance. Each subnet
/// holding a participant gets one coordinator: the root in its own subnet, elsewhere the
/// destination cheapest to reach from the root (ties → lower id); subnets without
/// destinations are skipped, and nodes that are not destinations are never used. The
/// coordinators first run an inter-subnet schedule (the heuristic, exactly one transfer per
/// coordinator but the root's), then each coordinator, after its last inter-subnet send,
/// broadcasts to the participants of its own subnet.
///
/// T_k, the time to broadcast inside subnet k (paper 004 §3), is net.local_broadcast() of
/// the coordinator when the network gives it (cluster-level networks, a node per cluster),
/// else the simulated completion, under req.model, of the ECEF schedule over the subnet's
/// participants. Except for `eco`, that ECEF schedule is also the subnet's local broadcast.
///
/// pLogP on our cost model (paper 004 §3), for coordinators i, j and message size m:
///   g_ij(m) = send_busy(i, j, m)              the gap before i can send again (non-blocking;
///                                             the blocking model holds i for all of time())
///   L_ij    = wire(i, j, m) + recv_busy(j, m)
/// so g_ij(m) + L_ij = time(i→j, m) under both models, and a sender's ready time RT_i
/// advances as step() says. A cost matrix gives g_ij = C_ij, L_ij = 0.
/// Unless said otherwise, ties go to the lower sender id, then the lower receiver id.
#include "hetcast/sched/plan.hpp"

namespace hetcast {

/// Flat tree (paper 004 §4.1, the ECO/MagPIe baseline): the root sends to every other
/// coordinator itself, in subnet-map order starting after the root's subnet and wrapping.
[[nodiscard]] Schedule plan_flat_tree(const Network& net, const PlanRequest& req);

/// Bhat's ECEF among the coordinators (paper 004 §4.3): minimises RT_i + g_ij + L_ij.
[[nodiscard]] Schedule plan_two_level_ecef(const Network& net, const PlanRequest& req);

/// Bhat's ECEF-LA among the coordinators (paper 004 §4.4):
/// minimises RT_i + g_ij + L_ij + F_j, F_j = min_{k ∈ B, k ≠ j} (g_jk + L_jk).
[[nodiscard]] Schedule plan_two_level_ecef_la(const Network& net, const PlanRequest& req);

/// ECEF-LAt (paper 004 §5.1): minimises RT_i + g_ij + L_ij + F_j with
/// F_j = min_{k ∈ B, k ≠ j} (g_jk + L_jk + T_k), 0 when j is the last of B.
[[nodiscard]] Schedule plan_ecef_lat_min(const Network& net, const PlanRequest& req);

/// ECEF-LAT (paper 004 §5.2): as ECEF-LAt with F_j = max_{k ∈ B, k ≠ j} (g_jk + L_jk + T_k).
/// Every candidate but the slowest subnet carries that subnet's T in its F, so slow subnets
/// go first.
[[nodiscard]] Schedule plan_ecef_lat_max(const Network& net, const PlanRequest& req);

/// BottomUp (paper 004 §5.3), max-min: the receiver is the j ∈ B maximising
/// min_{i ∈ A} (RT_i + g_ij + L_ij) + T_j, its sender the i achieving that minimum.
/// Ties: the lower receiver id; then the lower sender id.
[[nodiscard]] Schedule plan_bottom_up(const Network& net, const PlanRequest& req);

/// ECO (paper 003 §4): the root sends to every other coordinator in flat-tree order; each
/// subnet then runs a k-ary tree, k = req.options.degree, over its participants ranked
/// from the coordinator (wrapping around in node order, ECO Fig. 1d): rank r's children
/// are ranks r·k + 1 … r·k + k, served in rank order. Throws InputError when k is 0.
[[nodiscard]] Schedule plan_eco(const Network& net, const PlanRequest& req);

}  // namespace hetcast
