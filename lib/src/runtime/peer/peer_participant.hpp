#pragma once
// The jobs this member takes part in, once set up (peer_setup.hpp; what arrives for them:
// peer_arrivals.hpp): their threads, what ends them (reaping, aborts, a lost coordinator),
// and what they tell others (flows, job lists, whether a connection is idle).
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/peer_types.hpp"
#include "../job/job_state.hpp"
#include "../job/job_table.hpp"
#include "../transfer/parked.hpp"
#include "../wire/lanes.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"
#include "peer_tasks.hpp"

namespace hetcast::detail {

class Participant {
public:
    /// The parts outlive this (Peer::Impl holds them all).
    Participant(PeerCore& core, TaskRunner& runner, ParkedStore& parked) : core_(core), runner_(runner), parked_(parked) {}

    /// The jobs this member takes part in (job/job_table.hpp).
    JobTable& jobs() { return jobs_; }
    const JobTable& jobs() const { return jobs_; }
    std::shared_ptr<Job> find(std::uint64_t id) const { return jobs_.find(id); }

    /// Starts the job's thread, which runs its task list (once; not for a job that ended).
    void start_runner(const std::shared_ptr<Job>& job);
    /// A receive of message m this node will not get from its feeder; fails it.
    void cancel_receive(Job& job, MessageId m, const std::string& why);
    /// Joins and forgets jobs whose task lists have ended.
    void reap();
    void abort(Job& job, const std::string& why);
    /// `c` closed: a lane of one job (`lane`), or a control connection (a coordinator's).
    void closed(const net::ConnectionPtr& c, const std::optional<Lane>& lane, const std::string& why);
    /// The answer to {"cmd": "flows"} (docs/protocol.md, "Running jobs' flows"): per
    /// message of a started job this member still receives, who sends it, the bytes left
    /// and the job's --bwlimit; and how many jobs it takes part in, of max_jobs. Answered
    /// on the I/O thread: it only reads the job table.
    nlohmann::json flows_answer(const std::string& asker) const;
    /// Peer::jobs: the jobs another member coordinates.
    void info(std::vector<JobInfo>& out, double now) const;
    /// Whether a job not finished here has `c` as its coordinator's connection or its peer
    /// among the participants.
    bool busy_with(const net::ConnectionPtr& c) const;

private:
    PeerCore& core_;
    TaskRunner& runner_;
    ParkedStore& parked_;
    JobTable jobs_;
};

}  // namespace hetcast::detail
