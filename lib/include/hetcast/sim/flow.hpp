#pragma once
/// The flow-level (fluid) model of a network with shared capacities (docs/model.md, "Shared
/// capacities"): every transfer in flight is a flow over the resources it crosses — the
/// sender's NIC out, its subnet's uplink out, the receiver's subnet's uplink in, the
/// receiver's NIC in and disk — capped by its pair bandwidth B_ij (one TCP stream).
/// Bandwidth is shared max-min fairly among concurrent flows and recomputed whenever a flow
/// starts or ends: the model SimGrid validated against packet-level simulation (Velho &
/// Legrand, "Accuracy study and improvement of network simulation in the SimGrid framework").
#include <cstddef>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {

/// What one flow crosses: indices of finite-capacity resources, and its own rate cap.
struct FlowPath {
    std::vector<std::size_t> resources;
    double cap = 0;  ///< bytes/s; infinity when only the resources limit it
};

/// Max-min fair rates by progressive filling: every flow's rate grows at the same pace
/// until a resource it crosses is full or it reaches its cap; those flows are frozen, the
/// rest go on. A flow with no finite limit gets infinity.
[[nodiscard]] std::vector<double> max_min_rates(const std::vector<double>& capacity,
                                                const std::vector<FlowPath>& flows);

/// The capacities of a network's resources, indexed as flow_path() refers to them:
/// [egress per node, ingress per node, disk per node, uplink out per subnet, uplink in per
/// subnet]. Every entry is infinite on a network without capacities.
[[nodiscard]] std::vector<double> resource_capacities(const Network& net);

/// The resources a transfer from → to crosses, and its pair bandwidth as its cap.
[[nodiscard]] FlowPath flow_path(const Network& net, NodeId from, NodeId to);

/// Predicts a schedule's timeline in the non-blocking model with the network's shared
/// capacities: a send keeps its sender busy S_i(m) and then starts a flow of m bytes; the
/// message arrives L_ij after the flow's last byte and completes R_j(m) after that once the
/// receiver has reached its receive. Without capacities this is exactly simulate() with
/// ExecModel::nonblocking (every message gets its pair bandwidth). Throws
/// InfeasibleSchedule like simulate().
[[nodiscard]] Timeline simulate_flows(const Network& net, const Schedule& s);

}  // namespace hetcast
