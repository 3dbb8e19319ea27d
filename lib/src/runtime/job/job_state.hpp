#pragma once
// A job's state at this member: as a participant (Job, one Recv per message it receives)
// and as the coordinator (Coord). Held by the peer's parts (../peer/).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/pieces.hpp"

namespace hetcast {

namespace detail {

using Clock = std::chrono::steady_clock;

inline double seconds_of(Clock::time_point t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }
inline double now_s() { return seconds_of(Clock::now()); }

class TokenBucket;  // ../transfer/pacing.hpp

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
    /// The coordinator's latest pace of each send (message, to), job_pace frames; 0: lifted.
    /// Under mu.
    std::map<std::pair<MessageId, std::string>, double> paces;
    /// Receivers whose lane has carried a send of this job: a later send on it keeps the
    /// lane's pace (the coordinator keeps it current) instead of the one planned for it.
    /// Under mu.
    std::set<std::string> lanes_sent;
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
        /// The coordinator's child in the control tree its plan and events pass through
        /// (peer/peer_relay.hpp); empty: its own control connection, `conn`.
        std::string hop;
        /// It failed because a relay above it did: not on its own account, so a next try
        /// plans it again (through another tree).
        bool cut_off = false;
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

}  // namespace hetcast
