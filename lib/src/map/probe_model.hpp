#pragma once
// What map/probe.cpp knows of the network while it measures, and the sharing tests it
// designs with that (probe_model.cpp). Not installed.
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <optional>
#include <vector>

#include "hetcast/map/probe.hpp"

namespace hetcast::probing {

inline constexpr double inf = std::numeric_limits<double>::infinity();
inline constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

/// A sharing test must predict at least this drop (a fraction of the watched flows' rate)
/// to tell anything through noise of a few percent.
inline constexpr double least_drop = 0.2;

/// What the probe knows of the network so far: the NICs, the uplinks of the subnets found,
/// and which host is behind which uplink (none: not placed yet). Predicts flows' rates with
/// the flow model's max-min sharing (sim/flow.hpp).
struct Model {
    std::vector<double> egress, ingress;
    std::vector<std::size_t> subnet;
    std::vector<double> uplink;

    /// Max-min fair rates of `flows` run together.
    [[nodiscard]] std::vector<double> rates(const std::vector<FlowPair>& flows) const;
};

/// One sharing test of a host against a candidate subnet: `watched` flows measured alone
/// (`base`) and with the host's flows added (`test`, which starts with `base`).
struct Design {
    std::vector<FlowPair> base, test;
    double log_drop = 0;  ///< predicted Σ log(rate with / rate alone) of the watched flows
};

/// `group`'s hosts, fastest first by `rate`.
[[nodiscard]] std::vector<NodeId> fastest(const std::vector<NodeId>& group, const std::vector<double>& rate);

/// Up to `count` hosts outside subnet k, from the other subnets in turn (each one's
/// fastest by `rate` first), so that one slow uplink elsewhere does not hide a fast one in k.
[[nodiscard]] std::vector<NodeId> spread(const Subnets& subs, std::size_t k, const std::vector<double>& rate,
                                         std::size_t count);

/// The first of `ranked` not in `but`; the first when all are.
[[nodiscard]] NodeId pick(const std::vector<NodeId>& ranked, std::initializer_list<NodeId> but);

/// The first of `ranked` not in `but`; `otherwise` when all are.
[[nodiscard]] NodeId first_but(const std::vector<NodeId>& ranked, std::initializer_list<NodeId> but, NodeId otherwise);

/// Σ log(with / alone) of the first base.size() flows, as `model` predicts them.
[[nodiscard]] double predicted_log_drop(const Model& model, const Design& d);

/// The test of "h is behind subnet a's uplink" (h not placed in `model`) that the model
/// says shows it best: the host's flows add to a's uplink (out, in, or both) and, if h is
/// elsewhere, share nothing with the watched flows (no NIC either, where the subnets have
/// hosts enough). Nothing when no test would show it.
[[nodiscard]] std::optional<Design> design(const Model& model, NodeId h, std::size_t a, const Subnets& found);

}  // namespace hetcast::probing
