#pragma once
/// The mixed strategy of paper 004 §6: plan with every applicable algorithm, simulate
/// each under the request's model, keep the least predicted completion time. Above
/// auto_exhaustive_max participants, only the candidates that scale (AutoScope::scaled).
#include <string>
#include <utility>
#include <vector>

#include "hetcast/sched/plan.hpp"

namespace hetcast {

/// What auto chose and what it weighed.
struct AutoChoice {
    /// The winner; its `algorithm` reads "auto:<name>".
    Schedule best;
    /// Every candidate's name and weighed completion (s), in the order they were tried.
    /// A name "X+ct" is algorithm X's schedule with its relays cutting through.
    std::vector<std::pair<std::string, double>> predicted;
};

/// How many candidates auto weighs.
enum class AutoScope {
    by_size,     ///< exhaustive up to auto_exhaustive_max participants, scaled above
    exhaustive,  ///< every applicable algorithm, every one simulated
    /// Only the planners that afford the request's size (ECEF-LA and ECEF with relays up to
    /// auto_exhaustive_max participants, FEF, ECEF, FNF, ECEF-LAt, ECEF-LAT and BottomUp up
    /// to auto_quadratic_max, `pipeline` above pipeline_flat_max only on a network with
    /// subnets), all
    /// with one piece (piece_for(), or the request's) while compared; task lists equal to
    /// an earlier candidate's are weighed once; candidates are simulated in the order of
    /// their schedule_lower_bound() (sim/lower_bound.hpp) and one whose bound exceeds the
    /// least prediction so far by more than the near-tie margin is not; the winner cut
    /// through then weighs its own piece, walking from that one to larger pieces while they
    /// are near ties and to smaller ones while they improve. `predicted` lists the
    /// simulated ones.
    scaled,
};
inline constexpr std::size_t auto_exhaustive_max = 100;
inline constexpr std::size_t auto_quadratic_max = 2000;

/// The candidates are every applicable algorithm's schedule as it plans it, each followed,
/// when cuts_through() holds (sched/pipeline.hpp) and the schedule stores and forwards, by
/// the same task lists cut through ("X+ct") with the piece the planner chooses for them
/// (or the request's). Each is weighed with weighed_completion() (simulate() under the
/// request's model, beside the running flows of PlanRequest::beside, plus what pieces cost
/// beyond it); the least wins, ties to the earlier
/// candidate. On a network with capacities whose links are not all FIFOs (non-blocking
/// model), a candidate within 3% of the least wins instead when its prediction with every
/// link a FIFO is lower: it depends less on how TCP shares them; where every link is one
/// (capacity.queues: fifo), when it loses less to the FIFOs' lottery (sim/lottery.hpp). With running flows
/// (PlanRequest::beside) the pick alone stays unless another candidate's completion beside
/// them is lower by more than 10%; then, of those within 3% of the least, the one best alone.
/// `optimal` takes part when it applies.
/// Above auto_exhaustive_max participants (AutoScope::by_size), AutoScope::scaled.
[[nodiscard]] AutoChoice plan_auto_explained(const Network& net, const PlanRequest& req,
                                             AutoScope scope = AutoScope::by_size);

/// plan_auto_explained(net, req).best.
[[nodiscard]] Schedule plan_auto(const Network& net, const PlanRequest& req);

}  // namespace hetcast
