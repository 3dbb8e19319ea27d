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
#include "../transfer/pacing.hpp"
#include "../transfer/parked.hpp"
#include "../wire/directory.hpp"
#include "../wire/frames.hpp"
#include "../wire/lanes.hpp"
#include "../wire/pending.hpp"
#include "../wire/request_limits.hpp"
#include "../wire/streams.hpp"
#include "../wire/worker_pool.hpp"
#include "peer_admission.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"
#include "peer_emulation.hpp"
#include "peer_goodput.hpp"
#include "peer_origins.hpp"
#include "peer_inbox.hpp"
#include "peer_participant.hpp"
#include "peer_pieces.hpp"
#include "peer_requests.hpp"
#include "peer_setup.hpp"
#include "peer_tasks.hpp"

namespace hetcast {

/// What the peer_*.cpp files share; each has `using namespace detail`.
namespace detail {

using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameHeader;
using net::FrameType;
}  // namespace detail

struct Peer::Impl : detail::PeerCore {
    mutable std::mutex mu;
    /// The jobs this member coordinates, with the pushes cancelled by id (job/coord_table.hpp).
    detail::CoordTable coords;
    /// Whether `c` carries work, so that it is not idle: a request running, a job this peer
    /// takes part in or coordinates with that member, a lane, a bulk transfer, a call waiting.
    bool busy(const net::ConnectionPtr& c);
    /// Verified pieces of a cut-through copy kept for the next try (transfer/parked.hpp).
    detail::ParkedStore parked;
    /// Reaps jobs that ended or never started, once a second (a daemon may see no new job
    /// for days).
    std::thread janitor;
    std::condition_variable janitor_cv;
    std::mt19937_64 rng{std::random_device{}()};

    /// Made here, before Peer's constructor names the peer: a profile finds this member by
    /// the name its config gives.
    detail::Emulation emulation{cfg};
    detail::Connections connections{*this};
    detail::Admission admission{cfg, connections.directory()};
    detail::Origins origins{cfg, admission.revocations()};
    detail::Bulk bulk{*this, connections.directory()};
    detail::Requests requests{*this, connections, admission, origins, [this] { return participant.flows_answer(); }};
    detail::Inbox inbox;
    detail::PieceRelay pieces{*this};
    detail::TaskRunner runner{*this,  connections, emulation, pieces, parked, inbox,
                              [this](std::uint64_t id, const std::string& who, const JobEvent& e) {
                                  apply_event(id, who, e, nullptr);
                              }};
    detail::Participant participant{*this, connections, pieces, runner, parked};
    detail::JobSetup setup{*this, connections, origins, participant, runner, parked};

    explicit Impl(PeerConfig c) : PeerCore(std::move(c)) {}


    /// Every connection, whichever side dialled, paces what this peer sends on it: answers
    /// (pongs, events) cross the emulated link as data does.
    void on_open(const net::ConnectionPtr& c) const;
    void on_close(const net::ConnectionPtr& c, const std::string& why);

    void on_frame(const net::ConnectionPtr& c, net::Frame&& f);

    // --- streams that are no job: uploads (peer_streams.cpp) ------------------------------
    detail::StreamTable streams;



    // --- events, at the coordinator (peer_coordinate.cpp) ---------------------------------
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
    /// {"cmd": "flows"} to each of `members` (this member's own read directly), one deadline
    /// for all; a member that does not answer in time, or not as flows_answer() does, has no
    /// entry.
    std::vector<nlohmann::json> ask_flows(const std::vector<std::string>& members);
    /// Whether none of `members` that answers is at its max_jobs: the head of the queue
    /// tries its plan again only then (a question answered at once, where a try sets a
    /// whole job up).
    bool room(const std::vector<std::string>& members);
    /// The flows of other jobs that a try of a job on `net` runs beside: asked of the
    /// participants (this member's own read directly); a member that does not answer in
    /// time adds nothing. Flows naming members outside `net` are left out.
    struct Beside {
        std::vector<BackgroundFlow> flows;
        std::size_t jobs = 0;  ///< the distinct jobs they belong to
    };
    Beside beside(const Network& net, const std::vector<std::string>& participants);
};

}  // namespace hetcast
