#pragma once
/// A subnet-aware exchange for patterns (issue 27): each message goes through a tree of its
/// own that crosses every uplink at most once, and the trees of all messages share the
/// NICs and uplinks instead of racing for them pair by pair as Wu's planners do.
#include "hetcast/model/network.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/schedule.hpp"

namespace hetcast {

/// Per message: the source sends to its own subnet's destinations through a k-ary tree and
/// once to one destination of every other subnet that holds some, which spreads it through
/// its subnet the same way. The relays of a subnet are its fastest senders, chosen by the
/// bytes they already relay, so that the messages' fan-outs land on different hosts; a host
/// with a slow NIC out relays nothing, and as a source it sends once, to the fastest host of
/// its subnet, which fans out for it. The task lists
/// are then ordered by the times of a simulation of the schedule (on the flow model when
/// the map has capacities), so a node serves messages in the order they reach it; k and
/// the ordering kept are the ones the simulation finds earliest. In the non-blocking model
/// on a network with bandwidths, the same trees cut through (pieces as choose_piece() picks
/// them) are weighed too, with what their pieces cost. Without a subnet map the whole
/// network is one subnet.
[[nodiscard]] Schedule plan_exchange(const Network& net, const PatternRequest& req);

/// `exchange+ct`: the best of plan_exchange()'s plans that cuts through, whether or not it
/// predicts better than store-and-forward (as `X+ct` of the single-source algorithms).
/// InputError when the pattern cannot cut through (pattern_may_cut_through()).
[[nodiscard]] Schedule plan_exchange_cut_through(const Network& net, const PatternRequest& req);

}  // namespace hetcast
