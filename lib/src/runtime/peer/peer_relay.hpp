#pragma once
// The control plane as a tree (docs/protocol.md, "The control tree"): above
// PeerConfig::control_fanout participants a coordinator sends plans to its children only,
// each wrapped with the route to its member and signed by the coordinator (job_relay);
// members on the way forward them, and the start and a cancel of the whole job after them,
// and send their subtree's events up in batches (job_reports). A relay can forward or
// withhold, never forge: the plan is signed for its one member and its parent.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hetcast/net/identity.hpp"
#include "hetcast/net/transport.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"
#include "peer_relay_job.hpp"

namespace hetcast::detail {

class Relays {
public:
    /// The parts outlive this (Peer::Impl holds them all).
    Relays(PeerCore& core, Connections& connections) : core_(core), connections_(connections) {}

    /// A job_relay frame from `c`: true when it is for this member (the caller sets the
    /// job up), false when it was passed on towards its member.
    bool on_relay(const net::ConnectionPtr& c, const net::Frame& f);
    /// A start or a cancel of a whole job from the parent it relays for: passed to its children.
    void on_down(const net::ConnectionPtr& c, const net::Frame& f);
    /// A job_report from a child or a job_reports from a child's subtree: queued for the
    /// parent; false when this member relays no such job for `c` (the coordinator's then).
    bool on_up(const net::ConnectionPtr& c, const net::Frame& f);
    /// A connection closed: its child's subtree fails (reported up); from a parent, the
    /// job's subtree is cancelled and forgotten.
    void closed(const net::ConnectionPtr& c, const std::string& why);
    /// Once a second: a child not heard from for a second is pinged, one silent for
    /// stall_timeout fails with its subtree, like a coordinator's participant; a job
    /// cancelled stall_timeout ago is forgotten (what its members said after it is late).
    void watch();
    [[nodiscard]] bool busy_with(const net::ConnectionPtr& c) const;
    /// Jobs this member relays now (tests).
    [[nodiscard]] std::size_t relaying() const;

private:
    void fail_below(RelayedJob& h, const std::string& child, const std::string& why);
    void queue_up(const std::shared_ptr<RelayedJob>& h, nlohmann::json event);
    void flush_up(const std::shared_ptr<RelayedJob>& h);
    void queue_down(const std::shared_ptr<RelayedJob>& h, const std::string& to, net::Frame f);
    void send_down(const std::shared_ptr<RelayedJob>& h);
    void forget_if_done(const std::shared_ptr<RelayedJob>& h);

    PeerCore& core_;
    Connections& connections_;
    mutable std::mutex mu_;  ///< guards jobs_ and every RelayedJob
    std::map<std::uint64_t, std::shared_ptr<RelayedJob>> jobs_;
};

}  // namespace hetcast::detail
