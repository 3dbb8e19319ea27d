#pragma once
// Goodput measurements (the probe, docs/protocol.md "Probing"), both ends: the receiver
// dials the sender on a connection of its own and asks for a bulk transfer; the sender
// pumps it. What arrives is counted by cluster/bulk.hpp's BulkTransfers.
#include <cstdint>
#include <string>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/measure.hpp"
#include "../cluster/bulk.hpp"
#include "../wire/directory.hpp"
#include "peer_core.hpp"

namespace hetcast::detail {

class Bulk {
public:
    /// `core` and `members` outlive this (Peer::Impl holds them all).
    Bulk(PeerCore& core, const MemberDirectory& members) : core_(core), members_(members) {}

    /// A bulk frame: a member asks for a transfer (a pool thread pumps it), or its data.
    void on_frame(const net::ConnectionPtr& c, const net::Frame& f);
    /// Peer::bulk_connect and Peer::goodput_from (runtime/peer.hpp).
    std::uint64_t connect(const std::string& member);
    Goodput measure(std::uint64_t connection, double seconds, double warmup, std::uint64_t max_bytes);
    Goodput measure(const std::string& member, double seconds, double warmup, std::uint64_t max_bytes);
    /// Whether `c` carried a bulk transfer (its closing then concerns no job); forgets it.
    bool closed(const net::Connection* c) { return transfers_.forget(c); }
    /// Whether `c` carries one either way (or its state is locked now): never waits.
    bool busy_or_locked(const net::Connection* c) { return transfers_.busy_or_locked(c); }

private:
    void start(const net::ConnectionPtr& c, const net::Frame& f);
    void pump(const net::ConnectionPtr& c, double seconds, std::uint64_t max_bytes);

    PeerCore& core_;
    const MemberDirectory& members_;
    /// Which connections carry bulk transfers, and each measurement's window.
    BulkTransfers transfers_;
};

}  // namespace hetcast::detail
