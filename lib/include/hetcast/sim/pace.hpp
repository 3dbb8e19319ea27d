#pragma once
/// Paced crossings (docs/model.md, "Pacing across FIFO uplinks"). TCP flows left to
/// themselves keep a FIFO uplink's buffer full; with traffic both ways the ACKs of one
/// direction queue behind the other direction's data, and that direction falls to a
/// quarter of the uplink for seconds (measured on netlab: README, issue 27). Senders that
/// keep their sum under the uplink's capacity leave the buffer nearly empty, and both
/// directions run full. So a transfer that crosses a FIFO uplink which other jobs' flows
/// use too (either way) is held to its share of that uplink.
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

/// For every transfer of `own` (a schedule's predicted timeline) that crosses a FIFO uplink
/// direction of a subnet whose uplink carries any of `beside` (other jobs' flows, either
/// way): the least, over every FIFO uplink direction it crosses, of that direction's capacity
/// × `headroom` divided by the most transfers of `own` crossing it at once plus the `beside`
/// flows crossing it. The paced transfers of `own` then never take more than their part of
/// an uplink at any moment, if every job paces its own the same way. Nothing without
/// capacities, FIFO uplinks or `beside` flows on them.
[[nodiscard]] std::vector<Pace> crossing_paces(const Network& net, const Timeline& own,
                                               const std::vector<BackgroundFlow>& beside, double headroom = 0.95);

/// The same for what runs now, as the job goes on: `running` its transfers still under way
/// (all of them at once), `beside` the other jobs' flows reported now. One entry per
/// transfer of `running` that crosses a FIFO uplink; a rate of 0 lifts its pace (no other
/// job's flow crosses its uplinks any more).
[[nodiscard]] std::vector<Pace> current_paces(const Network& net, const std::vector<Transfer>& running,
                                              const std::vector<BackgroundFlow>& beside, double headroom = 0.95);

}  // namespace hetcast
