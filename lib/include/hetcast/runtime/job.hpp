#pragma once
/// A job as its participants see it: what the coordinator sends each node in a `job_plan`
/// frame (the messages, who takes part and where they listen, the node's own task list),
/// and the events nodes send back in `job_report` frames. Pure data and its JSON codec;
/// decoding never trusts the peer (every field is type- and range-checked). Also a job as
/// Peer::run takes it to coordinate (JobSpec), and how far it is (JobProgress).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hetcast/net/digest.hpp"
#include "hetcast/model/network.hpp"
#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "hetcast/runtime/tree.hpp"
#include "hetcast/runtime/wire.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/pace.hpp"
#include "hetcast/sim/exec_model.hpp"

namespace hetcast {

struct JobMessage {
    std::string source;
    std::uint64_t size = 0;
    net::Digest sha{};
    std::string name;  ///< destination path under dest_root (a bundle's: the landing directory, "." the root); empty: a buffer
    std::vector<std::string> dests;
    std::string origin;  ///< where the source finds the body, when it is not the coordinator
    /// Cut-through plans: the SHA-256 of each piece, as the source computed them.
    std::vector<net::Digest> pieces;
    /// Permission bits of the source's file (rwx only); copies land with them, less the
    /// destination's umask. 0644 for buffers and generated payloads.
    unsigned mode = 0644;
    /// Modes land exactly as sent (no umask) and mtimes are set (rsync -a, scp -p).
    bool preserve = false;
    std::optional<std::int64_t> mtime;  ///< a single file's, nanoseconds since the epoch
    /// Non-empty: the message is a bundle of this tree's files (runtime/tree.hpp).
    std::vector<TreeEntry> tree;
    /// Owners (the entries' uid and gid) are applied by a receiver running as root.
    bool owner = false;
};

struct JobTask {
    Op op = Op::send;
    MessageId message = 0;
    std::string peer;
    /// A send across a FIFO uplink other jobs use too: the bytes/s its lane is held to
    /// (SO_MAX_PACING_RATE; sim/pace.hpp); 0: TCP alone sets its pace.
    double pace = 0;
    friend bool operator==(const JobTask&, const JobTask&) = default;
};

struct JobPlan {
    std::uint64_t job = 0;
    std::string algorithm;
    std::string coordinator;
    std::vector<Member> participants;
    std::vector<JobMessage> messages;  ///< indexed by MessageId
    std::vector<JobTask> tasks;        ///< this node's list, in order
    std::size_t chunk = std::size_t{1} << 20;
    Relay relay = Relay::store_and_forward;
    std::uint64_t piece = default_piece;  ///< cut_through: bytes per piece
    /// The coordinator serves orphans again after a member fails: a destination keeps its
    /// verified pieces for that try. Without it, nothing is kept.
    bool retry = false;
    /// Bytes per second each member may send for this job in all (0: no limit).
    std::uint64_t bwlimit = 0;
    /// The operator's order this job runs under (runtime/order.hpp, JSON text; may be empty).
    std::string order;
};

/// The lowest rate limit a plan may ask for, bytes/s.
inline constexpr std::uint64_t min_bwlimit = 1024;

/// The plan of node `node` for `schedule` (whose node ids index `names`); its sends held
/// to `paces` where they have one.
[[nodiscard]] std::vector<JobTask> tasks_of(const Schedule& schedule, const std::vector<std::string>& names,
                                            NodeId node, const std::vector<Pace>& paces = {});

[[nodiscard]] nlohmann::json to_json(const JobPlan& p);
/// Throws InputError on anything malformed: a missing field, a wrong type, a task naming a
/// message or peer the plan does not have, a message over `max_message` bytes, a chunk of
/// 0 or over 64 MiB, a cut-through plan whose piece size is out of [min_piece, max_piece]
/// or whose messages lack one digest per piece.
[[nodiscard]] JobPlan job_plan_from_json(const nlohmann::json& j, std::uint64_t max_message);

/// A node's news about a job, sent to the coordinator.
struct JobEvent {
    enum class Kind { ready, delivered, progress, done, failed, hop } kind = Kind::ready;
    double clock = 0;           ///< the node's clock when it sent the event (seconds)
    MessageId message = 0;      ///< delivered
    std::uint64_t bytes = 0;    ///< progress: bytes received since the last progress event
    std::string error;          ///< failed
    double received = 0;        ///< ready: the node's clock when the plan arrived
    std::string peer{};         ///< hop: who sent the message to this node
    double first = 0;           ///< hop: the node's clock when its first byte arrived; `clock`: its last
    /// ready: (message, bytes) this node already holds verified from an earlier try of the
    /// same push, so its feeder sends only the rest.
    std::vector<std::pair<MessageId, std::uint64_t>> resume{};
};

/// What the coordinator's job_start tells a node: where each of its sends starts.
struct JobStart {
    struct Resume {
        MessageId message = 0;
        std::string to;
        std::uint64_t offset = 0;
        friend bool operator==(const Resume&, const Resume&) = default;
    };
    std::vector<Resume> resume;
};

[[nodiscard]] nlohmann::json to_json(const JobStart& s);
/// An empty payload is a start with no resumes. Throws InputError on a malformed one.
[[nodiscard]] JobStart job_start_from_json(std::string_view payload);

/// What a job_pace frame says to a sender: its send of `message` to `to` keeps to `rate`
/// bytes/s from now on (0: no longer held). sim/pace.hpp says why.
struct SendPace {
    MessageId message = 0;
    std::string to;
    double rate = 0;
    friend bool operator==(const SendPace&, const SendPace&) = default;
};
[[nodiscard]] nlohmann::json to_json(const std::vector<SendPace>& paces);
/// Throws InputError on a malformed payload (a negative or non-finite rate included).
[[nodiscard]] std::vector<SendPace> job_pace_from_json(std::string_view payload);

[[nodiscard]] nlohmann::json to_json(const JobEvent& e);
/// Throws InputError on a malformed event.
[[nodiscard]] JobEvent job_event_from_json(const nlohmann::json& j);

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
    /// The key Peer::beside() announced this push's planning under (empty: none): the
    /// coordinator reports the plan's flows to pushes planned after it until it starts.
    std::string planning;
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

}  // namespace hetcast
