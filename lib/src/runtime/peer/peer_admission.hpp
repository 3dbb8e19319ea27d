#pragma once
// Who may connect to a peer and how much one peer may hold of it: identities revoked,
// names the cluster does not know, requests per peer.
#include <memory>
#include <string>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/peer_types.hpp"
#include "../cluster/revocations.hpp"
#include "../wire/directory.hpp"
#include "../wire/request_limits.hpp"

namespace hetcast::detail {

class Admission {
public:
    /// `cfg` and `members` outlive this (Peer::Impl holds them all).
    Admission(const PeerConfig& cfg, const MemberDirectory& members) : cfg_(cfg), members_(members) {}

    /// Empty, or why a peer is not admitted (revoked). Called by the transport.
    std::string admit(const net::PeerIdentity& who) const;
    /// Empty, or why a peer may not connect to this one: a name that is neither a member
    /// nor an operator. A peer that knows no other member yet (waiting to be joined)
    /// admits every identity of its CA: it has no list to check against.
    std::string admit_inbound(const net::PeerIdentity& who) const;
    /// Counts a request of `c`'s peer until the returned handle goes (null, and nothing
    /// counted, when that peer has requests_per_peer already).
    std::shared_ptr<void> take_request(const net::ConnectionPtr& c);
    /// Whether a request taken on `c` still runs.
    bool serving(const net::Connection* c) { return limits_.serving(c); }
    /// Identities no longer admitted (cluster/revocations.hpp).
    RevocationList& revocations() { return revocations_; }
    const RevocationList& revocations() const { return revocations_; }

private:
    const PeerConfig& cfg_;
    const MemberDirectory& members_;
    RevocationList revocations_;
    RequestLimits limits_;
};

}  // namespace hetcast::detail
