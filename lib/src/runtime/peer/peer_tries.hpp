#pragma once
// The tries this coordinator runs, as they run: the events participants report, the watch
// over who still answers (and what a failed member feeds, cancelled), a control connection
// that closes, cancels by push, and what the tries tell others (job lists, idleness).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/peer_types.hpp"
#include "../job/coord_table.hpp"
#include "../job/job_state.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"
#include "peer_participant.hpp"

namespace hetcast::detail {

class Tries {
public:
    /// The parts outlive this (Peer::Impl holds them all).
    Tries(PeerCore& core, Connections& connections, Participant& participant)
        : core_(core), connections_(connections), participant_(participant) {}

    /// Registers try `id` of push `k->push`; returns why that push was cancelled, if it was.
    std::optional<std::string> add(std::uint64_t id, const std::shared_ptr<Coord>& k) { return coords_.add(id, k); }
    void remove(std::uint64_t id) { coords_.remove(id); }
    void on_event(const net::ConnectionPtr& c, const net::Frame& f);
    /// A batch of events from a child in the control tree, of members below it.
    void on_events(const net::ConnectionPtr& c, const net::Frame& f);
    /// An event of try `id` from participant `who`, on `via` (null: this member's own part).
    void apply_event(std::uint64_t id, const std::string& who, const JobEvent& e, const net::ConnectionPtr* via);
    /// Sends a sign-of-life request to participants not heard from lately, fails those
    /// silent for stall_timeout, and cancels what failed members feed. Under k.mu.
    void watch(Coord& k, std::uint64_t job, std::vector<net::ConnectionPtr>& to_close);
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
    /// Under k.mu; `remote`: it came over the network (its clock bounds the offset).
    void apply(Coord& k, const std::string& who, const JobEvent& e, bool remote);
    /// `relay` failed: so does every member whose plan and events pass through it. Under k.mu.
    static void fail_below(Coord& k, const std::string& relay, const std::string& why);

    PeerCore& core_;
    Connections& connections_;
    Participant& participant_;
    /// The tries running, and the pushes cancelled by id (job/coord_table.hpp).
    CoordTable coords_;
};

}  // namespace hetcast::detail
