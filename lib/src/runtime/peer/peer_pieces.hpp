#pragma once
// Cut-through relaying at a participant (issue 13 §1): data checked piece by piece as it
// arrives, a piece that fails its check asked for again from the sender, and the sender's
// side of that: reading the piece back from what it holds.
#include <cstdint>
#include <memory>
#include <span>

#include "hetcast/net/transport.hpp"
#include "../job/job_state.hpp"
#include "peer_core.hpp"

namespace hetcast::detail {

/// The receive of message m that `c`'s peer feeds in `job`; throws InputError when the
/// plan has no such receive from it. Under job.mu.
Recv& expect(Job& job, const net::ConnectionPtr& c, MessageId m);

class PieceRelay {
public:
    /// `core` outlives this (Peer::Impl holds both).
    explicit PieceRelay(PeerCore& core) : core_(core) {}

    /// Data of a cut-through message: written, checked piece by piece; a piece that fails
    /// its check is asked for again. Under job.mu.
    void take(Job& job, Recv& r, const net::ConnectionPtr& c, MessageId m, std::span<const std::byte> data);
    /// A piece_request frame: `job` is the job it names here, null when there is none.
    void on_request(const net::ConnectionPtr& c, const net::Frame& f, const std::shared_ptr<Job>& job);
    /// A piece_data frame, the answer to a piece asked for again (job as above).
    void on_data(const net::ConnectionPtr& c, const net::Frame& f, const std::shared_ptr<Job>& job);
    /// Blocks until the first piece of message m is in and checked (or it fails): from
    /// then on this node's sends of m can start.
    void wait_first(Job& job, MessageId m);

private:
    void ask_again(Job& job, Recv& r, const net::ConnectionPtr& c, MessageId m, std::uint64_t k);

    PeerCore& core_;
};

}  // namespace hetcast::detail
