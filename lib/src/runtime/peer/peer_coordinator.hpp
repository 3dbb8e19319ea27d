#pragma once
// The coordinator's part of one try of a job: it sends every participant its plan, starts
// them together, watches that each still answers, passes a member's failure on to those it
// feeds, and turns the events they report into a JobReport (peer_try.hpp tallies it).
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/peer.hpp"
#include "../job/coord_table.hpp"
#include "../job/job_state.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"
#include "peer_participant.hpp"
#include "peer_requests.hpp"
#include "peer_setup.hpp"
#include "peer_try.hpp"

namespace hetcast::detail {

class Coordinator {
public:
    /// The parts outlive this (Peer::Impl holds them all).
    Coordinator(PeerCore& core, Connections& connections, Requests& requests, Participant& participant, JobSetup& setup)
        : core_(core), connections_(connections), requests_(requests), participant_(participant), setup_(setup) {}

    /// Runs one try of a job: plans out, start, then events until every participant
    /// finished or failed; participants that stop answering for stall_timeout fail, and
    /// what a failed member feeds is cancelled at once so that nobody waits on it.
    JobReport run_try(const JobSpec& spec, std::uint64_t push, Clock::time_point deadline, Try& result);
    void on_event(const net::ConnectionPtr& c, const net::Frame& f);
    /// An event of job `id` from participant `who`, on `via` (null: this member's own part).
    void apply_event(std::uint64_t id, const std::string& who, const JobEvent& e, const net::ConnectionPtr* via);
    /// A control connection closed: its member fails in every try that has it.
    void closed(const net::ConnectionPtr& c, const std::string& why);
    /// Peer::cancel of a push a try of which runs here; false when none does.
    bool cancel(std::uint64_t push, const std::string& why);
    /// Whether Peer::cancel ended push `id` (no next try starts), and forgetting that.
    bool cancelled(std::uint64_t id) const { return coords_.cancelled(id); }
    void forget_cancel(std::uint64_t id) { coords_.forget_cancel(id); }
    /// Peer::jobs: the tries running here.
    void info(std::vector<JobInfo>& out, double now) const;
    /// Whether a try holds `c`'s peer (or cannot be looked at now): never waits.
    bool busy_with(const net::ConnectionPtr& c) const;
    /// The peer stops: every try wakes and sees it.
    void wake_all();

private:
    /// Sends a sign-of-life request to participants not heard from lately, fails those
    /// silent for stall_timeout, and cancels what failed members feed. Under k.mu.
    void watch(Coord& k, std::uint64_t job, std::vector<net::ConnectionPtr>& to_close);

    PeerCore& core_;
    Connections& connections_;
    Requests& requests_;
    Participant& participant_;
    JobSetup& setup_;
    /// The tries running, and the pushes cancelled by id (job/coord_table.hpp).
    CoordTable coords_;
    std::mutex mu_;
    std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace hetcast::detail
