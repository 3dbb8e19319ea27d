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
/// predicts it), the network has bandwidths, and the message is more than min_planned_piece
/// (up to one piece, cut-through is store-and-forward) and at most max_pieces of the
/// largest piece.
[[nodiscard]] bool cuts_through(const Network& net, const PlanRequest& req);

/// The same task lists, cut through with `piece` bytes per piece (0: piece_for() of its
/// largest message).
[[nodiscard]] Schedule with_cut_through(Schedule s, std::uint64_t piece = 0);

/// What a cut-through schedule's pieces cost that simulate_flows() does not see, in seconds
/// (docs/model.md, "Cut-through"): every piece's digest travels in the plan to every
/// participant from the coordinator (taken to be the first message's source) before
/// anything moves, and on each hop of the deepest relay path a piece is verified, written
/// and read back before it goes on. 0 for a store-and-forward schedule.
[[nodiscard]] double piece_overhead(const Network& net, const Schedule& s);

/// What the planner weighs a schedule by: simulate() under `model` (simulate_beside() with
/// the flows of running jobs `beside`), plus piece_overhead() when it cuts through.
[[nodiscard]] double weighed_completion(const Network& net, const Schedule& s, ExecModel model,
                                        const std::vector<BackgroundFlow>& beside = {});

/// weighed_completion() with lottery_completion() (sim/lottery.hpp) in place of the
/// completion: what the plan takes when relays' feeds behind FIFO host NICs draw lots. The
/// same as weighed_completion() unless the map's host NICs are FIFOs and `s` cuts through.
[[nodiscard]] double lottery_weighed_completion(const Network& net, const Schedule& s, ExecModel model,
                                                const std::vector<BackgroundFlow>& beside = {});

/// The piece sizes weighed for a schedule whose largest message has `size` bytes:
/// min_planned_piece, doubled up to max_cut_through_piece, each cutting it into at most
/// max_pieces, up to the first that holds the whole message. Empty when none fits.
[[nodiscard]] std::vector<std::uint64_t> piece_candidates(double size);

/// The piece for cut-through schedule `s` (its task lists as they are): of
/// piece_candidates(), the one of least weighed_completion(); among those within
/// piece_tie of the least, the largest (fewer digests, frames and wake-ups). Its weighed
/// completion is returned too.
struct PieceChoice {
    std::uint64_t piece = 0;
    double weighed = 0;
};
[[nodiscard]] PieceChoice choose_piece(const Network& net, const Schedule& s);
/// Relative difference in weighed completion under which a larger piece counts as as good.
inline constexpr double piece_tie = 0.002;

/// The same task lists cut through, with `req.options.piece` when it asks for one, else
/// with choose_piece().
[[nodiscard]] Schedule with_cut_through(const Network& net, const PlanRequest& req, Schedule s);

/// `pipeline`: the greedy single broadcast tree for pipelined throughput of Beaumont,
/// Marchal & Robert (IPDPS 2005), adapted to shared capacities: grow the tree from the root,
/// attaching the participant that keeps tree_throughput() highest, shallower first among
/// equals. Cut-through when cuts_through(), else the same tree store-and-forward.
///
/// Above pipeline_flat_max participants on a network with subnets, the tree is grown among
/// one entry host per subnet and then inside each subnet (O(s³ + n·k²), not O(n³)), and the
/// trees are compared by throughput and depth instead of simulated.
///
/// Up to pipeline_flat_max, or on one subnet, of the trees within tree_tie of the least
/// predicted completion the one whose copies land earliest on average (the most slack).
[[nodiscard]] Schedule plan_pipeline(const Network& net, const PlanRequest& req);
inline constexpr std::size_t pipeline_flat_max = 150;
inline constexpr double tree_tie = 0.01;

/// `chain`: the blind pipeline in rank order, root → first destination → … → last (what a
/// chain of `socat`s does). Cut-through when cuts_through().
[[nodiscard]] Schedule plan_chain(const Network& net, const PlanRequest& req);

}  // namespace hetcast
