#pragma once
/// The mixed strategy of paper 004 §6: plan with every applicable algorithm, simulate
/// each under the request's model, keep the least predicted completion time.
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

/// The candidates are every applicable algorithm's schedule as it plans it, each followed,
/// when cuts_through() holds (sched/pipeline.hpp) and the schedule stores and forwards, by
/// the same task lists cut through ("X+ct") with the piece the planner chooses for them
/// (or the request's). Each is weighed with weighed_completion() (simulate() under the
/// request's model, plus what pieces cost beyond it); the least wins, ties to the earlier
/// candidate. On a network with capacities whose links are not all FIFOs (non-blocking
/// model), a candidate within 3% of the least wins instead when its prediction with every
/// link a FIFO is lower: it depends less on how TCP shares them. `optimal` takes part when
/// it applies.
[[nodiscard]] AutoChoice plan_auto_explained(const Network& net, const PlanRequest& req);

/// plan_auto_explained(net, req).best.
[[nodiscard]] Schedule plan_auto(const Network& net, const PlanRequest& req);

}  // namespace hetcast
