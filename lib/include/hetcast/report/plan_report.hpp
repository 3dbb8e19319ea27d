#pragma once
/// A planned and simulated schedule, and how it is printed: single-source requests
/// (PlanRequest, the `algorithms()` registry, Bhat's lower bound) and multi-source
/// patterns (PatternRequest, `pattern_algorithms()`, Wu's lower bound).
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sched/wu.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {

struct PlanResult {
    Schedule schedule;
    Timeline timeline;
    double lower_bound = 0;
};

/// Plans with `algo`, simulates under req.model and computes the lower bound.
[[nodiscard]] PlanResult plan_and_simulate(const Network& net, const PlanRequest& req,
                                           const Algorithm& algo);

/// Plans with every algorithm that applies (optimal only up to its participant limit),
/// sorted by predicted completion time, then by name.
[[nodiscard]] std::vector<PlanResult> plan_all(const Network& net, const PlanRequest& req);

/// {"algorithm","model","root","size","completion_time","lower_bound","messages":[...],"transfers":[...]}
/// as the pattern's below (one message for a plain broadcast or multicast).
[[nodiscard]] nlohmann::json to_json(const Network& net, const PlanRequest& req, const PlanResult& r);

/// A readable schedule, one transfer a line, then a summary line.
void print_plan(std::ostream& out, const Network& net, const PlanRequest& req, const PlanResult& r);

/// One line per plan, sorted as given: algorithm, completion, ratio to the lower bound.
void print_comparison(std::ostream& out, const std::vector<PlanResult>& results);

/// A planned and simulated pattern: the same three parts as a PlanResult, with
/// lower_bound = wu_lower_bound (Wu §3.1) of the whole pattern.
using PatternResult = PlanResult;

/// Plans the pattern with `algo`, simulates it under req.model and computes Wu's bound.
[[nodiscard]] PatternResult plan_pattern_and_simulate(const Network& net, const PatternRequest& req,
                                                      const PatternAlgorithm& algo);

/// Plans with every pattern algorithm (fef, ecf, wr, wrp, exchange), sorted by predicted completion
/// time; ties keep the order of pattern_algorithms().
[[nodiscard]] std::vector<PatternResult> plan_pattern_all(const Network& net, const PatternRequest& req);

/// The first of plan_pattern_all: the least predicted completion, ties to the algorithm
/// listed first. Its schedule's `algorithm` reads "auto:<winner>", as plan_auto's does.
[[nodiscard]] PatternResult plan_pattern_auto(const Network& net, const PatternRequest& req);

/// {"algorithm","model","completion_time","lower_bound",
///  "messages":[{"id","source","size","dests":[...]}],
///  "transfers":[{"message","from","to","start","sender_free","arrival","complete"}]}
/// with "message" the message's index (its "id") and nodes by name.
[[nodiscard]] nlohmann::json to_json(const Network& net, const PatternRequest& req, const PatternResult& r);

/// As print_plan: the messages, one transfer a line (with its message index), a summary line.
/// print_comparison above prints a ranking of PatternResults as well.
void print_pattern(std::ostream& out, const Network& net, const PatternRequest& req, const PatternResult& r);

/// Seconds with a unit a person reads at a glance (12.5 ms, 3.20 s, 250 µs).
[[nodiscard]] std::string format_seconds(double s);

}  // namespace hetcast
