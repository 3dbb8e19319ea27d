#pragma once
// A push planned on the map (Pushes, service_push.cpp): plain functions of the map and the
// request, with no state of their own.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/sched/plan.hpp"

namespace hetcast::detail {

/// The map a push plans on: with a --bwlimit, no member sends faster than it, so that the
/// plan and its prediction account for the limit. Throws InputError without a map.
std::optional<Network> map_for_push(std::optional<Network> net, std::uint64_t bwlimit);

/// A plan may relay through members that are not destinations (ecef-relay, or auto choosing
/// it): those must answer too (`ask`: per name, empty or why not), else it is planned again
/// without them (`warn` says which). Without its bounds (plan_push_only()).
JobSpec plan_around_down(const Network& net, PlanRequest pr, const std::string& algo, std::uint64_t piece,
                         const std::function<std::vector<std::string>(const std::vector<std::string>&)>& ask,
                         const std::function<void(const std::string&)>& warn);

}  // namespace hetcast::detail
