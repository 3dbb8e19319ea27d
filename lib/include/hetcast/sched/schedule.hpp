#pragma once
/// A Schedule: per-node ordered task lists (Wu §3, TaskList_i). The planner builds it,
/// the simulator predicts its timeline, and the runtime executes the very same object.
#include <cstdint>
#include <string>
#include <vector>

#include "hetcast/model/network.hpp"

namespace hetcast {

using MessageId = std::uint32_t;

/// One message to disseminate: its source, size in bytes and destinations.
struct Message {
    NodeId source = 0;
    double size = 0.0;
    std::vector<NodeId> dests;
};

enum class Op : std::uint8_t { send, recv };

/// One task of a node's list: send message `message` to `peer`, or receive it from `peer`.
struct Task {
    Op op = Op::send;
    MessageId message = 0;
    NodeId peer = 0;
    friend bool operator==(const Task&, const Task&) = default;
};

/// How a relay passes a message on. Store-and-forward (the papers' model) sends a message
/// on once all of it is in and verified. Cut-through forwards each piece as soon as it is in
/// and verified: a relay's send starts once the first piece has arrived, and its flow never
/// runs ahead of what the relay has received.
enum class Relay : std::uint8_t { store_and_forward, cut_through };

/// Bytes per piece of a cut-through schedule when it does not say (and what an upload is cut
/// into unless asked otherwise); the planner weighs its own (choose_piece(), pipeline.hpp).
inline constexpr std::uint64_t default_piece = std::uint64_t{2} << 20;
/// The smallest piece the planner weighs; a message of at most this many bytes is not cut.
inline constexpr std::uint64_t min_planned_piece = std::uint64_t{64} << 10;
/// The largest piece, and the most pieces one message may have: every piece's digest
/// travels in the job plan (about 67 bytes of JSON each), which must fit one frame.
inline constexpr std::uint64_t max_cut_through_piece = std::uint64_t{8} << 20;
inline constexpr std::uint64_t max_pieces = 65536;

/// The piece size for a message of `size` bytes: default_piece, doubled until the message
/// has at most max_pieces pieces; 0 when even max_cut_through_piece leaves too many (then
/// it cannot cut through).
[[nodiscard]] constexpr std::uint64_t piece_for(double size) {
    for (std::uint64_t p = default_piece; p <= max_cut_through_piece; p *= 2) {
        if (size <= static_cast<double>(p) * static_cast<double>(max_pieces)) return p;
    }
    return 0;
}

struct Schedule {
    std::string algorithm;
    Relay relay = Relay::store_and_forward;
    std::uint64_t piece = default_piece;  ///< cut_through: bytes per piece
    std::vector<Message> messages;
    std::vector<std::vector<Task>> tasks;  ///< indexed by node id; executed in order

    /// An empty schedule over `node_count` nodes for the given messages.
    Schedule(std::string algo, std::size_t node_count, std::vector<Message> msgs)
        : algorithm(std::move(algo)), messages(std::move(msgs)), tasks(node_count) {}

    /// Appends `send` to from's list and `recv` to to's list.
    void add_transfer(MessageId m, NodeId from, NodeId to) {
        tasks.at(from).push_back({Op::send, m, to});
        tasks.at(to).push_back({Op::recv, m, from});
    }
    [[nodiscard]] std::size_t transfer_count() const;
};

}  // namespace hetcast
