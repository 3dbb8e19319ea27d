#pragma once
/// Counters a Peer keeps for monitoring (hetcastd's `metrics:` endpoint): each is filled at
/// one place in the peer and only ever grows. Thread safe: relaxed atomics.
#include <atomic>
#include <cstdint>
#include <memory>

#include "hetcast/net/transport.hpp"

namespace hetcast {

struct PeerStats {
    std::atomic<std::uint64_t> bytes_sent{0};      ///< message bytes read to send, this member's and relayed
    std::atomic<std::uint64_t> bytes_relayed{0};   ///< of them, of messages another member is the source of
    std::atomic<std::uint64_t> bytes_received{0};  ///< payload of data frames received
    std::atomic<std::uint64_t> connections_opened{0};
    std::atomic<std::uint64_t> connections_closed{0};
};

/// `body`, counting the bytes read from it into `stats.bytes_sent` (and bytes_relayed when
/// `relayed`). `stats` must outlive every reader of the result (the Peer's does).
[[nodiscard]] std::shared_ptr<const net::MessageBody> counted(std::shared_ptr<const net::MessageBody> body,
                                                              PeerStats& stats, bool relayed);

}  // namespace hetcast
