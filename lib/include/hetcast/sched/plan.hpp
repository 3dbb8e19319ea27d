#pragma once
/// The planners' common interface: a pure function from (Network, request) to a Schedule.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/exec_model.hpp"
#include "hetcast/sim/flow.hpp"

namespace hetcast {

/// Knobs of particular algorithm families; each ignores the ones it does not use.
struct PlanOptions {
    std::size_t degree = 2;     ///< k of ECO's k-ary subnet trees; d_i of lcf-degree for every cluster
    /// d_i of lcf-degree per cluster, in subnet-map order (Khuller §5.1); empty: `degree` for all.
    std::vector<std::size_t> degrees = {};
    /// `degree` was asked for (so it wins over degrees a network file gives).
    bool degree_given = false;
    std::size_t matching = 1;   ///< B of lcf-matching: simultaneous inter-cluster transfers
    double tolerance = 0.20;    ///< ECO partition tolerance when the network has no subnets
    /// Nodes that must not relay (members found down): planners that relay through
    /// non-destinations leave them out. The root and destinations are the caller's choice.
    std::vector<NodeId> avoid = {};
    std::uint64_t piece = 0;    ///< cut-through: bytes per piece asked for (0: the planner weighs its own)
};

/// A single-source request: broadcast when `dests` holds every other node.
struct PlanRequest {
    NodeId root = 0;
    std::vector<NodeId> dests;
    double size = 1 << 20;
    ExecModel model = ExecModel::nonblocking;
    PlanOptions options;
    /// Flows of other jobs running when this one starts (issue 27): `auto` weighs its
    /// candidates by their completion simulated beside them (simulate_beside()); each
    /// algorithm's own rules ignore them.
    std::vector<BackgroundFlow> beside = {};
    /// Participants ranked from the root in node order, wrapping around (ECO Fig. 1d):
    /// root first, then the destinations.
    [[nodiscard]] std::vector<NodeId> ranked() const;
};

/// `--degree` and `--matching` text: "N" or "N1,N2,...", whole numbers of at least 1.
/// Throws InputError("<option>: ...") otherwise.
[[nodiscard]] std::vector<std::size_t> parse_counts(std::string_view text, std::string_view option);

/// Builds a request, validating names: throws InputError for an unknown node, the root
/// among the destinations, or a repeated destination. Empty `dests` means every other node.
[[nodiscard]] PlanRequest make_request(const Network& net, NodeId root, std::vector<NodeId> dests,
                                       double size, ExecModel model, PlanOptions options = {});

using Planner = std::function<Schedule(const Network&, const PlanRequest&)>;

struct Algorithm {
    std::string name;
    std::string summary;
    Planner plan;
    /// Whether the algorithm can plan this request (null: always). `all` and `auto` skip
    /// the ones that cannot; asking for one by name gives its own error.
    std::function<bool(const Network&, const PlanRequest&)> applies;
};

/// Every single-source algorithm, in a fixed order.
[[nodiscard]] const std::vector<Algorithm>& algorithms();
/// One of algorithms(), or "X+ct" for X's plan cut through (the candidates auto weighs;
/// planning it throws InputError when the request does not cut through). Throws
/// InputError("unknown algorithm 'x' (known: ...)").
[[nodiscard]] const Algorithm& find_algorithm(std::string_view name);

}  // namespace hetcast
