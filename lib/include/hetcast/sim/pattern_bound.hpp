#pragma once
/// Lower bounds on the completion time of a multi-source pattern (several messages, each from
/// its own source to its own destinations).
#include "hetcast/model/network.hpp"
#include "hetcast/sched/pattern.hpp"

namespace hetcast {

/// What shared capacities alone force on a pattern, whatever the schedule (relays, order,
/// store-and-forward or pipelined): every byte a destination is sent enters through its NIC
/// and its disk; every message leaves its source's NIC at least once; a message with a
/// destination in subnet S and its source elsewhere enters S's uplink at least once, and
/// one with a destination outside its source's subnet leaves that subnet's uplink at least
/// once. The bound is the largest volume / capacity over those resources; 0 without
/// capacities. This is the single-source capacity_lower_bound summed over the messages
/// that share each resource.
[[nodiscard]] double pattern_capacity_bound(const Network& net, const PatternRequest& req);

/// Whether a plan of `req` may cut through (sched/exchange.hpp does when it predicts
/// better): the non-blocking model, a network with bandwidths, and a message over
/// min_planned_piece bytes.
[[nodiscard]] bool pattern_may_cut_through(const Network& net, const PatternRequest& req);

/// The bound a pattern is reported against, one that holds for every plan of it:
/// pattern_capacity_bound() and, when no plan can cut through, wu_lower_bound() (Wu §3.1,
/// the per-pair receive model, which adds up whole transfers along a path); when one can,
/// each message's path_lower_bound() instead.
[[nodiscard]] double pattern_lower_bound(const Network& net, const PatternRequest& req);

}  // namespace hetcast
