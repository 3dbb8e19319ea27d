#pragma once
/// Khuller, Kim, Wan, "Broadcasting on Networks of Workstations": Largest Cluster First and
/// its variants for bounded global capacity and the postal model.
///
/// The clusters are the network's subnet map (subnet_map). Decisions use only the cluster
/// sizes and the 1/C round model: a local transfer takes one round, a global (inter-cluster)
/// one C rounds (lcf_global_rounds). In the blocking and non-blocking models a global transfer
/// keeps its sender busy for C rounds (§2); in the postal model for one round (§6). The output
/// is an ordinary Schedule, so the timeline comes from simulate() on the real network.
///
/// Every cluster is entered once, through one member (its destinations first, the root for
/// the root's cluster), so a broadcast uses exactly k − 1 global transfers. A multicast
/// (destinations other than every other node) runs LCF Multicast (§4): LCF(k') using any
/// node, then one copy into each cluster still missing one that holds destinations, then
/// local broadcasts to the destinations only.
///
/// A planned node never waits: once it has nothing to do it sends nothing more, so on a
/// cluster-model network the simulated timeline is the planned one in all three models, and
/// the degree and matching limits hold on it.
#include <cstddef>

#include "hetcast/sched/plan.hpp"

namespace hetcast {

/// The clusters of `net`: net.subnets() when present, else ECO's partition of
/// eco_edge_costs(net, m) at `tolerance` (map/eco.hpp).
[[nodiscard]] Subnets subnet_map(const Network& net, double tolerance, double m);

/// C of the 1/C model for m-byte messages: the median inter-cluster transfer time over the
/// median intra-cluster one, rounded up, at least 1. The medians are over O(N) pairs: each
/// node and the next member of its cluster (cyclically), and each node and the member of the
/// same rank (modulo its size) of the next cluster. Exact for Network::clusters (global/local).
/// 1 when there is a single cluster or only singletons; capped at 2^20 when local is free.
[[nodiscard]] std::size_t lcf_global_rounds(const Network& net, const Subnets& clusters, double m);

/// §3 Largest Cluster First with the footnote's interruption: when the free holders are at
/// least as many as the clusters not yet reached, they reach them all at once. A holder sends
/// globally, to the largest cluster not yet reached, once its cluster has no member left to
/// serve. Multicast: §4.
[[nodiscard]] Schedule plan_lcf(const Network& net, const PlanRequest& req);

/// §5.1–5.2 bounded degree: d_i = req.options.degrees[i] for the i-th cluster of subnet_map
/// when that list is given, else req.options.degree for every cluster. LCF (Multicast) on
/// the first min(n_i, d_i) members of each cluster (destinations first, §5.2), then local
/// broadcasts to the rest. At most d_i transfers into or out of cluster i at a time.
/// Throws InputError for a degree of 0 or a list whose length is not the number of clusters.
[[nodiscard]] Schedule plan_lcf_degree(const Network& net, const PlanRequest& req);

/// §5.3–5.4 bounded size matching, B = req.options.matching: LCF(B), then B inter-cluster
/// transfers at a time until every cluster (holding destinations) has a copy, with local
/// broadcasts meanwhile. At most B inter-cluster transfers at a time. Throws InputError for B = 0.
[[nodiscard]] Schedule plan_lcf_matching(const Network& net, const PlanRequest& req);

/// §6.2 Interleaved LCF: every holder alternates a local transfer and a global transfer to
/// the largest cluster not yet reached, skipping a step that has nothing to do. A multicast
/// reaches only the clusters holding destinations and informs only destinations.
[[nodiscard]] Schedule plan_lcf_interleaved(const Network& net, const PlanRequest& req);

}  // namespace hetcast
