#pragma once
// Peer's insides: the assembly of the parts. Its state lives in the parts' classes (tables
// of jobs, lanes, answers awaited, parked pieces, bulk transfers...); its methods, the glue
// between them, in the peer_*.cpp files of this folder. It may include any part's private
// headers; nothing outside peer/ includes it (docs/architecture.md). Not installed.
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
#include "hetcast/sim/flow.hpp"
#include "../cluster/bulk.hpp"
#include "../cluster/link_state.hpp"
#include "../cluster/revocations.hpp"
#include "../job/coord_table.hpp"
#include "../job/job_state.hpp"
#include "../job/job_table.hpp"
#include "../job/plan_board.hpp"
#include "../transfer/pacing.hpp"
#include "../transfer/parked.hpp"
#include "../wire/directory.hpp"
#include "../wire/frames.hpp"
#include "../wire/lanes.hpp"
#include "../wire/pending.hpp"
#include "../wire/request_limits.hpp"
#include "../wire/streams.hpp"
#include "../wire/worker_pool.hpp"

namespace hetcast {

/// What the peer_*.cpp files share; each has `using namespace detail`.
namespace detail {

using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameHeader;
using net::FrameType;
}  // namespace detail

struct Peer::Impl {
    PeerConfig cfg;
    PeerStats stats;
    std::unique_ptr<net::Transport> transport;
    std::optional<NodeId> profile_self;
    mutable std::mutex host_mu;
    mutable detail::Clock::time_point host_free{};  ///< the emulated host is busy until then

    mutable std::mutex mu;
    /// The members and the control connection kept with each (wire/directory.hpp).
    detail::MemberDirectory directory;
    /// The jobs this member takes part in (job/job_table.hpp) and those it coordinates,
    /// with the pushes cancelled by id (job/coord_table.hpp).
    detail::JobTable jobs;
    detail::CoordTable coords;
    /// Pings waiting for their pong: (the peer's clock, when the pong came).
    detail::Pending<std::pair<double, double>> pings;
    /// Requests waiting for their response.
    detail::Pending<nlohmann::json> calls;
    std::map<std::string, std::shared_ptr<const net::MessageBody>> offers;
    std::deque<Delivery> inbox;
    std::condition_variable inbox_cv;
    std::function<void(Delivery)> delivery_cb;
    std::function<void(Landed)> landed_cb;
    std::function<void(const net::PeerIdentity&, const nlohmann::json&, Responder)> request_handler;
    /// Identities no longer admitted (cluster/revocations.hpp).
    detail::RevocationList revocations;
    /// Empty, or why a peer is not admitted (revoked). Called by the transport.
    std::string admit(const net::PeerIdentity& who) const;
    /// Empty, or why a peer may not connect to this one: a name that is neither a member
    /// nor an operator. A peer that knows no other member yet (waiting to be joined)
    /// admits every identity of its CA: it has no list to check against.
    std::string admit_inbound(const net::PeerIdentity& who) const;
    // --- limits (peer_limits.cpp) ---------------------------------------------------------
    /// Counts a request of `c`'s peer until the returned handle goes (null, and nothing
    /// counted, when that peer has requests_per_peer already).
    std::shared_ptr<void> take_request(const net::ConnectionPtr& c);
    detail::RequestLimits limits;
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
    std::atomic<bool> stopping{false};
    /// Verified pieces of a cut-through copy kept for the next try (transfer/parked.hpp).
    detail::ParkedStore parked;
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

    // --- link emulation (peer_emulation.cpp) ----------------------------------------------
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

    // --- connections (peer_connections.cpp) -----------------------------------------------
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
    /// The job each known lane carries (wire/lanes.hpp).
    detail::LaneTable lanes;
    /// Every connection, whichever side dialled, paces what this peer sends on it: answers
    /// (pongs, events) cross the emulated link as data does.
    void on_open(const net::ConnectionPtr& c) const;
    void on_close(const net::ConnectionPtr& c, const std::string& why);

    // --- frames, pings and requests (peer_connections.cpp) --------------------------------
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

    // --- streams that are no job: uploads (peer_streams.cpp) ------------------------------
    detail::StreamTable streams;

    // --- goodput measurements (peer_goodput.cpp) ------------------------------------------
    /// Which connections carry bulk transfers, and each measurement's window.
    detail::BulkTransfers bulk;
    void on_bulk(const net::ConnectionPtr& c, const net::Frame& f);
    /// A member asks for a bulk transfer: a helper thread pumps it.
    void start_bulk(const net::ConnectionPtr& c, const net::Frame& f);
    void pump(const net::ConnectionPtr& c, double seconds, std::uint64_t max_bytes);

    // --- a participant's part of a job (peer_arrive.cpp, peer_tasks.cpp) ------------------
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
    // --- cut-through pieces (peer_pieces.cpp) ---------------------------------------------
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
    /// A verified bundle (message m) lands as its tree (runtime/tree.hpp,
    /// peer_tree.cpp); throws naming
    /// what did not land, after landing all it could.
    void land_bundle(const Job& job, MessageId m, const FileSink& bundle) const;
    /// Joins and forgets jobs whose task lists have ended.
    void reap();
    void abort_job(Job& job, const std::string& why);

    // --- events, at the coordinator (peer_coordinate.cpp) ---------------------------------
    void emit(Job& job, const JobEvent& e);
    void on_event(const net::ConnectionPtr& c, const net::Frame& f);
    void apply_event(std::uint64_t id, const std::string& who, const JobEvent& e, const net::ConnectionPtr* via);

    // --- coordinating (peer_coordinate.cpp) -----------------------------------------------
    /// What one try of a push left: who failed on their own account (with why), and
    /// whether the push must stop (cancelled, timed out, the coordinator stopping, the
    /// source failing).
    struct Try {
        std::map<std::string, std::string> failed;
        bool final = false;
        double started = 0;  ///< when the participants were told to start (or the try began)
        bool not_started = false;  ///< a participant refused or failed its plan: nothing moved
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

    // --- recovering (peer_recover.cpp) ----------------------------------------------------
    /// Runs a job and, while members fail, re-serves the live destinations they orphaned
    /// (JobSpec::replan), up to max_tries.
    JobReport run(JobSpec spec);
    static constexpr int max_tries = 3;
    // --- waiting for busy members (peer_queue.cpp) -------------------------------------
    /// A push that members refused only because they already take part in max_jobs jobs:
    /// nothing of it moved, so it waits in this coordinator's queue, in order, and the head
    /// tries the same plan again (with backoff) until it starts, is cancelled, times out or
    /// the peer stops. `result` and the returned report are those of the try that ended it.
    JobReport wait_for_members(const JobSpec& spec, detail::Clock::time_point deadline, Try& result, JobReport report);
    struct Waiting {
        std::uint64_t job = 0;
        std::string algorithm;
        double since = 0;
        std::uint64_t owed = 0;
        std::string cancelled;  ///< why Peer::cancel ended it while it waited
    };
    std::deque<Waiting> waiting;  ///< under mu; the front tries next
    std::condition_variable waiting_cv;
    /// How many pushes may wait at one coordinator; one more is refused as before.
    static constexpr std::size_t max_waiting = 64;

    // --- the jobs a new one runs beside (peer_queue.cpp) ----------------------------------
    /// The Peer this is the inside of (Peer can be neither copied nor moved).
    Peer* owner = nullptr;
    /// The answer to {"cmd": "flows"} (docs/protocol.md, "Running jobs' flows"): per
    /// message of a started job this member still receives, who sends it, the bytes left
    /// and the job's --bwlimit; and how many jobs it takes part in, of max_jobs. Answered
    /// on the I/O thread: it only reads the job table.
    nlohmann::json flows_answer();
    /// {"cmd": "flows"} to each of `members` (this member's own read directly), one deadline
    /// for all; a member that does not answer in time, or not as flows_answer() does, has no
    /// entry.
    std::vector<nlohmann::json> ask_flows(const std::vector<std::string>& members,
                                          const nlohmann::json& request = {{"cmd", "flows"}},
                                          std::map<std::string, nlohmann::json>* by_member = nullptr);
    /// Whether none of `members` that answers is at its max_jobs: the head of the queue
    /// tries its plan again only then (a question answered at once, where a try sets a
    /// whole job up).
    bool room(const std::vector<std::string>& members);
    /// The flows of other jobs that a try of a job on `net` runs beside: asked of the
    /// participants (this member's own read directly); a member that does not answer in
    /// time adds nothing. Flows naming members outside `net` are left out.
    using Beside = Peer::Beside;
    /// Peer::beside(); the flows of push `own` (a key) are not its own neighbours.
    Beside beside(const Network& net, const std::vector<std::string>& participants, const Schedule* plan = nullptr,
                  std::uint64_t rate = 0, const std::string& own = {});
    /// Pushes planned here and elsewhere at the same moment (job/plan_board.hpp).
    detail::PlanBoard board;
};

}  // namespace hetcast
