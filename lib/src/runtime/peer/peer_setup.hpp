#pragma once
// A job arriving at a participant: its plan checked (against the order it carries), where
// each message goes prepared (going on from pieces parked by an earlier try), and the job
// registered with the Participant. The coordinator sets its own part up the same way.
#include <memory>
#include <mutex>
#include <string_view>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/job.hpp"
#include "../job/job_state.hpp"
#include "../transfer/pacing.hpp"
#include "../transfer/parked.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"
#include "peer_origins.hpp"
#include "peer_participant.hpp"
#include "peer_tasks.hpp"

namespace hetcast::detail {

class JobSetup {
public:
    /// The parts outlive this (Peer::Impl holds them all).
    JobSetup(PeerCore& core, Connections& connections, Origins& origins, Participant& participant,
             TaskRunner& runner, ParkedStore& parked)
        : core_(core), connections_(connections), origins_(origins), participant_(participant), runner_(runner),
          parked_(parked) {}

    /// A job plan from `c` (its coordinator; `relayed`: its parent in the control tree, the
    /// plan's signature checked, peer_relay.hpp): the job set up and its lanes dialled,
    /// then ready (or failed) reported to `c`.
    void on_plan(const net::ConnectionPtr& c, std::uint64_t id, std::string_view text, bool relayed);
    /// Registers a job and prepares where each received message goes; throws (and
    /// registers nothing) when a destination path is refused or cannot be created.
    std::shared_ptr<Job> make(JobPlan plan, net::ConnectionPtr coordinator);

private:
    PeerCore& core_;
    Connections& connections_;
    Origins& origins_;
    Participant& participant_;
    TaskRunner& runner_;
    ParkedStore& parked_;
    std::mutex mu_;
    /// Wakes sends held back by a job's --bwlimit; made by the first such job.
    std::shared_ptr<Alarm> alarm_;
};

}  // namespace hetcast::detail
