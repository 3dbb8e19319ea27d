#pragma once
// What the coordinator of one try sends its participants (peer_coordinator.hpp): each its
// plan, straight to its control connection or, past control_fanout others, through its
// relays in the control tree (peer_relay.hpp); then the start, or a cancel. It remembers
// the routes, the children it could not dial, and the participants it talks to directly.
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hetcast/runtime/job.hpp"
#include "../job/job_state.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"

namespace hetcast::detail {

/// Participants' plans differ only in their tasks, the last key of to_json(JobPlan) (keys
/// are sorted), and in the participants they list: the rest is written once, not once per
/// participant.
class PlanTexts {
public:
    explicit PlanTexts(const JobPlan& common);
    /// Participant `member`'s plan: `tasks`, and of the participants only those it deals with
    /// (the coordinator, itself, the peers of its tasks, the messages' sources). With every participant
    /// each plan was O(members), and all of them O(members²) bytes through the coordinator's
    /// NIC (0.5 MB, 0.2 s at 20 Mbit/s, for 95; 50 MB at a thousand).
    [[nodiscard]] std::string of(const std::string& member, std::vector<JobTask> tasks) const;

private:
    [[nodiscard]] std::vector<Member> needed_by(const std::string& member, const std::vector<JobTask>& tasks) const;

    const JobPlan& common_;
    std::set<std::string> sources_;  ///< the messages' sources
    std::string head_;  ///< common_ without tasks nor participants, to the participants' place
    std::string tail_;  ///< from after the participants to before its closing '}'
    bool spliced_ = false;
};

class TryControl {
public:
    /// `common`: the plan without tasks (its job and participants), `k`: the try's state,
    /// `others`: the participants other than this member, in the plan's order. All outlive this.
    TryControl(PeerCore& core, Connections& connections, const JobPlan& common, Coord& k,
               const std::vector<std::string>& others);

    /// Sends participant `n` its plan; one that cannot be reached, or whose relay cannot,
    /// is finished in `k` with why.
    void send_plan(const Network& net, const Schedule& s, NodeId n, const std::vector<Pace>& paces);
    /// The start to the participants it talks to directly (down a tree, each with every
    /// resume: relays pass it on); `own`, this member's part (or null), takes its resumes.
    void start(const std::shared_ptr<Job>& own);
    /// A cancel of the whole job to the participants it talks to directly.
    void cancel(const std::string& why);

private:
    PeerCore& core_;
    Connections& connections_;
    const JobPlan& common_;
    Coord& k_;
    const bool tree_;
    std::map<std::string, std::vector<std::string>> routes_;  ///< member → its route (tree only)
    std::map<std::string, std::string> unreachable_;          ///< a child that cannot be dialled → why
    std::vector<std::string> remote_;  ///< the participants this member has a connection with
    const PlanTexts texts_;
};

}  // namespace hetcast::detail
