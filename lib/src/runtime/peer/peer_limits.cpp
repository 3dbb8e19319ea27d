// Who may connect to a peer and how much one peer may hold of it: names the cluster does
// not know, requests per peer, and what keeps a connection from being idle.
#include "peer_impl.hpp"

namespace hetcast {
using namespace detail;

std::string Peer::Impl::admit_inbound(const net::PeerIdentity& who) const {
    if (who.role == net::Role::operator_) return {};
    if (directory.knows(who.name) || !directory.knows_other_than(cfg.name)) return {};
    return "'" + who.name + "' is not a member of this cluster (an operator adds one: hetcast join " + who.name +
           " HOST:PORT)";
}

std::shared_ptr<void> Peer::Impl::take_request(const ConnectionPtr& c) {
    return limits.take(c->peer(), c.get(), cfg.requests_per_peer);
}

bool Peer::Impl::busy(const ConnectionPtr& c) {
    if (limits.serving(c.get())) return true;
    // On the I/O thread: never wait for a lock a thread may hold while it waits on I/O; a
    // connection whose state cannot be seen now counts as busy, and is looked at again later.
    if (bulk.busy_or_locked(c.get())) return true;
    if (lanes.carries(c.get()) || !calls.empty() || !pings.empty()) return true;
    for (const auto& job : jobs.all()) {
        if (job->finished) continue;
        if (job->coordinator == c) return true;
        for (const auto& m : job->plan.participants) {
            if (m.name == c->peer()) return true;
        }
    }
    const auto ks = coords.all();
    return std::any_of(ks.begin(), ks.end(), [&](const auto& id_k) {
        const auto& k = id_k.second;
        std::unique_lock lock(k->mu, std::try_to_lock);
        return !lock || k->nodes.count(c->peer()) > 0;
    });
}

}  // namespace hetcast
