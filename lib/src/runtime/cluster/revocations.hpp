#pragma once
// Identities revoked in this cluster (a member that left, an operator revoked by another):
// the transport admits none of them, and every order is checked against them. The
// peer's Admission holds one.
#include <mutex>
#include <optional>
#include <vector>

#include "hetcast/net/identity.hpp"

namespace hetcast::detail {

/// Thread safe.
class RevocationList {
public:
    /// Adds those of `revoked` it does not hold yet (in order); hands back those added.
    std::vector<net::Revocation> add(const std::vector<net::Revocation>& revoked);
    [[nodiscard]] std::vector<net::Revocation> all() const;
    /// The first revocation that revokes `who`, if any.
    [[nodiscard]] std::optional<net::Revocation> revoking(const net::PeerIdentity& who) const;

private:
    mutable std::mutex mu_;
    std::vector<net::Revocation> list_;
};

}  // namespace hetcast::detail
