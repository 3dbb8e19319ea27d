#pragma once
// Link emulation under a link profile (PeerConfig::link_profile): the emulated host's one
// CPU, the overheads of sends and receives, and each connection's shape (latency, rate,
// the shared NICs and uplinks of cluster/link_state.hpp). Without a profile it does nothing.
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/peer_types.hpp"
#include "../cluster/link_state.hpp"
#include "../job/job_state.hpp"

namespace hetcast::detail {

class Emulation {
public:
    /// `cfg` outlives this (PeerCore holds both).
    explicit Emulation(const PeerConfig& cfg);

    /// Shapes what this peer sends on `c` as the profile's link to its peer: answers
    /// (pongs, events) cross the emulated link as data does.
    void shape(const net::ConnectionPtr& c) const;
    /// The emulated host spends `seconds` of its one CPU: send and receive overheads never
    /// overlap (Wu's model), not even across jobs running at once, so concurrent jobs share
    /// the host as they would a real one.
    void busy(double seconds) const;
    void send(const std::string& to, double bytes) const;
    void recv(double bytes) const;

private:
    std::optional<NodeId> profile_id(const std::string& name) const;

    const PeerConfig& cfg_;
    std::optional<NodeId> self_;
    /// The profile's NICs and uplinks, when it has capacities.
    std::unique_ptr<LinkState> link_state_;
    mutable std::mutex host_mu_;
    mutable Clock::time_point host_free_{};  ///< the emulated host is busy until then
};

}  // namespace hetcast::detail
