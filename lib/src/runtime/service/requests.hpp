#pragma once
// The requests a daemon answers, as one table: name -> who may make it (by the caller's
// role, and the signed order each role must show), whether it changes state, and its
// handler. The dispatcher checks role and order once, before the handler runs; handlers
// never check them. Internal to lib/src/runtime/service (and its test).
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "hetcast/net/identity.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/service.hpp"

namespace hetcast::detail {

/// What a caller of one role must show for a request to run.
enum class Access {
    open,              ///< its identity is enough
    refused,           ///< nothing: the request takes the operator's identity
    order_to_me,       ///< an operator's order given to this daemon (check_order)
    order_to_caller,   ///< an operator's order given to the member passing it on (check_order)
    map_order,         ///< the order that backs a member's set_map (check_membership_order)
    members_order,     ///< the order that backs a member list (check_membership_order)
    signed_join,       ///< the joiner's own signature under its own name (check_join), or,
                       ///< from an operator, an order given to this daemon
};

[[nodiscard]] const char* to_string(Access a);

/// One request as its handler sees it, after the dispatcher let it through.
struct Call {
    const net::PeerIdentity& from;
    const nlohmann::json& req;
    const Peer::Responder& respond;
    bool from_operator;
};

struct Requests {
    struct Entry {
        std::string_view name;
        Access from_operator;
        Access from_member;
        /// Whether it changes anything here or on other members (files, jobs, members,
        /// the map, revocations): such a request never is `open` to a member.
        bool changes_state;
        void (*run)(Service::Impl& d, const Call& call);
        /// Called when the caller's order is refused (a push counts it); may be null.
        void (*refused)(Service::Impl& d) = nullptr;
    };

    /// Every request, in the order the table lists them.
    [[nodiscard]] static const std::vector<Entry>& table();
    /// The entry named `name`; null for an unknown request.
    [[nodiscard]] static const Entry* find(std::string_view name);
    /// Answers `req`: unknown requests and refused callers get their error here.
    static void dispatch(Service::Impl& d, const net::PeerIdentity& from, const nlohmann::json& req,
                         const Peer::Responder& respond);

private:
    /// Whether `access` lets the call through; when not, the caller has been answered.
    static bool admitted(Service::Impl& d, const Entry& e, Access access, const Call& c, const std::string& cmd);
    /// Whether a member's set_map (`list`: set_members) carries an order that backs it
    /// (check_membership_order); logs why not.
    static bool membership_ordered(Service::Impl& d, const net::PeerIdentity& from, const nlohmann::json& req,
                                   bool list);
};

}  // namespace hetcast::detail
