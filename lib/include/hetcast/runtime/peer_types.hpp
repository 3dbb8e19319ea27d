#pragma once
/// The values a Peer (runtime/peer.hpp) is configured with and hands out: its config, what
/// lands on it, and the answers of its calls. The parts of a peer (src/runtime/peer/) and
/// the service include this rather than the Peer class itself.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hetcast/log.hpp"
#include "hetcast/model/network.hpp"
#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/order_scope.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/flow.hpp"

namespace hetcast {

struct PeerConfig {
    std::string name;
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;  ///< 0: ephemeral (see Peer::port())
    /// Key, certificate (whose name must be `name`; empty `name`: taken from it) and the
    /// cluster CA: every connection is TLS 1.3 with both ends proving theirs.
    net::Identity identity;
    /// Received files land under this root (`name` of the message, confined to it).
    std::filesystem::path dest_root;
    /// Relay copies of messages this peer forwards but does not keep; temporary files.
    std::filesystem::path spool;
    std::size_t chunk = std::size_t{1} << 20;        ///< bytes per data frame, at most max_chunk
    std::uint64_t max_message = std::uint64_t{1} << 40;  ///< largest message accepted
    std::chrono::milliseconds connect_timeout{5000};
    /// A receive that sees no progress for this long fails (the job then fails at this
    /// node); a connection whose sends make no progress for this long closes; a participant
    /// that sends its coordinator nothing (not even a pong) for this long has failed.
    std::chrono::milliseconds stall_timeout{10000};
    /// Jobs this peer takes part in at once, whoever coordinates them (0: no limit).
    std::size_t max_jobs = 0;
    /// A job with more participants besides its coordinator than this is planned along a
    /// tree: the coordinator talks to this many of them, each passes plans, the start and
    /// cancels on to its own this many and their events back up in batches
    /// (docs/protocol.md, "The control tree"). 0: always one connection to each.
    std::size_t control_fanout = 16;
    /// A connection on which nothing passes either way for this long is closed, unless it
    /// carries a job this peer takes part in, a lane, a bulk transfer, an upload or a
    /// request still running (0: never).
    std::chrono::milliseconds idle_timeout{300000};
    /// Connections one peer (by name) may have open to this one; one more is refused at
    /// its handshake (0: no limit).
    std::size_t connections_per_peer = 64;
    /// The TCP congestion control of every connection this peer makes or accepts (`bbr`,
    /// `cubic`); empty: the system's. start() throws when the kernel refuses it.
    std::string tcp_congestion;
    /// Requests of one peer waiting or running here at once; one more is answered "busy"
    /// (0: no limit).
    std::size_t requests_per_peer = 64;
    /// Received files land with the source's permission bits less these (never wider than
    /// the source's, never set-uid, set-gid or sticky).
    unsigned umask = 022;
    /// Link emulation (off when empty): sends to a member are paced at the profile's
    /// bandwidth, delayed by its latency, and the send/receive overheads are spent as
    /// busy time, so one machine behaves like the heterogeneous network the profile
    /// describes. Node names in the profile are member names. When the profile has
    /// capacities, every piece also waits for the NICs and uplinks it crosses, shared with
    /// the other members that emulate the same profile through `link_state`.
    std::optional<Network> link_profile;
    /// A small file the members emulating one profile share (mapped into each), holding
    /// when each emulated NIC and uplink is free. Empty: this process's own memory, so only
    /// this member's own sends share its rates.
    std::filesystem::path link_state;
    /// The folders whose files "file:/path" origins may name (a daemon's serve_roots);
    /// none: no file is served (embedded peers, and daemons until their operator lists some).
    std::vector<std::filesystem::path> serve_roots;
    /// Whether a buffer (a message without a file name) may be delivered here. A daemon
    /// keeps files only: it refuses a plan that makes it a buffer's destination.
    bool accept_buffers = true;
    /// Jobs only under an operator's order (docs/security.md, "Operator's orders"). Set:
    /// a job plan is taken only when it carries an order that check_plan_order() accepts
    /// (this cluster's operator, not revoked, fresh, given to the plan's coordinator, a push
    /// whose scope, read by this function, covers the plan); any other plan is refused,
    /// logged, and its connection closed, so that its start and data find no job. Unset:
    /// any member may plan jobs here (embedded use, a cluster without an operator). A
    /// daemon always sets it.
    OrderScopeFn order_scope;
    LogFn log;  ///< none: silent (hetcast/log.hpp)
    /// Fault injection, for tests: sees (job, message, offset, bytes) of every data frame of
    /// a cut-through message as it arrives (and of every piece fetched again), and may
    /// change the bytes before they are checked.
    std::function<void(std::uint64_t, MessageId, std::uint64_t, std::span<std::byte>)> tamper;
    /// Fault injection, for tests: sees every job_relay frame this member passes on down
    /// the control tree, and may change it or, returning false, drop it.
    std::function<bool(net::Frame&)> tamper_relay;
};

/// A buffer message delivered to this peer (a destination of it).
struct Delivery {
    std::string source;
    std::uint64_t job = 0;
    MessageId message = 0;
    std::shared_ptr<const std::vector<std::byte>> bytes;
};

/// A file or directory tree that landed on this member: verified, under its final name.
struct Landed {
    std::string source;
    std::uint64_t job = 0;
    MessageId message = 0;
    std::filesystem::path path;  ///< dest_root / the name it was pushed under
    std::uint64_t bytes = 0;     ///< the file's size, or the tree's bundle's
    std::size_t entries = 0;     ///< a tree's files, directories and links; 0 for one file
};

/// Flows of other jobs a push runs beside (Peer::beside).
struct PeerBeside {
    std::vector<BackgroundFlow> flows;
    std::size_t jobs = 0;  ///< the distinct jobs they belong to
    std::string planning;
};

/// Size and SHA-256 of an origin at a member (Peer::describe).
struct PeerDescribed {
    std::uint64_t size = 0;
    net::Digest sha{};
    std::vector<net::Digest> pieces;
    unsigned mode = 0644;  ///< permission bits of a file origin
};

/// Per member, in order: its first response (null when none), or why there is none (Peer::call_all).
struct PeerAnswers {
    std::vector<nlohmann::json> responses;
    std::vector<std::string> errors;  ///< empty for a member that answered
};

/// Sends one `response` frame back to whoever made a request.
using Responder = std::function<void(const nlohmann::json&)>;

}  // namespace hetcast
