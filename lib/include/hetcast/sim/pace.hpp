#pragma once
/// Paced crossings (docs/model.md, "Pacing across FIFO links"). TCP flows left to
/// themselves keep a FIFO link's buffer full; with traffic both ways the ACKs of one
/// direction queue behind the other direction's data, and that direction falls to a
/// quarter of the link for seconds (measured on netlab: README, issue 27). Senders that
/// keep their sum under the link's capacity leave the buffer nearly empty, and both
/// directions run full. So a transfer that crosses a FIFO uplink, or enters a host's port
/// (the switch's FIFO towards it) with another flow, while that link's reverse carries data
/// too (other jobs' flows either way, or its own job's at the same time) is held to its
/// share of the link. A host's egress is its own qdisc and never paced.
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {

/// The rate the sender of one transfer is held to, bytes/s.
struct Pace {
    MessageId message = 0;
    NodeId from = 0;
    NodeId to = 0;
    double rate = 0;
    bool operator==(const Pace&) const = default;
};

/// At planning: for every transfer of `own` (a schedule's predicted timeline) on a FIFO
/// uplink direction, or a host's FIFO port that two of its pairs enter at once, whose
/// reverse carries data too — `beside` (other jobs' flows) either way (uplinks only), or
/// transfers of `own` at once at some moment — the least, over every such link it is on,
/// of that link's capacity × `headroom` divided by the most pairs of nodes of `own` on it
/// at once while it runs (a pair's transfers go one after another on its lane) plus the
/// `beside` flows on it. The paced transfers of `own` then never take more than their part
/// of a link at any moment, if every job paces its own the same way. Nothing without
/// capacities or FIFO links, nor for a link whose reverse carries nothing.
[[nodiscard]] std::vector<Pace> crossing_paces(const Network& net, const Timeline& own,
                                               const std::vector<BackgroundFlow>& beside, double headroom = 0.95);

/// Per transfer of `transfers`: whether it may ever be paced, i.e. crosses a FIFO uplink or
/// a host's FIFO port (current_paces() lists it then, whatever runs beside).
[[nodiscard]] std::vector<char> may_be_paced(const Network& net, const std::vector<Transfer>& transfers);

/// The same for what runs now, hosts' ports included: `running` the job's transfers under
/// way (all at once; one per pair of nodes), `beside` the other jobs' flows reported now.
/// A paced transfer keeps to its max-min rate among them all × `headroom`. One entry per
/// transfer of `running` on a FIFO uplink or port; a rate of 0 lifts its pace (its links
/// are no longer busy both ways).
[[nodiscard]] std::vector<Pace> current_paces(const Network& net, const std::vector<Transfer>& running,
                                              const std::vector<BackgroundFlow>& beside, double headroom = 0.95);

}  // namespace hetcast
