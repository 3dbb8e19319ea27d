#pragma once
/// The planners' common interface: a pure function from (Network, request) to a Schedule.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/exec_model.hpp"

namespace hetcast {

/// A single-source request: broadcast when `dests` holds every other node.
struct PlanRequest {
    NodeId root = 0;
    std::vector<NodeId> dests;
    double size = 1 << 20;
    ExecModel model = ExecModel::nonblocking;
    /// Participants ranked from the root in node order, wrapping around (ECO Fig. 1d):
    /// root first, then the destinations.
    [[nodiscard]] std::vector<NodeId> ranked() const;
};

/// Builds a request, validating names: throws InputError for an unknown node, the root
/// among the destinations, or a repeated destination. Empty `dests` means every other node.
[[nodiscard]] PlanRequest make_request(const Network& net, NodeId root, std::vector<NodeId> dests,
                                       double size, ExecModel model);

using Planner = std::function<Schedule(const Network&, const PlanRequest&)>;

struct Algorithm {
    std::string name;
    std::string summary;
    Planner plan;
};

/// Every single-source algorithm, in a fixed order.
[[nodiscard]] const std::vector<Algorithm>& algorithms();
/// Throws InputError("unknown algorithm 'x' (known: ...)").
[[nodiscard]] const Algorithm& find_algorithm(std::string_view name);

}  // namespace hetcast
