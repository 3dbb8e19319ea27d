#pragma once
// A push that outlives its members: tries of one job (Coordinator::run_try) until every
// live destination has the message, and pushes that wait for busy members in this
// coordinator's queue.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/peer_types.hpp"
#include "../job/job_state.hpp"
#include "peer_coordinator.hpp"
#include "peer_core.hpp"
#include "peer_requests.hpp"
#include "peer_tries.hpp"
#include "peer_try.hpp"

namespace hetcast::detail {

class Recovery {
public:
    /// The parts outlive this (Peer::Impl holds them all).
    Recovery(PeerCore& core, Coordinator& coordinator, Tries& tries, Requests& requests)
        : core_(core), coordinator_(coordinator), tries_(tries), requests_(requests) {}

    /// Runs a job and, while members fail, re-serves the live destinations they orphaned
    /// (JobSpec::replan), up to max_tries.
    JobReport run(JobSpec spec);
    /// Peer::cancel of a push waiting in the queue; false when none waits.
    bool cancel(std::uint64_t push, const std::string& why);
    /// Peer::jobs: the pushes waiting.
    void info(std::vector<JobInfo>& out, double now) const;
    /// The peer stops: every push waiting wakes and sees it.
    void wake_all();

    static constexpr int max_tries = 3;
    /// How many pushes may wait at one coordinator; one more is refused as before.
    static constexpr std::size_t max_waiting = 64;

private:
    /// A push that members refused only because they already take part in max_jobs jobs:
    /// nothing of it moved, so it waits in this coordinator's queue, in order, and the head
    /// tries the same plan again (with backoff) until it starts, is cancelled, times out or
    /// the peer stops. `result` and the returned report are those of the try that ended it.
    JobReport wait_for_members(const JobSpec& spec, Clock::time_point deadline, Try& result, JobReport report);
    /// Whether none of `members` that answers is at its max_jobs: the head of the queue
    /// tries its plan again only then (a question answered at once, where a try sets a
    /// whole job up).
    bool room(const std::vector<std::string>& members) { return has_room(requests_.ask_flows(members)); }

    struct Waiting {
        std::uint64_t job = 0;
        std::string algorithm;
        double since = 0;
        std::uint64_t owed = 0;
        std::string cancelled;  ///< why Peer::cancel ended it while it waited
    };
    PeerCore& core_;
    Coordinator& coordinator_;
    Tries& tries_;
    Requests& requests_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Waiting> waiting_;  ///< the front tries next
};

}  // namespace hetcast::detail
