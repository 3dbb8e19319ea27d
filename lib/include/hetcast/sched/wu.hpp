#pragma once
/// Wu, Yeh, Liu: multi-node multicast on heterogeneous clusters (§4). Each planner keeps,
/// per message k, the holders A_k (its source, then the destinations it has reached) and
/// plans transfers only among the source and destinations of each message.
///
/// Times follow the request's execution model through step(), so a planner's estimates are
/// exactly the simulated timeline; the paper's model is ExecModel::nonblocking (§2).
/// Ties go to the earlier arrival, then the lower sender, receiver and message index.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/schedule.hpp"

namespace hetcast {

/// §4.1, Fastest Edge First for several sources: the cheapest edge time(j→i, l_k) with
/// j ∈ A_k and i a destination of k not yet reached. (Named apart from Bhat's plan_fef.)
[[nodiscard]] Schedule plan_wu_fef(const Network& net, const PatternRequest& req);
/// §4.2, Earliest Completion First: the transfer, over every message, that completes first.
[[nodiscard]] Schedule plan_wu_ecf(const Network& net, const PatternRequest& req);
/// §4.3, Work Racing: the destination with the least virtual time W (eqs. 5, 6) receives
/// next; it takes the pending message and holder whose transfer completes first. W ties go
/// to the faster receiver (lower receive overhead at the pattern's mean size), then the lower index.
[[nodiscard]] Schedule plan_wr(const Network& net, const PatternRequest& req);
/// §4.4, Work Racing Preemptive: as WR, but a send may be inserted into the sender's list
/// before receives it waits idle for, when it neither relays a message the sender does not
/// hold yet, nor overtakes an earlier send, nor delays the receive's completion. The result
/// never completes later than plan_wr (see wu.cpp). Under the blocking model it equals WR.
[[nodiscard]] Schedule plan_wrp(const Network& net, const PatternRequest& req);

using PatternPlanner = std::function<Schedule(const Network&, const PatternRequest&)>;

struct PatternAlgorithm {
    std::string name;
    std::string summary;
    PatternPlanner plan;
};

/// Every multi-source algorithm, in a fixed order: fef, ecf, wr, wrp, exchange (sched/exchange.hpp).
[[nodiscard]] const std::vector<PatternAlgorithm>& pattern_algorithms();
/// Also "exchange+ct" (plan_exchange_cut_through), which auto does not weigh on its own.
/// Throws InputError("unknown pattern algorithm 'x' (known: ...)").
[[nodiscard]] const PatternAlgorithm& find_pattern_algorithm(std::string_view name);

}  // namespace hetcast
