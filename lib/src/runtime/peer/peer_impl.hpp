#pragma once
// Peer's insides: a thin assembly that owns the parts, each holding its own state behind a
// small interface (peer_*.hpp), wires them (each takes the ones below it by reference,
// callbacks go up), and hands them what the transport calls (peer_dispatch.cpp). Nothing
// outside peer/ includes it (docs/architecture.md). Not installed.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/peer.hpp"
#include "../transfer/parked.hpp"
#include "../wire/streams.hpp"
#include "peer_admission.hpp"
#include "peer_arrivals.hpp"
#include "peer_asking.hpp"
#include "peer_connections.hpp"
#include "peer_coordinator.hpp"
#include "peer_core.hpp"
#include "peer_emulation.hpp"
#include "peer_goodput.hpp"
#include "peer_inbox.hpp"
#include "peer_origins.hpp"
#include "peer_participant.hpp"
#include "peer_pieces.hpp"
#include "peer_recover.hpp"
#include "peer_relay.hpp"
#include "peer_requests.hpp"
#include "peer_setup.hpp"
#include "peer_tasks.hpp"
#include "peer_tries.hpp"

namespace hetcast {

/// What the peer_*.cpp files of the assembly share; each has `using namespace detail`.
namespace detail {

using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameHeader;
using net::FrameType;
}  // namespace detail

struct Peer::Impl : detail::PeerCore {
    /// Made here, before Peer's constructor names the peer: a profile finds this member by
    /// the name its config gives.
    detail::Emulation emulation{cfg};
    detail::Connections connections{*this};
    detail::Admission admission{cfg, connections.directory()};
    detail::Origins origins{cfg, admission.revocations()};
    detail::Bulk bulk{*this, connections.directory()};
    detail::Calls calls{*this, connections};
    detail::Requests requests{*this, connections, calls, admission, origins, [this](const std::string& asker) { return participant.flows_answer(asker); }};
    /// Streams that are no job: an operator's upload arrives as data frames of an id the
    /// service gave it, on the operator's own connection (Service push, runtime/upload.hpp).
    detail::StreamTable streams;
    /// Verified pieces of a cut-through copy kept for the next try (transfer/parked.hpp).
    detail::ParkedStore parked;
    detail::Inbox inbox;
    detail::PieceRelay pieces{*this};
    detail::TaskRunner runner{*this, connections, emulation, pieces, parked, inbox,
                              [this](std::uint64_t id, const std::string& who, const JobEvent& e) {
                                  tries.apply_event(id, who, e, nullptr);
                              }};
    detail::Participant participant{*this, runner, parked};
    detail::Arrivals arrivals{*this, connections, pieces, runner, participant, parked};
    detail::JobSetup setup{*this, connections, origins, participant, runner, parked};
    detail::Relays relays{*this, connections};
    detail::Tries tries{*this, connections, participant};
    detail::Coordinator coordinator{*this, connections, requests, participant, setup, tries};
    detail::Recovery recovery{*this, coordinator, tries, requests};

    /// Reaps jobs that ended or never started, once a second (a daemon may see no new job
    /// for days).
    std::thread janitor;
    std::mutex janitor_mu;
    std::condition_variable janitor_cv;

    explicit Impl(PeerConfig c) : PeerCore(std::move(c)) {}

    /// Every connection, whichever side dialled, paces what this peer sends on it: answers
    /// (pongs, events) cross the emulated link as data does.
    void on_open(const net::ConnectionPtr& c) const;
    void on_close(const net::ConnectionPtr& c, const std::string& why);
    void on_frame(const net::ConnectionPtr& c, net::Frame&& f);
    /// Whether `c` carries work, so that it is not idle: a request running, a job this peer
    /// takes part in or coordinates with that member, a lane, a bulk transfer, a call waiting.
    bool busy(const net::ConnectionPtr& c);
};

}  // namespace hetcast
