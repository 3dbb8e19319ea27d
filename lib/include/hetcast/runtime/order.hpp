#pragma once
/// An operator's order: a request the operator signed, so that a daemon passing it on (a
/// job plan that makes another member read one of its files, a cancel looked for on every
/// member) can show who asked, and members check it themselves (docs/security.md).
///
///   request["order"] = {"to": daemon, "issued": seconds, "cert": PEM, "sig": hex}
///
/// The signature covers the request without "order" (nlohmann's dump: keys sorted), the
/// daemon it was sent to, and the time. Only that daemon may pass it on.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetcast/net/identity.hpp"
#include "hetcast/runtime/wire.hpp"
#include "hetcast/runtime/order_scope.hpp"

namespace hetcast {

/// How long an order can be passed on: a push of a large file may re-serve hours later.
inline constexpr std::int64_t order_lifetime = 24 * 3600;

/// `request` signed by the operator `id`, addressed to the daemon `to`.
[[nodiscard]] nlohmann::json sign_order(const net::Identity& id, nlohmann::json request, const std::string& to,
                                        std::int64_t now);

/// Who signed `request`, when it is an order of this cluster's operator (`ca_pem`),
/// addressed to `to`, not revoked, issued at most order_lifetime before `now` (and not in
/// the future by more than a minute). Throws InputError saying what is wrong.
[[nodiscard]] net::PeerIdentity check_order(const nlohmann::json& request, std::string_view ca_pem,
                                            const std::vector<net::Revocation>& revoked, const std::string& to,
                                            std::int64_t now);

/// The revocation an operator's `leave` order makes: its `name`, from the order's time.
/// InputError when the request is not a leave order given to `to` (check_order).
[[nodiscard]] net::Revocation revocation_of(const nlohmann::json& leave_request, std::string_view ca_pem,
                                           const std::vector<net::Revocation>& revoked, const std::string& to,
                                           std::int64_t now);

/// Checks that a revocation one member passes to another comes from an operator's leave
/// order of this cluster for that name and time (at any age: revocations are history).
/// Throws InputError.
void check_revocation(const net::Revocation& r, std::string_view ca_pem);

/// A member's own join request, signed with its identity, so that the members a seed
/// passes the new member list on to can check who asked (addressed to nobody: the joiner
/// does not know the seed's name before it connects).
[[nodiscard]] nlohmann::json sign_join(const net::Identity& id, nlohmann::json request, std::int64_t now);

/// The member a signed join request (sign_join) comes from: signed by a member identity of
/// this cluster, not revoked, naming itself (`name`), at most order_lifetime old. Throws
/// InputError.
[[nodiscard]] net::PeerIdentity check_join(const nlohmann::json& request, std::string_view ca_pem,
                                           const std::vector<net::Revocation>& revoked, std::int64_t now);

/// Whether the member list or map a member passes on (set_members, set_map) is backed by
/// `order`: an operator's probe, leave or join given to `sender`, or a member's own join
/// (check_join). For a member list, `members` must follow from it: a leave's member is
/// gone, a join's member is there at the address it asked for, and of `current` (this
/// member's list) nobody else is missing. Returns the order's command. Throws InputError.
std::string check_membership_order(const nlohmann::json& order, std::string_view ca_pem,
                                   const std::vector<net::Revocation>& revoked, const std::string& sender,
                                   std::int64_t now, const std::vector<Member>* current = nullptr,
                                   const std::vector<Member>* members = nullptr);

/// Whether the order (a checked push request) has `member` read `path`: a pattern entry
/// with `source: member` and `file: path`.
[[nodiscard]] bool order_names_file(const nlohmann::json& request, const std::string& member, const std::string& path);

}  // namespace hetcast
