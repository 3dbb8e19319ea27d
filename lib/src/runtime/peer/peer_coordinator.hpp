#pragma once
// The coordinator's part of one try of a job: it sends every participant its plan, starts
// them together, and waits for their events (peer_tries.hpp) until each finished or
// failed; peer_try.hpp turns what they reported into a JobReport.
#include <cstdint>
#include <mutex>
#include <random>

#include "hetcast/runtime/job.hpp"
#include "../job/job_state.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"
#include "peer_participant.hpp"
#include "peer_requests.hpp"
#include "peer_setup.hpp"
#include "peer_tries.hpp"
#include "peer_try.hpp"

namespace hetcast::detail {

class Coordinator {
public:
    /// The parts outlive this (Peer::Impl holds them all).
    Coordinator(PeerCore& core, Connections& connections, Requests& requests, Participant& participant, JobSetup& setup,
                Tries& tries)
        : core_(core), connections_(connections), requests_(requests), participant_(participant), setup_(setup),
          tries_(tries) {}

    /// Runs one try of a job: plans out, start, then events until every participant
    /// finished or failed; participants that stop answering for stall_timeout fail, and
    /// what a failed member feeds is cancelled at once so that nobody waits on it.
    JobReport run_try(const JobSpec& spec, std::uint64_t push, Clock::time_point deadline, Try& result);

private:
    PeerCore& core_;
    Connections& connections_;
    Requests& requests_;
    Participant& participant_;
    JobSetup& setup_;
    Tries& tries_;
    std::mutex mu_;
    std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace hetcast::detail
