#pragma once
/// A peer: one member of a hetcast cluster, in a daemon or embedded in an application.
///
/// It listens for authenticated connections, executes its part of every job it is given
/// (its task list of the job's Schedule, in order: sends are non-blocking, receives block
/// on the job's receive queue until the whole message is in and verified), and can itself
/// coordinate a job: send every participant its task list, start them together, and
/// collect when each destination completed into a JobReport.
///
/// Threading: the transport has one I/O thread; each job a peer takes part in runs its
/// task list on a thread of its own. Every public member is thread-safe.
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

#include "hetcast/model/network.hpp"
#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/order_scope.hpp"
#include "hetcast/runtime/report.hpp"
#include "hetcast/runtime/stats.hpp"
#include "hetcast/runtime/tree.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/exec_model.hpp"

namespace hetcast {

/// Where a member listens.
/// The largest data frame any member sends: every member accepts frames this large, so
/// members configured with different chunk sizes still talk.
inline constexpr std::size_t max_chunk = std::size_t{8} << 20;
/// The largest frame payload a member accepts: a data chunk, or a job plan (tree.hpp).
inline constexpr std::size_t max_frame_payload = max_chunk + 4096;

struct Member {
    std::string name;
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;
};

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
    /// A connection on which nothing passes either way for this long is closed, unless it
    /// carries a job this peer takes part in, a lane, a bulk transfer, an upload or a
    /// request still running (0: never).
    std::chrono::milliseconds idle_timeout{300000};
    /// Connections one peer (by name) may have open to this one; one more is refused at
    /// its handshake (0: no limit).
    std::size_t connections_per_peer = 64;
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
};

/// A buffer message delivered to this peer (a destination of it).
struct Delivery {
    std::string source;
    std::uint64_t job = 0;
    MessageId message = 0;
    std::shared_ptr<const std::vector<std::byte>> bytes;
};

/// What a message of a job is made of, at its source.
struct JobInput {
    JobInput() = default;
    /// A message this peer sources.
    JobInput(std::shared_ptr<const net::MessageBody> b, std::string n) : body(std::move(b)), name(std::move(n)) {}
    /// A message another member sources, found there at `o`; size and sha as described.
    JobInput(std::string o, std::string n, std::uint64_t bytes, const net::Digest& digest)
        : name(std::move(n)), origin(std::move(o)), size(bytes), sha(digest) {}

    /// The body, when this peer is the message's source. The peer keeps a reference until
    /// the job ends; the caller must not change the bytes (or the file) meanwhile.
    std::shared_ptr<const net::MessageBody> body;
    /// Destination path relative to each destination's dest_root; empty for a buffer,
    /// which is delivered to the destinations' receive queues instead.
    std::string name;
    /// When another member is the source: where that member finds the body ("offer:KEY"
    /// for a buffer it offered, "file:/absolute/path" on a daemon), and its size and
    /// checksum as that member described them (Peer::describe).
    std::string origin;
    std::uint64_t size = 0;
    net::Digest sha{};
    /// Cut-through jobs: the SHA-256 of every piece (Peer::run asks the source for them).
    std::vector<net::Digest> pieces;
    unsigned mode = 0644;  ///< permission bits of the source's file
    /// Modes land exactly and mtimes are set (JobMessage::preserve); `mtime` of a file.
    bool preserve = false;
    std::optional<std::int64_t> mtime;
    /// A bundle's manifest (runtime/tree.hpp; `body` a TreeBody); `name` its landing directory.
    std::vector<TreeEntry> tree;
    bool owner = false;  ///< receivers running as root apply the entries' owners
};

/// How far a job is, as its coordinator knows it.
struct JobProgress {
    std::uint64_t delivered = 0;   ///< bytes destinations received, summed over them
    std::uint64_t owed = 0;        ///< bytes × destinations in all
    /// Bytes of its messages that every destination holds: the least any has received
    /// (a destination's own count, in steps of 4 MiB, or all of it once delivered).
    std::uint64_t everywhere = 0;
    std::uint64_t size = 0;  ///< what `everywhere` counts toward: the most any destination is owed
    /// Each participant, by name: "queued" (the job waits for members busy with max_jobs
    /// other jobs; nothing planned yet), "planned" (nothing received yet), "receiving", "relaying"
    /// (holds all it is owed, or is a relay only, and still feeds others), "sending" (a
    /// source), "done", "failed"; with the bytes it holds of the bytes it is owed.
    struct Member {
        std::string name, state;
        std::uint64_t bytes = 0, owed = 0;
        friend bool operator==(const Member&, const Member&) = default;
    };
    std::vector<Member> members;
};

/// A job to coordinate: a schedule planned on `network` (node names = member names), the
/// model and lower bound it was predicted with, and one input per message of the schedule.
struct JobSpec {
    const Network* network = nullptr;
    /// The operator's order (runtime/order.hpp, JSON text) that members reading their own
    /// files for this job check; empty when only the coordinator reads files.
    std::string order;
    Schedule schedule{"", 0, {}};
    ExecModel model = ExecModel::nonblocking;
    double lower_bound = 0;
    /// The steady-state broadcast throughput no schedule can beat (bytes/s; 0: unknown).
    double throughput_bound = 0;
    /// What `auto` weighed: each candidate's name and predicted completion (empty otherwise).
    std::vector<std::pair<std::string, double>> candidates;
    std::vector<JobInput> inputs;  ///< indexed by MessageId; only messages this peer sources
    /// Bytes per second each member may send for this job in all (0: no limit). Plan on
    /// Network::with_rate_limit() of the same rate, so that the prediction holds.
    std::uint64_t bwlimit = 0;
    /// The whole job must end within this, or it is aborted and reported as failed; 0: no
    /// limit (the default), a job ends when it is done, fails (an error, a member silent for
    /// stall_timeout) or is cancelled, however long it runs.
    std::chrono::milliseconds timeout{0};
    /// Called from the coordinator's job thread when the job moved on.
    std::function<void(const JobProgress&)> progress;
    /// Called once with the job's id, before anything moves (what Peer::cancel takes).
    std::function<void(std::uint64_t)> started;
    /// Re-plans a one-message job for some of its destinations, on the same network and
    /// from the same source: after members fail, the live destinations they should have
    /// fed are served again by this plan, relaying through none of `avoid` (the failed).
    /// Empty: they are reported failed.
    std::function<Schedule(const std::vector<NodeId>& dests, const std::vector<NodeId>& avoid)> replan;
};

/// A job a peer takes part in, as Peer::jobs() lists it.
struct JobInfo {
    std::uint64_t job = 0;
    std::string role;         ///< "coordinator" or "participant"
    std::string coordinator;
    std::string algorithm;
    double seconds = 0;       ///< since the job started here (coordinator: since its first try)
    std::uint64_t bytes = 0;  ///< coordinator: delivered so far; participant: received so far
    std::uint64_t owed = 0;   ///< coordinator: bytes × destinations in all
    std::string state;        ///< "planned", "running", "ending"
};

class Peer {
public:
    explicit Peer(PeerConfig config);
    ~Peer();
    Peer(const Peer&) = delete;
    Peer& operator=(const Peer&) = delete;

    /// Binds and starts serving. Throws hetcast::Error when it cannot bind.
    void start();
    /// Aborts running jobs, closes every connection, joins every thread; idempotent.
    void stop();
    [[nodiscard]] std::uint16_t port() const;
    [[nodiscard]] const std::string& name() const;

    /// Adds revocations: from now on certificates they cover are refused, and open
    /// connections with such peers close at once. Entries are never dropped (a member that
    /// comes back gets a new certificate).
    void revoke(const std::vector<net::Revocation>& revoked);
    [[nodiscard]] std::vector<net::Revocation> revoked() const;
    /// This peer's identity (its CA checks operators' orders).
    [[nodiscard]] const net::Identity& identity() const;

    /// The address book used to reach other members (replaces the previous one).
    void set_members(std::vector<Member> members);
    [[nodiscard]] std::vector<Member> members() const;

    /// Coordinates a job from this peer, which must be the source of every message it
    /// gives an input for, and blocks until it ends. Every participant must be a member.
    /// Never throws for a failure of another node: the report names it. Throws InputError
    /// for a malformed spec (a participant that is not a member, a missing input).
    [[nodiscard]] JobReport run(JobSpec spec);

    /// Cancels a job this peer coordinates (the id its report and JobSpec::started give):
    /// every participant drops it and removes its temporary files, and run() returns a
    /// report whose undelivered outcomes say "cancelled: WHY". False when no such job runs.
    bool cancel(std::uint64_t job, const std::string& why);
    /// The jobs this peer coordinates or takes part in now.
    [[nodiscard]] std::vector<JobInfo> jobs() const;
    /// Counters for monitoring (bytes, connections); valid while the peer lives.
    [[nodiscard]] const PeerStats& stats() const;

    /// Makes `body` available as the origin "offer:KEY" of jobs others coordinate (a
    /// multi-source exchange); replaces an earlier offer of the same key.
    void offer(const std::string& key, std::shared_ptr<const net::MessageBody> body);
    void withdraw(const std::string& key);
    /// Size and SHA-256 of `origin` at `member` (this peer included). Throws InputError
    /// when the member has no such origin, hetcast::Error when it cannot be reached.
    /// With `piece` > 0, also the SHA-256 of every `piece` bytes (cut-through plans).
    struct Described {
        std::uint64_t size = 0;
        net::Digest sha{};
        std::vector<net::Digest> pieces;
        unsigned mode = 0644;  ///< permission bits of a file origin
    };
    /// `order` (runtime/order.hpp, JSON text): what lets another member read one of its files.
    [[nodiscard]] Described describe(const std::string& member, const std::string& origin, std::uint64_t piece = 0,
                                     const std::string& order = {});

    /// Pops the next buffer delivered to this peer, waiting up to `timeout`.
    [[nodiscard]] std::optional<Delivery> receive(std::chrono::milliseconds timeout);
    /// Instead of the queue, every delivery goes to `callback` (on a job thread; it must
    /// not block for long). Pass an empty function to go back to the queue.
    void on_delivery(std::function<void(Delivery)> callback);

    /// Sends one `response` frame back to whoever made a request.
    using Responder = std::function<void(const nlohmann::json&)>;
    /// `request` frames (JSON) go to `handler` on a thread of their own, with who sent it
    /// (name and role, from its certificate); it answers through the Responder (any number
    /// of times).
    void on_request(std::function<void(const net::PeerIdentity& from, const nlohmann::json& request, Responder)> handler);

    /// Data and data_end frames of a stream that is no job (an operator's upload: Service
    /// push) whose id is `stream`: they go to `frame`, on the I/O thread (it must not block
    /// long); `closed` hears of every connection that closes. Until end_stream().
    struct StreamHooks {
        std::function<void(const net::ConnectionPtr&, net::Frame&&)> frame;
        std::function<void(const net::Connection*, const std::string& why)> closed;
    };
    void accept_stream(std::uint64_t stream, StreamHooks hooks);
    void end_stream(std::uint64_t stream);

    /// Sends `request` to a member and waits for its first response. Throws hetcast::Error
    /// when the member cannot be reached or does not answer within `timeout`.
    [[nodiscard]] nlohmann::json call(const std::string& member, const nlohmann::json& request,
                                      std::chrono::milliseconds timeout);

    /// call() to several members at once, with one deadline for all: `timeout` from when
    /// the requests went out (members not connected yet are dialled in parallel first).
    /// Per member, in order: its first response (null when none), or why there is none.
    struct Answers {
        std::vector<nlohmann::json> responses;
        std::vector<std::string> errors;  ///< empty for a member that answered
    };
    [[nodiscard]] Answers call_all(const std::vector<std::string>& members, const nlohmann::json& request,
                                               std::chrono::milliseconds timeout);

    /// Why `member` cannot be reached now (connected and authenticated within the connect
    /// timeout); nothing when it can.
    [[nodiscard]] std::optional<std::string> unreachable(const std::string& member);

    /// Like call(), to whoever listens at host:port (a seed to join through, whose name is
    /// not known yet). Returns the answer and the name the other side proved.
    [[nodiscard]] std::pair<nlohmann::json, std::string> call_at(const std::string& host, std::uint16_t port,
                                                                 const nlohmann::json& request,
                                                                 std::chrono::milliseconds timeout);

    /// Ping-pong with a member: `reps` round trips per size; the minimum is what counts
    /// (ECO §3). Throws hetcast::Error when the member cannot be reached.
    [[nodiscard]] std::vector<PingSample> ping(const std::string& member, const std::vector<std::size_t>& sizes,
                                               int reps);

    /// The longest goodput measurement a peer sends or takes.
    static constexpr double max_goodput_seconds = 10;
    /// What the receiving member measured of a bulk transfer.
    struct Goodput {
        double rate = 0;          ///< bytes/s from the end of the warm-up to the end of the window
        std::uint64_t bytes = 0;  ///< received in all
        double seconds = 0;       ///< the span the rate was measured over
        /// (time on this peer's steady clock, bytes so far) from the first byte to the end
        /// of the window, the latest arrival of each millisecond.
        std::vector<std::pair<double, std::uint64_t>> arrivals;
    };
    /// A one-way bulk transfer from `member` to this peer, on an authenticated connection
    /// of its own that this peer dials: the member sends for about `seconds` (at most
    /// max_goodput_seconds) or `max_bytes`, paced like any other data (link emulation);
    /// this peer counts what arrives from `warmup` after the first byte (TCP's slow start
    /// is over by then) to `seconds` after it, and then closes the connection, which resets
    /// what the member's socket still holds. Any number may run at once. Throws
    /// hetcast::Error when the member cannot be reached, the connection closes early, or
    /// the window is not over within the connect timeout after `seconds`.
    [[nodiscard]] Goodput goodput_from(const std::string& member, double seconds, double warmup,
                                       std::uint64_t max_bytes);
    /// Dials `member` for a goodput_from() to come, so that transfers measured together can
    /// start together: no handshake then crosses links that the others already fill. A
    /// connection no measurement takes is closed after a minute. Throws like goodput_from().
    [[nodiscard]] std::uint64_t bulk_connect(const std::string& member);
    /// goodput_from() on a connection bulk_connect() made; it is used up either way.
    [[nodiscard]] Goodput goodput_from(std::uint64_t connection, double seconds, double warmup,
                                       std::uint64_t max_bytes);

private:
    nlohmann::json call_on(const net::ConnectionPtr& c, const std::string& who, const nlohmann::json& request,
                           std::chrono::milliseconds timeout);
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hetcast
