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
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/order_scope.hpp"
#include "hetcast/runtime/peer_types.hpp"
#include "hetcast/runtime/report.hpp"
#include "hetcast/runtime/stats.hpp"
#include "hetcast/runtime/tree.hpp"
#include "hetcast/runtime/wire.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/exec_model.hpp"
#include "hetcast/sim/flow.hpp"

namespace hetcast {

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

    /// The flows of other jobs that a push on `net` among `participants` runs beside (issue
    /// 27): the running jobs' remaining flows and those of pushes planned but not started,
    /// asked of the participants (this member's own read directly); a member that does not
    /// answer in time adds nothing, nor do flows naming members outside `net`. With `plan`
    /// (the push's plan as it would run alone, its members sending at most `rate` bytes/s,
    /// 0: no cap), the push is announced with that plan's flows under a key (`planning`,
    /// for JobSpec::planning): pushes asking after it plan beside it, without waiting.
    using Beside = PeerBeside;
    [[nodiscard]] Beside beside(const Network& net, const std::vector<std::string>& participants,
                                const Schedule* plan = nullptr, std::uint64_t rate = 0);

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
    using Described = PeerDescribed;
    /// `order` (runtime/order.hpp, JSON text): what lets another member read one of its files.
    [[nodiscard]] Described describe(const std::string& member, const std::string& origin, std::uint64_t piece = 0,
                                     const std::string& order = {});

    /// Pops the next buffer delivered to this peer, waiting up to `timeout`.
    [[nodiscard]] std::optional<Delivery> receive(std::chrono::milliseconds timeout);
    /// Instead of the queue, every delivery goes to `callback` (on a job thread; it must
    /// not block for long). Pass an empty function to go back to the queue.
    void on_delivery(std::function<void(Delivery)> callback);
    /// Called once for every file or tree that lands here, after it landed and before the
    /// job hears it is delivered (on a job thread; it must not block for long). Files land
    /// under dest_root either way; an empty function: no calls.
    void on_landed(std::function<void(Landed)> callback);

    /// Sends one `response` frame back to whoever made a request.
    using Responder = hetcast::Responder;
    /// `request` frames (JSON) go to `handler` on a thread of their own, with who sent it
    /// (name and role, from its certificate); it answers through the Responder (any number
    /// of times).
    void on_request(std::function<void(const net::PeerIdentity& from, const nlohmann::json& request, Responder)> handler);

    /// Data and data_end frames of a stream that is no job (an operator's upload: Service
    /// push) whose id is `stream`: they go to hooks.frame, on the I/O thread (it must not
    /// block long); hooks.closed hears of every connection that closes. Until end_stream().
    using StreamHooks = hetcast::StreamHooks;
    void accept_stream(std::uint64_t stream, StreamHooks hooks);
    void end_stream(std::uint64_t stream);

    /// Sends `request` to a member and waits for its first response. Throws hetcast::Error
    /// when the member cannot be reached or does not answer within `timeout`.
    [[nodiscard]] nlohmann::json call(const std::string& member, const nlohmann::json& request,
                                      std::chrono::milliseconds timeout);

    /// call() to several members at once, with one deadline for all: `timeout` from when
    /// the requests went out (members not connected yet are dialled in parallel first).
    /// Per member, in order: its first response (null when none), or why there is none.
    using Answers = PeerAnswers;
    [[nodiscard]] Answers call_all(const std::vector<std::string>& members, const nlohmann::json& request,
                                               std::chrono::milliseconds timeout);

    /// Whether each of `members` is up: call_all() of {"cmd": "hello"}, along the control
    /// tree when there are more than control_fanout of them (each child asks its subtree,
    /// docs/protocol.md "The control tree"); a member no child vouched for is asked
    /// directly in the time left. Within `timeout` (and the slack of one answer).
    [[nodiscard]] Answers hello_all(const std::vector<std::string>& members, std::chrono::milliseconds timeout);

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

    static constexpr double max_goodput_seconds = hetcast::max_goodput_seconds;
    /// What the receiving member measured of a bulk transfer (runtime/measure.hpp).
    using Goodput = hetcast::Goodput;
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

/// {"cmd": "ping", "target", "sizes", "reps"}: `peer` pings the target; the answer is
/// {"ok": true, "samples": [...]} (runtime/membership.hpp). InputError for sizes or reps
/// out of range.
[[nodiscard]] nlohmann::json answer_ping(Peer& peer, const nlohmann::json& request);

}  // namespace hetcast
