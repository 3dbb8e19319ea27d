#pragma once
/// A job as its participants see it: what the coordinator sends each node in a `job_plan`
/// frame (the messages, who takes part and where they listen, the node's own task list),
/// and the events nodes send back in `job_report` frames. Pure data and its JSON codec;
/// decoding never trusts the peer (every field is type- and range-checked).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hetcast/net/digest.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/tree.hpp"

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

/// The piece sizes a plan may ask for: a piece must fit one frame with room to spare.
inline constexpr std::uint64_t min_piece = std::uint64_t{4} << 10;
inline constexpr std::uint64_t max_piece = max_cut_through_piece;

/// The plan of node `node` for `schedule` (whose node ids index `names`).
[[nodiscard]] std::vector<JobTask> tasks_of(const Schedule& schedule, const std::vector<std::string>& names,
                                            NodeId node);

[[nodiscard]] nlohmann::json to_json(const JobPlan& p);
/// 64 lowercase hex digits to a digest. Throws InputError otherwise.
[[nodiscard]] net::Digest digest_from_hex(const std::string& hex);
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

[[nodiscard]] nlohmann::json to_json(const JobEvent& e);
/// Throws InputError on a malformed event.
[[nodiscard]] JobEvent job_event_from_json(const nlohmann::json& j);

}  // namespace hetcast
