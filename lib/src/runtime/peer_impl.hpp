#pragma once
// Peer's insides, shared by peer.cpp (connections, frames, requests, the public API),
// peer_tasks.cpp (a participant's part of a job) and peer_coordinate.cpp (the
// coordinator's part). Not installed: nothing outside lib/src/runtime includes it.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "cluster/link_state.hpp"
#include "transfer/pacing.hpp"
#include "wire/worker_pool.hpp"

namespace hetcast {

/// What peer.cpp, peer_tasks.cpp and peer_coordinate.cpp share; each has `using namespace detail`.
namespace detail {

using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameHeader;
using net::FrameType;
using Clock = std::chrono::steady_clock;

inline double now_s() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

inline std::vector<std::byte> bytes_of(std::string_view s) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    return {p, p + s.size()};
}

inline Frame make_frame(FrameType type, std::uint64_t job, std::uint32_t message, std::string_view payload) {
    return Frame{FrameHeader{type, 0, job, message, 0}, bytes_of(payload)};
}

/// A frame carrying `payload` as JSON text; strings that are not UTF-8 (an error naming a
/// file, a member's name from a config) go as U+FFFD instead of throwing.
inline Frame json_frame(FrameType type, std::uint64_t job, std::uint32_t message, const nlohmann::json& payload) {
    return make_frame(type, job, message, payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

inline std::string message_label(MessageId m) { return "message " + std::to_string(m); }

/// Progress events go out after this many bytes of a message arrive.
inline constexpr std::uint64_t progress_step = std::uint64_t{4} << 20;

/// Bytes per data frame of a job: its chunk, and at most a piece when it cuts through (a
/// receiver takes a frame whole, so a relay passes on nothing finer than its frames). Under
/// --bwlimit at most an eighth of a second's worth (at least 16 KiB): a receiver then sees
/// data several times a second, however far below chunk / stall_timeout the limit is.
inline std::size_t frame_bytes(const JobPlan& p) {
    std::uint64_t chunk = p.chunk;
    if (p.relay == Relay::cut_through) chunk = std::min<std::uint64_t>(chunk, p.piece);
    if (p.bwlimit == 0) return static_cast<std::size_t>(chunk);
    return static_cast<std::size_t>(std::clamp<std::uint64_t>(p.bwlimit / 8, std::min<std::uint64_t>(std::uint64_t{16} << 10, chunk), chunk));
}

/// How long a receive of this job may see no data before it counts as stalled: the stall
/// timeout, and under --bwlimit also the time a sender's frames to every other participant
/// take at the limit (its sends of the job draw on one bucket, one frame each in turn).
inline std::chrono::milliseconds receive_stall(const JobPlan& p, std::chrono::milliseconds stall) {
    if (p.bwlimit == 0) return stall;
    const double others = static_cast<double>(std::max<std::size_t>(p.participants.size(), 2) - 1);
    const double turn = others * static_cast<double>(frame_bytes(p)) / static_cast<double>(p.bwlimit);
    return stall + std::chrono::milliseconds(static_cast<std::int64_t>(2000 * turn));
}

}  // namespace detail

/// What a participant knows of one message it receives.
struct Recv {
    std::string from;
    bool keep = false;  ///< this node is a destination (else it only relays)
    std::unique_ptr<FileSink> sink;  ///< file messages; lands (destinations) or is removed at the end
    std::vector<std::byte> buf;  ///< buffer messages
    std::unique_ptr<ChunkHasher> buf_hash;
    std::uint64_t got = 0;
    double first = 0, last = 0;  ///< when the first and the last byte arrived (this node's clock)
    bool ended = false;  ///< data_end arrived
    net::Digest sent_sha{};
    bool done = false;   ///< verified and held
    std::string error;
    std::shared_ptr<const net::MessageBody> body;
    /// Cut-through jobs: the pieces checked so far; what this node's sends read.
    std::shared_ptr<PieceTracker> pieces;
    std::map<std::uint64_t, int> refetches;  ///< how often each piece was asked for again
    std::uint64_t resumed = 0;  ///< bytes held verified from an earlier try when this one began
    bool from_failed = false;   ///< it failed because its feeder did (lost, cancelled upstream)
};

/// A participant's part of one job.
struct Job {
    JobPlan plan;
    net::ConnectionPtr coordinator;  ///< null when this peer coordinates the job itself
    std::mutex mu;
    std::condition_variable cv;
    std::map<MessageId, Recv> recv;
    std::map<MessageId, std::shared_ptr<const net::MessageBody>> held;
    int outstanding = 0;
    std::string send_error;
    bool aborted = false;
    std::string abort_reason;
    std::atomic<bool> finished{false};
    std::uint64_t unreported = 0;
    std::thread runner;
    double planned = detail::now_s();  ///< when its plan arrived
    double started = 0;                ///< when its task list started
    /// --bwlimit: every send of this job from this member draws on it (null: no limit).
    std::shared_ptr<detail::TokenBucket> pace;
    /// Where each send (message, to) starts: a receiver that holds a prefix from an earlier try.
    std::map<std::pair<MessageId, std::string>, std::uint64_t> resume;
    /// Data lanes (docs/protocol.md): the connections this member dialled for this job's
    /// data to each receiver, and those that brought it this job's data. Never a member's
    /// control connection. Under mu.
    std::map<std::string, net::ConnectionPtr> lanes_out;
    std::vector<net::ConnectionPtr> lanes_in;
    /// When bytes last arrived from `who` on a lane of this job (a frame still arriving
    /// included); the epoch when none has. Under mu.
    [[nodiscard]] detail::Clock::time_point heard_from(const std::string& who) const {
        detail::Clock::time_point t{};
        for (const auto& c : lanes_in) {
            if (c->peer() == who) t = std::max(t, c->received_at());
        }
        return t;
    }
};

/// The coordinator's view of one job.
struct Coord {
    struct Node {
        net::ConnectionPtr conn;
        double sent = 0;    ///< when the plan went out (coordinator clock)
        double offset = 0;  ///< node clock minus coordinator clock, estimated from the plan's round trip
        /// What every frame each way proves about the offset: a frame arrives after it left.
        double offset_lo = -std::numeric_limits<double>::infinity();
        double offset_hi = std::numeric_limits<double>::infinity();
        /// The offset estimate within what the frames proved.
        [[nodiscard]] double bounded_offset() const {
            return offset_lo <= offset_hi ? std::clamp(offset, offset_lo, offset_hi) : offset;
        }
        bool ready = false;
        bool finished = false;
        std::string error;
        double pinged = 0;    ///< when the coordinator last asked it for a sign of life
        bool spread = false;  ///< its failure was passed on to those it feeds
    };
    std::mutex mu;
    std::condition_variable cv;
    std::map<std::string, Node> nodes;
    /// Who feeds each (message, receiver), and which have taken a message whole (a hop
    /// event): a failed feeder's receivers that do not have it yet are orphans.
    std::map<std::pair<MessageId, std::string>, std::string> feeder;
    std::set<std::pair<MessageId, std::string>> have;
    std::uint64_t push = 0;  ///< the first try's job id: what `hetcast cancel` names
    /// (message, receiver) → bytes it holds from an earlier try (its ready event said so).
    std::map<std::pair<MessageId, std::string>, std::uint64_t> resume;
    std::string cancelled;   ///< why the job was cancelled, once it is
    struct Delivered {
        double node_clock;
        double arrived;  ///< when the event reached the coordinator
    };
    std::map<std::pair<MessageId, std::string>, Delivered> delivered;
    struct HopSeen {
        MessageId message;
        std::string from, to;
        std::uint64_t bytes;
        double first, last, arrived;  ///< node clocks of the first and last byte; when the event came
    };
    std::vector<HopSeen> hops;
    std::uint64_t bytes_in = 0;
    std::uint64_t owed = 0;  ///< bytes × destinations
    std::vector<std::uint64_t> sizes;  ///< of each message
    std::map<std::string, std::uint64_t> owed_to;  ///< each destination's bytes in all
    std::map<std::string, std::uint64_t> got;      ///< what each destination said it received
    std::map<std::string, std::uint64_t> landed;   ///< bytes of the messages each has delivered
    /// The progress of the job now. Under mu.
    [[nodiscard]] JobProgress progress() const {
        JobProgress p{std::min(bytes_in, owed), owed, 0, 0, {}};
        std::set<std::string> feeds, fed;
        for (const auto& [key, from] : feeder) {
            feeds.insert(from);
            fed.insert(key.second);
        }
        for (const auto& [name, n] : nodes) {
            const auto o = owed_to.find(name);
            const std::uint64_t owe = o == owed_to.end() ? 0 : o->second;
            const auto g = got.find(name), l = landed.find(name);
            const std::uint64_t held = std::max(g == got.end() ? 0 : g->second, l == landed.end() ? 0 : l->second);
            const std::uint64_t has = owe > 0 ? std::min(owe, held) : held;  // a relay only: what passed through
            const bool source = owe == 0 && !fed.count(name);
            std::string state = !n.error.empty() ? "failed"
                                : n.finished     ? "done"
                                : source         ? (started > 0 ? "sending" : "planned")
                                : owe > 0 && has < owe ? (has > 0 ? "receiving" : "planned")
                                : has == 0             ? "planned"
                                : feeds.count(name) ? "relaying"
                                                    : "receiving";
            p.members.push_back({name, std::move(state), has, owe});
        }
        bool any = false;
        for (const auto& [d, owe] : owed_to) {
            const auto g = got.find(d), l = landed.find(d);
            const std::uint64_t has = std::max(g == got.end() ? 0 : g->second, l == landed.end() ? 0 : l->second);
            p.everywhere = any ? std::min(p.everywhere, std::min(has, owe)) : std::min(has, owe);
            p.size = std::max(p.size, owe);
            any = true;
        }
        return p;
    }
    std::string algorithm;
    double started = 0;  ///< when job_start went out
};

struct Peer::Impl {
    PeerConfig cfg;
    PeerStats stats;
    std::unique_ptr<net::Transport> transport;
    std::optional<NodeId> profile_self;
    mutable std::mutex host_mu;
    mutable detail::Clock::time_point host_free{};  ///< the emulated host is busy until then

    mutable std::mutex mu;
    std::map<std::string, Member> members;
    std::map<std::string, net::ConnectionPtr> out;
    std::map<std::uint64_t, std::shared_ptr<Job>> jobs;
    std::map<std::uint64_t, std::shared_ptr<Coord>> coords;
    std::map<std::uint32_t, std::promise<std::pair<double, double>>> pings;
    std::uint32_t ping_seq = 0;
    std::map<std::uint32_t, std::promise<nlohmann::json>> calls;
    std::uint32_t call_seq = 0;
    std::map<std::string, std::shared_ptr<const net::MessageBody>> offers;
    std::deque<Delivery> inbox;
    std::condition_variable inbox_cv;
    std::function<void(Delivery)> delivery_cb;
    std::function<void(const net::PeerIdentity&, const nlohmann::json&, Responder)> request_handler;
    std::vector<net::Revocation> revocations;  ///< under mu
    /// Empty, or why a peer is not admitted (revoked). Called by the transport.
    std::string admit(const net::PeerIdentity& who) const;
    /// Empty, or why a peer may not connect to this one: a name that is neither a member
    /// nor an operator. A peer that knows no other member yet (waiting to be joined)
    /// admits every identity of its CA: it has no list to check against.
    std::string admit_inbound(const net::PeerIdentity& who) const;
    // --- limits (peer_limits.cpp) --------------------------------------------------------
    /// Counts a request of `c`'s peer until the returned handle goes (null, and nothing
    /// counted, when that peer has requests_per_peer already).
    std::shared_ptr<void> take_request(const net::ConnectionPtr& c);
    std::mutex limits_mu;
    std::map<std::string, std::size_t> requests_of;  ///< by peer name; under limits_mu
    std::map<const net::Connection*, std::size_t> serving;  ///< requests running per connection; under limits_mu
    /// Whether `c` carries work, so that it is not idle: a request running, a job this peer
    /// takes part in or coordinates with that member, a lane, a bulk transfer, a call waiting.
    bool busy(const net::ConnectionPtr& c);
    /// Requests and job set-ups run on two bounded pools, never a thread each: quick ones
    /// (hello, status, ping, member lists, maps, job lists) and slow ones (pushes, probes,
    /// joins, describes that hash a file, job set-ups). A slow request holds its thread
    /// for as long as it runs, so quick ones have threads of their own.
    detail::WorkerPool quick{4, 1024};
    /// Hellos (what `status` and a coordinator ask to see who is up) never wait behind
    /// other requests, quick or not.
    detail::WorkerPool live{2, 4096};
    /// Wakes sends held back by a job's --bwlimit; made by the first such job.
    std::shared_ptr<detail::Alarm> alarm;
    detail::WorkerPool slow{16, 64};
    /// One connect at a time per member (no duplicate connections to it); a member that
    /// does not answer holds up only those who want that member.
    std::map<std::string, std::shared_ptr<std::mutex>> connecting;
    std::atomic<bool> stopping{false};
    /// A destination's copy of a cut-through file whose try failed because its feeder did:
    /// its verified pieces wait here (the temporary file stays) for the next try of the
    /// same push, which goes on from them; dropped after parked_for. Keyed by final path.
    struct Parked {
        std::unique_ptr<FileSink> sink;
        std::uint64_t verified = 0;
        net::Digest sha{};
        std::uint64_t size = 0, piece = 0;
        double at = 0;
        std::uint64_t job = 0;  ///< the try that left it: dropped if its coordinator is lost
        std::string coordinator;  ///< ... or cancels it
    };
    std::map<std::string, Parked> parked;
    static constexpr double parked_for = 60;
    /// Reaps jobs that ended or never started, once a second (a daemon may see no new job
    /// for days).
    std::thread janitor;
    std::condition_variable janitor_cv;
    std::mt19937_64 rng{std::random_device{}()};

    explicit Impl(PeerConfig c) : cfg(std::move(c)) {
        if (cfg.link_profile) profile_self = cfg.link_profile->find(cfg.name);
        if (profile_self && cfg.link_profile->capacities()) {
            link_state = std::make_unique<detail::LinkState>(*cfg.link_profile, cfg.link_state);
        }
    }

    void log(LogLevel level, const std::string& line) const {
        if (cfg.log) cfg.log(level, line);
    }

    // --- link emulation (peer_tasks.cpp) ----------------------------------------------
    /// The profile's NICs and uplinks, when it has capacities.
    std::unique_ptr<detail::LinkState> link_state;
    std::optional<NodeId> profile_id(const std::string& name) const {
        if (!cfg.link_profile || !profile_self) return std::nullopt;
        return cfg.link_profile->find(name);
    }
    /// The emulated host spends `seconds` of its one CPU: send and receive overheads never
    /// overlap (Wu's model), not even across jobs running at once, so concurrent jobs share
    /// the host as they would a real one.
    void busy(double seconds) const;
    void emulate_send(const std::string& to, double bytes) const;
    void emulate_recv(double bytes) const;

    // --- connections (peer.cpp) --------------------------------------------------------
    std::optional<Member> address(const std::string& name, const std::vector<Member>* hint) const;
    /// The control connection with a member (dialled once, kept): requests, pings and a
    /// job's plan, start, events and cancels; never a job's data.
    net::ConnectionPtr conn_to(const std::string& name, const std::vector<Member>* hint = nullptr);
    /// The data lane of `job` to `name`: a connection of its own, dialled on the first send.
    /// Throws when the job is aborted meanwhile (the new lane is reset).
    net::ConnectionPtr lane_to(Job& job, const std::string& name);
    /// Dials the lanes of this member's sends while the job is set up, so that no handshake
    /// lies on the timeline the plan predicted (a small job's transfers take milliseconds).
    void dial_lanes(Job& job);
    /// Ends a job's lanes: reset (what is queued and in the kernel is dropped) or closed.
    /// Under job.mu.
    void end_lanes(Job& job, bool reset, const std::string& why);
    /// Notes that `c` brought data of `job`: a lane to close when the job ends here. Under job.mu.
    void note_lane(Job& job, const net::ConnectionPtr& c);
    /// The job each known lane carries, and whether this member receives on it, so that its
    /// closing concerns that job only.
    struct LaneOf {
        std::uint64_t job = 0;
        bool in = false;
    };
    std::map<const net::Connection*, LaneOf> lanes;  ///< under mu
    /// Every connection, whichever side dialled, paces what this peer sends on it: answers
    /// (pongs, events) cross the emulated link as data does.
    void on_open(const net::ConnectionPtr& c) const;
    void on_close(const net::ConnectionPtr& c, const std::string& why);

    // --- frames, pings and requests (peer.cpp) -------------------------------------------
    void on_frame(const net::ConnectionPtr& c, net::Frame&& f);
    void on_ping(const net::ConnectionPtr& c, const net::Frame& f);
    void on_pong(const net::Frame& f);
    void on_request(const net::ConnectionPtr& c, const net::Frame& f);
    /// Runs `work` on `pool`; false (and nothing runs) when the peer stops or the pool is full.
    bool spawn(detail::WorkerPool& pool, std::function<void()> work);
    /// When a frame last came from each member (steady clock, seconds): what tells the
    /// coordinator that a participant still runs.
    std::mutex heard_mu;
    std::map<std::string, double> heard;
    void hear(const std::string& who) {
        std::lock_guard lock(heard_mu);
        heard[who] = detail::now_s();
    }
    double last_heard(const std::string& who) {
        std::lock_guard lock(heard_mu);
        const auto it = heard.find(who);
        return it == heard.end() ? 0 : it->second;
    }
    void on_response(const net::Frame& f);

    // --- streams that are no job: uploads (peer_streams.cpp) ----------------------------
    std::mutex streams_mu;
    std::map<std::uint64_t, std::shared_ptr<const StreamHooks>> streams;
    /// Whether `f` (data or data_end) belongs to a stream; then it went to its hooks.
    bool route_stream(const net::ConnectionPtr& c, net::Frame& f);
    void streams_closed(const net::Connection* c, const std::string& why);

    // --- goodput measurements (peer_goodput.cpp) -----------------------------------------
    /// What a receiver counts of one bulk transfer it asked for: arrivals (time, bytes so
    /// far) at the edges of its window.
    struct BulkIn {
        double seconds = 0, warmup = 0;
        double start = 0;  ///< when the first data arrived
        std::uint64_t bytes = 0;
        double last = 0;   ///< when the latest data arrived
        std::optional<std::pair<double, std::uint64_t>> from, to;
        std::vector<std::pair<double, std::uint64_t>> arrivals;
        bool done = false;
        std::shared_ptr<std::promise<Goodput>> result;
    };
    std::mutex bulk_mu;
    std::map<const net::Connection*, BulkIn> bulk_in;  ///< connections this peer receives bulk transfers on
    std::set<const net::Connection*> bulk_out;          ///< connections it sends them on
    /// Connections bulk_connect() made, waiting for their measurement, and when they were made.
    std::map<std::uint64_t, std::pair<net::ConnectionPtr, double>> bulk_ready;
    std::uint64_t bulk_seq = 0;
    void on_bulk(const net::ConnectionPtr& c, const net::Frame& f);
    /// A member asks for a bulk transfer: a helper thread pumps it.
    void start_bulk(const net::ConnectionPtr& c, const net::Frame& f);
    void pump(const net::ConnectionPtr& c, double seconds, std::uint64_t max_bytes);
    /// Whether `c` carried bulk transfers (its closing then concerns no job); forgets it.
    bool forget_bulk(const net::Connection* c);

    // --- a participant's part of a job (peer_tasks.cpp) ----------------------------------
    /// "gen:SIZE:SEED": a test payload of SIZE pseudo-random bytes, the same for a given
    /// seed, made as it is read (at most 1 GiB; never held whole).
    static std::shared_ptr<const net::MessageBody> generated(const std::string& origin);
    /// The body an origin names on this peer. Throws InputError when there is none.
    std::shared_ptr<const net::MessageBody> resolve(const std::string& origin);
    std::shared_ptr<Job> find_job(std::uint64_t id);
    void on_plan(const net::ConnectionPtr& c, const net::Frame& f);
    /// Registers a job and prepares where each received message goes; throws (and
    /// registers nothing) when a destination path is refused or cannot be created.
    std::shared_ptr<Job> make_job(JobPlan plan, net::ConnectionPtr coordinator);
    void on_start(const net::ConnectionPtr& c, const net::Frame& f);
    void start_runner(const std::shared_ptr<Job>& job);
    Recv& expect(Job& job, const net::ConnectionPtr& c, MessageId m);
    void on_data(const net::ConnectionPtr& c, net::Frame&& f);
    /// Data of a job this member does not have (over, or refused): the lane is reset, so
    /// its sender stops at once; logged.
    void refuse_lane(const net::ConnectionPtr& c, const net::Frame& f);
    void on_data_end(const net::ConnectionPtr& c, const net::Frame& f);
    // --- cut-through pieces (peer_pieces.cpp) -------------------------------------------
    /// Data of a cut-through message: written, checked piece by piece; a piece that fails
    /// its check is asked for again. Under job.mu.
    void take_pieces(Job& job, Recv& r, const net::ConnectionPtr& c, MessageId m, std::span<const std::byte> data);
    void request_piece(Job& job, Recv& r, const net::ConnectionPtr& c, MessageId m, std::uint64_t k);
    void on_piece_request(const net::ConnectionPtr& c, const net::Frame& f);
    void on_piece_data(const net::ConnectionPtr& c, const net::Frame& f);
    /// Blocks until the first piece of message m is in and checked (or it fails): from
    /// then on this node's sends of m can start.
    void wait_first_piece(Job& job, MessageId m);
    void on_cancel(const net::ConnectionPtr& c, const net::Frame& f);
    void cancel_job(const net::ConnectionPtr& c, const net::Frame& f, Job& job);
    /// A `file:` origin is read for another member only with an operator's order given to
    /// that member (`via`) and naming this member and file. Throws InputError.
    void authorize_read(const std::string& origin, const std::string& order, const std::string& via) const;
    /// With PeerConfig::order_scope, a plan is taken only under an operator's order that
    /// covers it (check_plan_order); throws InputError("refused job ID: why"). peer_orders.cpp.
    void authorize_plan(const JobPlan& plan) const;
    /// Blocks until message m is in and verified (or fails), then returns its body.
    std::shared_ptr<const net::MessageBody> wait_recv(Job& job, MessageId m);
    void deliver(const Job& job, MessageId m, const std::shared_ptr<const net::MessageBody>& body);
    void run_tasks(const std::shared_ptr<Job>& job);
    /// A verified bundle (message m) lands as its tree (runtime/tree.hpp); throws naming
    /// what did not land, after landing all it could.
    void land_bundle(const Job& job, MessageId m, const FileSink& bundle) const;
    /// Joins and forgets jobs whose task lists have ended.
    void reap();
    void abort_job(Job& job, const std::string& why);

    // --- events, at the coordinator (peer_coordinate.cpp) --------------------------------
    void emit(Job& job, const JobEvent& e);
    void on_event(const net::ConnectionPtr& c, const net::Frame& f);
    void apply_event(std::uint64_t id, const std::string& who, const JobEvent& e, const net::ConnectionPtr* via);

    // --- coordinating (peer_coordinate.cpp) ----------------------------------------------
    /// What one try of a push left: who failed on their own account (with why), and
    /// whether the push must stop (cancelled, timed out, the coordinator stopping, the
    /// source failing).
    struct Try {
        std::map<std::string, std::string> failed;
        bool final = false;
        double started = 0;  ///< when the participants were told to start (or the try began)
    };
    /// Runs one try of a job: plans out, start, then events until every participant
    /// finished or failed; participants that stop answering for stall_timeout fail, and
    /// what a failed member feeds is cancelled at once so that nobody waits on it.
    JobReport run_try(const JobSpec& spec, std::uint64_t push, detail::Clock::time_point deadline, Try& result);
    /// Sends a sign-of-life request to participants not heard from lately, fails those
    /// silent for stall_timeout, and cancels what failed members feed. Under k.mu.
    void watch(Coord& k, std::uint64_t job, std::vector<net::ConnectionPtr>& to_close);
    /// A receive of message m this node will not get from its feeder; fails it.
    void cancel_receive(Job& job, MessageId m, const std::string& why);

    // --- recovering (peer_recover.cpp) ---------------------------------------------------
    /// Runs a job and, while members fail, re-serves the live destinations they orphaned
    /// (JobSpec::replan), up to max_tries.
    JobReport run(JobSpec spec);
    static constexpr int max_tries = 3;
    /// Pushes cancelled by id (Peer::cancel), so a next try does not start.
    std::map<std::uint64_t, std::string> cancelled_pushes;
};

}  // namespace hetcast
