#pragma once
// The control tree's frames (docs/protocol.md, "The control tree"): the route from the
// coordinator to each member, a plan wrapped with its route and signed by the coordinator
// (job_relay), and its check at the member it is for. No state: the coordinator makes them
// (peer_coordinate.cpp), Relays (peer_relay.hpp) passes them on.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hetcast/net/identity.hpp"
#include "hetcast/net/transport.hpp"

namespace hetcast::detail {

/// The route from the coordinator to each of `members` (the coordinator left out) in a
/// tree of at most `fanout` children per node, in breadth-first order: `members[i]`'s
/// parent is the coordinator for i < fanout, else `members[(i - fanout) / fanout]`. Each
/// route ends with its member; a route of one is a child of the coordinator.
[[nodiscard]] std::vector<std::vector<std::string>> control_routes(const std::vector<std::string>& members,
                                                                   std::size_t fanout);

/// A job_relay frame of `plan_text` for the last member of `route` (sent to route[0]),
/// signed with the coordinator's `id`.
[[nodiscard]] net::Frame relay_frame(const net::Identity& id, const std::string& coordinator, std::uint64_t job,
                                     const std::vector<std::string>& route, std::string_view plan_text);

/// A relayed plan arrived at its member `me` from `sender`: checks that the coordinator
/// the plan names signed it for `me` with `sender` as its parent; returns the plan's text.
/// Throws InputError saying what is wrong.
[[nodiscard]] std::string_view check_relayed(const net::Frame& f, const std::string& me, const std::string& sender,
                                             std::string_view ca_pem, const std::vector<net::Revocation>& revoked,
                                             std::int64_t now);

/// A job_relay frame's first line (JSON naming route, to and parent) and the plan after
/// it. Throws InputError when the line is missing or lacks them.
[[nodiscard]] std::pair<nlohmann::json, std::string_view> split_relay(const net::Frame& f);

/// A job_relay frame of the route line `head` and the plan after it.
[[nodiscard]] net::Frame relay_envelope(std::uint64_t job, const nlohmann::json& head, std::string_view plan);

}  // namespace hetcast::detail
