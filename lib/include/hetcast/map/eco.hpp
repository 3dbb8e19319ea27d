#pragma once
/// ECO's subnet partition (Lowekamp & Beguelin §4.1, Figure 2).
#include "hetcast/model/network.hpp"

namespace hetcast {

inline constexpr double eco_default_tolerance = 0.20;

/// Partitions hosts over a symmetric edge-cost matrix: an edge joins two hosts when it is
/// within `tolerance` of the cheapest edge of each host and of each host's subnet.
/// Asymmetric input is symmetrised by the minimum of both directions. A host that joins
/// nobody is a subnet of its own. Output is deterministic: subnets ordered by their lowest
/// member, members ascending.
[[nodiscard]] Subnets eco_partition(const Matrix& cost, double tolerance = eco_default_tolerance);

/// The matrix ECO partitions for a network: its latency matrix when it has one, else
/// its cost matrix for an m-byte message.
[[nodiscard]] Matrix eco_edge_costs(const Network& net, double m);

}  // namespace hetcast
