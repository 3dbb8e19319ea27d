#pragma once
/// Steady-state broadcast throughput on the shared-capacity model (docs/model.md, "Throughput
/// bound"): the best rate at which any schedule — one tree, several trees, store-and-forward
/// or pipelined — can deliver bytes from a root to every destination, and the rate a single
/// pipelined tree reaches.
#include <cstddef>
#include <utility>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"

namespace hetcast {

struct ThroughputOptions {
    /// Let nodes that are neither the root nor a destination relay. Off, only {root} ∪ dests
    /// take part, as in Beaumont et al.'s broadcast.
    bool relays = true;
    /// Above this many LP variables (about 140 hosts) steady_state_throughput() returns
    /// throughput_cut_bound(): past it the cut rounds take seconds to minutes (300 hosts).
    std::size_t max_variables = 20'000;
    /// Rounds of cuts (each a max-flow per destination and a dual simplex) after which
    /// steady_state_throughput() stops with the relaxation it has: still an upper bound on
    /// T*, found in bounded time. Some maps take hundreds of rounds (72 hosts of netlab's
    /// hosts-96: 51 s, the value of round 1 all along), which a push's set-up cannot wait for.
    std::size_t max_cut_rounds = 8;
    /// Solve the LP as written, with every x^k_ij, instead of by cuts: the same optimum, for
    /// tests; past about 20 hosts it takes minutes.
    bool explicit_flows = false;
};

/// The optimal steady-state broadcast throughput T* in bytes/s: Beaumont, Legrand, Marchal
/// & Robert, "Pipelining Broadcasts on Heterogeneous Platforms" (IEEE TPDS 2005), §4's LP,
/// with their one-port constraints replaced by our shared capacities. Variables x^k_ij, the
/// rate of destination k's flow on pair i→j, and n_ij ≥ x^k_ij, what crosses i→j (a byte
/// crosses an edge once and serves every destination behind it); a flow of value T from the
/// root to each k; n_ij ≤ B_ij (one stream per pair); per finite resource of
/// resource_capacities() the n_ij of the pairs whose flow_path() crosses it sum to at most
/// its capacity. Maximises T with GLPK's simplex.
///
/// Solved without the x^k: by max-flow min-cut a flow of value T from the root to k exists
/// iff every cut separating them carries T, so the LP over T and the n_ij alone, with a row
/// T ≤ Σ n over the cut for each cut a max-flow finds violated, has the same optimum (cut
/// generation; the dual simplex re-optimises after each round). One variable per pair plus T
/// instead of one per pair and destination: 50 hosts in well under a second where the full
/// LP needs hours.
///
/// An upper bound on every schedule's delivery rate that opens at most one stream per pair
/// at a time, so m / T* bounds the completion of an m-byte broadcast from below. With every
/// node a destination (or relays off) a set of weighted trees reaches T* (Edmonds' branching
/// theorem, Beaumont et al. §4.2); non-destination relays can make T* unreachable by trees.
///
/// Above `opt.max_variables` (1 + P(P−1) over P nodes taking part; times K destinations with
/// `explicit_flows`) the LP is not built and the result is throughput_cut_bound(): still an
/// upper bound, not the optimum.
/// Infinity when nothing finite limits the rate or `dests` holds no node but the root.
/// Throws InputError on an unknown node, Error when GLPK fails.
[[nodiscard]] double steady_state_throughput(const Network& net, NodeId root, const std::vector<NodeId>& dests,
                                             const ThroughputOptions& opt = {});

/// Cuts any broadcast crosses, each an upper bound on T*: the root's NIC out and pair rates
/// out, every destination's NIC in, disk and pair rates in, the uplink into each subnet with
/// a destination but not the root, and the root subnet's uplink out when a destination is
/// elsewhere. The minimum, in bytes/s; cheap for any size.
[[nodiscard]] double throughput_cut_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests,
                                          const ThroughputOptions& opt = {});

/// A tree edge: parent → child.
using TreeEdge = std::pair<NodeId, NodeId>;

/// Steady-state throughput (bytes/s) of a tree whose relays cut through: every edge carries
/// the whole message at one common rate, so it is the least of capacity / (tree edges
/// crossing it) over the resources of flow_path(), and of the edges' pair bandwidths — the
/// first level of max-min's progressive filling, which every edge is then held to through
/// its parent. Infinity when nothing finite limits it (no edges, or no bandwidths).
[[nodiscard]] double tree_throughput(const Network& net, const std::vector<TreeEdge>& edges);

/// tree_throughput() of the tree a single-message schedule forms. Throws InputError unless
/// `s` has one message whose sends form a tree from its source reaching every destination.
[[nodiscard]] double tree_throughput(const Network& net, const Schedule& s);

}  // namespace hetcast
