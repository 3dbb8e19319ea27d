#pragma once
/// The flow-level (fluid) model of a network with shared capacities (docs/model.md, "Shared
/// capacities"): every transfer in flight is a flow over the resources it crosses — the
/// sender's NIC out, its subnet's uplink out, the receiver's subnet's uplink in, the
/// receiver's NIC in and disk — capped by its pair bandwidth B_ij (one TCP stream).
/// Bandwidth is shared max-min fairly among concurrent flows and recomputed whenever a flow
/// starts or ends: the model SimGrid validated against packet-level simulation (Velho &
/// Legrand, "Accuracy study and improvement of network simulation in the SimGrid framework"),
/// except that on FIFO links a flow held back by two distinct bottlenecks gets less than its
/// max-min share (sharing_rates(); docs/model.md, "Sharing on FIFO links").
#include <cstddef>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {

/// A transfer of another job, running when a schedule starts: its sender, its receiver,
/// the bytes it has left and the rate it may not pass (a --bwlimit; 0: only the pair
/// bandwidth and the shared capacities limit it).
struct BackgroundFlow {
    NodeId from = 0;
    NodeId to = 0;
    double bytes = 0;
    double cap = 0;  ///< bytes/s
    bool operator==(const BackgroundFlow&) const = default;
};

/// What one flow crosses: indices of finite-capacity resources, and its own rate cap.
struct FlowPath {
    std::vector<std::size_t> resources;
    double cap = 0;  ///< bytes/s; infinity when only the resources limit it
};

/// Max-min fair rates by progressive filling: every flow's rate grows at the same pace
/// until a resource it crosses is full or it reaches its cap; those flows are frozen, the
/// rest go on. A flow with no finite limit gets infinity. `follows` (empty, or one entry per
/// flow: the index of another flow, or SIZE_MAX for none) holds a flow to at most another
/// one's rate: it is frozen when that one is (a cut-through relay's flow that has caught up
/// with the flow feeding the relay). Its links must not form a cycle.
[[nodiscard]] std::vector<double> max_min_rates(const std::vector<double>& capacity,
                                                const std::vector<FlowPath>& flows,
                                                const std::vector<std::size_t>& follows = {});

/// What a flow that crosses two distinct saturated FIFO resources gets, per extra one, as a
/// weight relative to the flows it competes with (fitted to netlab measurements).
inline constexpr double fifo_second_bottleneck_weight = 0.45;

/// The rates the model predicts when `fifo[r]` (empty: none) says which resources queue in
/// one FIFO. First the max-min rates; then a flow whose path crosses k ≥ 2 saturated FIFO
/// resources with different sets of flows (TCP backs off at each, and the queue of each
/// lengthens its round trip) gets weight fifo_second_bottleneck_weight^(k−1), every other
/// flow weight 1, and the rates are filled again with each flow rising at its weight's
/// pace. Without such a flow this is exactly max_min_rates(). Every resource stays within
/// its capacity and every flow ends at its cap or on a full resource.
[[nodiscard]] std::vector<double> sharing_rates(const std::vector<double>& capacity, const std::vector<char>& fifo,
                                                const std::vector<FlowPath>& flows,
                                                const std::vector<std::size_t>& follows = {});

/// Which of resource_capacities() queue in a FIFO under the network's Capacities::queues
/// (disks never do; empty without capacities).
[[nodiscard]] std::vector<char> fifo_resources(const Network& net);

/// The capacities of a network's resources, indexed as flow_path() refers to them:
/// [egress per node, ingress per node, disk per node, uplink out per subnet, uplink in per
/// subnet]. Every entry is infinite on a network without capacities.
[[nodiscard]] std::vector<double> resource_capacities(const Network& net);

/// The resources a transfer from → to crosses, and its pair bandwidth as its cap.
[[nodiscard]] FlowPath flow_path(const Network& net, NodeId from, NodeId to);
/// The same with `subnet_of` = net.subnet_of() computed once by the caller (that is O(n)).
[[nodiscard]] FlowPath flow_path(const Network& net, const std::vector<std::size_t>& subnet_of, NodeId from, NodeId to);

/// Predicts a schedule's timeline in the non-blocking model with the network's shared
/// capacities, shared by sharing_rates(): a send keeps its sender busy S_i(m) and then starts a flow of m bytes; the
/// message arrives L_ij after the flow's last byte and completes R_j(m) after that once the
/// receiver has reached its receive. Without capacities this is exactly simulate() with
/// ExecModel::nonblocking (every message gets its pair bandwidth).
///
/// A cut-through schedule (docs/model.md, "Cut-through"): a receiver goes past its receive
/// once the first piece (min(piece, m) bytes) has arrived and it has taken it (R_j of the
/// piece); the message still completes R_j(m) after its last byte arrived. A relay's flow
/// of m is data-limited by the flow that brings m to the relay: once it has caught up it
/// runs at most at that flow's rate, and its last byte leaves no sooner than the relay's
/// arrived. With piece ≥ m this is the store-and-forward timeline.
///
/// Throws InfeasibleSchedule like simulate(); InputError for a cut-through schedule on a
/// cost-matrix network or with a zero piece.
///
/// When a flow starts or ends, or starts or stops being held to its supply, only the flows
/// connected to it (through a shared resource, or one holding another to its rate) get
/// their rates recomputed: sharing is independent between such components.
///
/// `beside`: flows of other jobs already running when the schedule starts (BackgroundFlow);
/// they share the capacities with the schedule's flows from time 0 until their bytes are
/// through, and appear in no transfer of the timeline.
[[nodiscard]] Timeline simulate_flows(const Network& net, const Schedule& s,
                                      const std::vector<BackgroundFlow>& beside = {});

/// simulate() of a schedule that starts while the `beside` flows run: on a network with
/// capacities, or cut through, in the non-blocking model they share the flow model's
/// capacities with it (simulate_flows()); elsewhere nothing is shared and this is simulate().
[[nodiscard]] Timeline simulate_beside(const Network& net, const Schedule& s, ExecModel model,
                                       const std::vector<BackgroundFlow>& beside);


/// simulate_flows() recomputing every flow's rate at every event, as it first did: the
/// reference the incremental one is tested against (equal completion times to 1e-9).
[[nodiscard]] Timeline simulate_flows_reference(const Network& net, const Schedule& s,
                                                const std::vector<BackgroundFlow>& beside = {});

}  // namespace hetcast
