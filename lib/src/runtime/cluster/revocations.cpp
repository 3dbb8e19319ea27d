#include "revocations.hpp"

#include <algorithm>

namespace hetcast::detail {

std::vector<net::Revocation> RevocationList::add(const std::vector<net::Revocation>& revoked) {
    std::lock_guard lock(mu_);
    std::vector<net::Revocation> added;
    for (const auto& r : revoked) {
        if (std::find(list_.begin(), list_.end(), r) == list_.end()) {
            list_.push_back(r);
            added.push_back(r);
        }
    }
    return added;
}

std::vector<net::Revocation> RevocationList::all() const {
    std::lock_guard lock(mu_);
    return list_;
}

std::optional<net::Revocation> RevocationList::revoking(const net::PeerIdentity& who) const {
    std::lock_guard lock(mu_);
    for (const auto& r : list_) {
        if (net::revokes(r, who)) return r;
    }
    return std::nullopt;
}

}  // namespace hetcast::detail
