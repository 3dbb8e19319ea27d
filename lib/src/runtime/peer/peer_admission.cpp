// Who may connect to a peer and how much one peer may hold of it: identities revoked,
// names the cluster does not know, requests per peer.
#include "peer_admission.hpp"

namespace hetcast::detail {

std::string Admission::admit(const net::PeerIdentity& who) const {
    if (!revocations_.revoking(who)) return {};
    return "'" + who.name + "' was revoked (" + (who.role == net::Role::operator_ ? "by another operator" : "it left the cluster") +
           "); its identity is no longer accepted";
}

std::string Admission::admit_inbound(const net::PeerIdentity& who) const {
    if (who.role == net::Role::operator_) return {};
    if (members_.knows(who.name) || !members_.knows_other_than(cfg_.name)) return {};
    return "'" + who.name + "' is not a member of this cluster (an operator adds one: hetcast join " + who.name +
           " HOST:PORT)";
}

std::shared_ptr<void> Admission::take_request(const net::ConnectionPtr& c) {
    return limits_.take(c->peer(), c.get(), cfg_.requests_per_peer);
}

}  // namespace hetcast::detail
