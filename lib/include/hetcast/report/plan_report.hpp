#pragma once
/// A planned and simulated schedule, and how it is printed.
#include <iosfwd>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/plan.hpp"
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

/// {"algorithm","model","root","size","completion_time","lower_bound","transfers":[...]}
[[nodiscard]] nlohmann::json to_json(const Network& net, const PlanRequest& req, const PlanResult& r);

/// A readable schedule, one transfer a line, then a summary line.
void print_plan(std::ostream& out, const Network& net, const PlanRequest& req, const PlanResult& r);

/// One line per plan, sorted as given: algorithm, completion, ratio to the lower bound.
void print_comparison(std::ostream& out, const std::vector<PlanResult>& results);

/// Seconds with a unit a person reads at a glance (12.5 ms, 3.20 s, 250 µs).
[[nodiscard]] std::string format_seconds(double s);

}  // namespace hetcast
