#pragma once
/// Pipelined broadcast trees (issue 13 §2, "Schedules for throughput"): relays cut through,
/// forwarding each piece as it arrives, so a large message's completion is about m / T plus
/// a start-up of a piece per hop, where T is the tree's steady-state throughput on the
/// network's shared capacities (docs/model.md, "Cut-through").
#include <cstdint>
#include <utility>
#include <vector>

#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/throughput.hpp"

namespace hetcast {


/// Whether a plan for `req` should cut through: the model is non-blocking (the only one that
/// predicts it), the network has bandwidths, and the message is more than one default_piece
/// (up to one piece, cut-through is store-and-forward) and at most max_pieces of the
/// largest piece.
[[nodiscard]] bool cuts_through(const Network& net, const PlanRequest& req);

/// The same task lists, cut through with `piece` bytes per piece (0: piece_for() of its
/// largest message).
[[nodiscard]] Schedule with_cut_through(Schedule s, std::uint64_t piece = 0);

/// `pipeline`: the greedy single broadcast tree for pipelined throughput of Beaumont,
/// Marchal & Robert (IPDPS 2005), adapted to shared capacities: grow the tree from the root,
/// attaching the participant that keeps tree_throughput() highest, shallower first among
/// equals. Cut-through when cuts_through(), else the same tree store-and-forward.
[[nodiscard]] Schedule plan_pipeline(const Network& net, const PlanRequest& req);

/// `chain`: the blind pipeline in rank order, root → first destination → … → last (what a
/// chain of `socat`s does). Cut-through when cuts_through().
[[nodiscard]] Schedule plan_chain(const Network& net, const PlanRequest& req);

}  // namespace hetcast
