#pragma once
// The sweep's view of the multi-source (pattern) planners of sched/wu.hpp, kept behind
// this small interface so the sweep builds with or without them.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/exec_model.hpp"

namespace hetcast::sweep::detail {

struct PatternPlanner {
    std::string name;
    std::function<Schedule(const Network&, const std::vector<Message>&, ExecModel)> plan;
};

/// Every pattern algorithm of this build, in the library's order; empty without sched/wu.hpp.
[[nodiscard]] const std::vector<PatternPlanner>& pattern_planners();

/// The bound a pattern is reported against (sim/pattern_bound.hpp: Wu §3.1's, or what
/// shared capacities force when larger); nullopt without that header.
[[nodiscard]] std::optional<double> pattern_lower_bound(const Network& net, const std::vector<Message>& messages,
                                                        ExecModel model);

}  // namespace hetcast::sweep::detail
