#pragma once
/// What every cluster member answers for the others, daemon or embedded Node alike: the
/// member list and ping samples as they travel in requests, and a "ping" request (measure
/// the link to another member, ECO §3).
#include <nlohmann/json.hpp>

#include <vector>

#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/peer.hpp"

namespace hetcast {

/// [{"name","host","port"}, ...]; the reader throws InputError on anything else.
[[nodiscard]] nlohmann::json members_to_json(const std::vector<Member>& members);
[[nodiscard]] std::vector<Member> members_from_json(const nlohmann::json& j);

/// [{"name","since","order"}, ...]; the reader throws InputError on anything else.
[[nodiscard]] nlohmann::json revocations_to_json(const std::vector<net::Revocation>& revoked);
[[nodiscard]] std::vector<net::Revocation> revocations_from_json(const nlohmann::json& j);

/// [[size, sent, peer_time, received], ...]; the reader throws hetcast::Error on anything else.
[[nodiscard]] nlohmann::json samples_to_json(const std::vector<PingSample>& samples);
[[nodiscard]] std::vector<PingSample> samples_from_json(const nlohmann::json& j);

/// {"cmd": "ping", "target", "sizes", "reps"}: `peer` pings the target; the answer is
/// {"ok": true, "samples": [...]}. InputError for sizes or reps out of range.
[[nodiscard]] nlohmann::json answer_ping(Peer& peer, const nlohmann::json& request);

}  // namespace hetcast
