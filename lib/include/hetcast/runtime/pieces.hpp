#pragma once
/// Cut-through relaying (issue 13 §1): a message arrives in pieces, each checked against
/// its SHA-256 from the job plan (which came from the source over the authenticated
/// control connection) before anything downstream may read it. A relay's sends read the
/// verified prefix of its own copy — its `.part` file, or pieces in memory for a buffer —
/// so a slow child is fed from what has landed, never from a queue that grows.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hetcast/net/digest.hpp"
#include "hetcast/net/transport.hpp"
#include "hetcast/sched/schedule.hpp"

namespace hetcast {

/// The piece sizes a plan may ask for: a piece must fit one frame with room to spare.
inline constexpr std::uint64_t min_piece = std::uint64_t{4} << 10;
inline constexpr std::uint64_t max_piece = max_cut_through_piece;

/// 64 lowercase hex digits to a digest (a message's or a piece's SHA-256). Throws
/// InputError otherwise.
[[nodiscard]] net::Digest digest_from_hex(const std::string& hex);

/// SHA-256 of each `piece` bytes of `body` (the last may be shorter); one read of it.
/// None for an empty body.
[[nodiscard]] std::vector<net::Digest> piece_digests(const net::MessageBody& body, std::uint64_t piece);

/// Pieces of a message of `size` bytes: ceil(size / piece).
[[nodiscard]] std::uint64_t piece_count(std::uint64_t size, std::uint64_t piece);

/// One message arriving in order, piece by piece. Thread-safe: the receiving side calls
/// add() and replace(), any number of readers (body()) wait for the verified prefix.
class PieceTracker : public std::enable_shared_from_this<PieceTracker> {
public:
    /// Bytes kept in memory (a buffer message), or read back from `fd` (the file a
    /// FileSink writes): `fd` null means memory.
    PieceTracker(std::uint64_t size, std::uint64_t piece, std::vector<net::Digest> digests,
                 std::shared_ptr<const int> fd);

    /// The first `bytes` (whole pieces) are already in the file and verified: a copy
    /// resumed after its sender failed. Before any add().
    void start_at(std::uint64_t bytes);
    /// The next bytes of the stream, in order (after the caller wrote them to the file,
    /// when there is one). Returns the pieces these bytes completed that failed their
    /// check: they are not readable until replace() brings a good copy.
    std::vector<std::uint64_t> add(std::span<const std::byte> data);
    /// Whether `data` is piece k, by its digest.
    [[nodiscard]] bool matches(std::uint64_t k, std::span<const std::byte> data) const;
    /// A fetched-again copy of piece k. True when it matches (then readable; the caller
    /// writes it to the file first); false leaves it missing.
    bool replace(std::uint64_t k, std::span<const std::byte> data);
    /// No more data will come: readers waiting past the verified prefix fail with `why`.
    void fail(const std::string& why);

    [[nodiscard]] std::uint64_t size() const { return size_; }
    [[nodiscard]] std::uint64_t piece() const { return piece_; }
    /// Bytes from the start that are in and verified.
    [[nodiscard]] std::uint64_t verified() const;
    /// Every piece is in and verified.
    [[nodiscard]] bool complete() const { return verified() == size_; }
    /// Pieces that failed their check and are not replaced yet.
    [[nodiscard]] std::vector<std::uint64_t> missing() const;
    /// Blocks until `bytes` are verified, the tracker fails (throws hetcast::Error), or
    /// `timeout` passes (returns false).
    bool wait_for(std::uint64_t bytes, std::chrono::milliseconds timeout);
    /// The bytes [offset, offset + out.size()) when all are verified: copies them and
    /// returns true; false otherwise. Throws hetcast::Error after fail().
    bool read_at(std::uint64_t offset, std::span<std::byte> out) const;
    /// Memory pieces only: the whole message in one buffer, once complete.
    [[nodiscard]] std::shared_ptr<const std::vector<std::byte>> joined() const;

    /// The message as its verified prefix grows: every reader streams from the start and,
    /// past what is verified, says it is not ready and is woken when more is.
    [[nodiscard]] std::shared_ptr<const net::MessageBody> body(const net::Digest& sha);

private:
    friend class GrowingReader;
    /// Registers `wake` for the next change unless `offset` is already readable (or at the
    /// end, or failed): then returns true.
    bool ready_at(std::uint64_t offset, std::function<void()> wake);
    void advance_locked();  ///< moves the verified prefix over the good pieces
    void throw_if_failed() const;
    std::vector<std::function<void()>> take_waiters_locked();

    const std::uint64_t size_, piece_;
    const std::vector<net::Digest> digests_;
    const std::shared_ptr<const int> fd_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::uint64_t received_ = 0;                      ///< stream bytes add() has seen
    std::optional<net::Sha256> current_;              ///< the piece being received
    std::vector<char> good_;                          ///< per piece
    std::vector<std::shared_ptr<std::vector<std::byte>>> memory_;  ///< per piece, memory mode
    std::uint64_t verified_ = 0;
    std::optional<std::string> failed_;
    std::vector<std::function<void()>> waiters_;
};

}  // namespace hetcast
