#pragma once
// The coordinator's side of paced crossings (sim/pace.hpp): as its job runs, what runs
// beside it is asked again every half second, and the senders of its transfers across
// FIFO uplinks that other jobs use are told their share of them (job_pace frames), or
// that they are held no longer.
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../job/job_state.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/sim/pace.hpp"

namespace hetcast::detail {

class CrossingPacer {
public:
    /// `predicted`: the job's timeline as planned; `planned`: the paces its plans carry.
    CrossingPacer(const Network& net, const Timeline& predicted, const std::vector<Pace>& planned);
    /// Whether any transfer crosses a FIFO uplink (else there is nothing to keep).
    [[nodiscard]] bool needed() const { return !crossing_.empty(); }
    /// The paces that changed, per sending member: `beside` the other jobs' flows reported
    /// now, `done` the (message, receiver) that have their message.
    std::map<std::string, std::vector<SendPace>> update(const std::vector<BackgroundFlow>& beside,
                                                        const std::set<std::pair<MessageId, std::string>>& done);

private:
    const Network& net_;
    std::vector<Transfer> crossing_;
    std::map<std::tuple<MessageId, NodeId, NodeId>, double> told_;
};

/// This member's sends of `job` keep to `paces` from now on: the lanes already dialled at
/// once, the others as their sends start (peer_tasks.cpp).
void apply_paces(Job& job, const std::vector<SendPace>& paces);

}  // namespace hetcast::detail
