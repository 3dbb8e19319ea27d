#pragma once
/// What every cluster member answers for the others, daemon or embedded Node alike: the
/// member list and ping samples as they travel in requests, and a "ping" request (measure
/// the link to another member, ECO §3).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "hetcast/net/identity.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/wire.hpp"

namespace hetcast {

/// [{"name","host","port"}, ...]; the reader throws InputError on anything else.
[[nodiscard]] nlohmann::json members_to_json(const std::vector<Member>& members);
[[nodiscard]] std::vector<Member> members_from_json(const nlohmann::json& j);

/// [{"name","since","order"}, ...]; the reader throws InputError on anything else.
[[nodiscard]] nlohmann::json revocations_to_json(const std::vector<net::Revocation>& revoked);
[[nodiscard]] std::vector<net::Revocation> revocations_from_json(const nlohmann::json& j);

/// Which member list a daemon starts with when it has both the cluster file's and the one
/// joins and leaves kept (state_dir/members.yaml): the newer one. The cluster file is newer
/// when the operator edited it after the last join or leave; `stored` wins otherwise.
struct MemberListChoice {
    std::vector<Member> members;
    bool from_cluster_file = false;
    /// Names the winner has that the other lacks, and the other way round, and names whose
    /// address differs. Empty when both agree.
    std::vector<std::string> added, removed, moved;
};
[[nodiscard]] MemberListChoice choose_member_list(const std::vector<Member>& cluster_file,
                                                  const std::vector<Member>& stored, bool cluster_file_newer);
/// One log line for a choice whose lists disagree ("" when they agree).
[[nodiscard]] std::string describe_member_list_choice(const MemberListChoice& c, const std::string& cluster_file,
                                                      const std::string& stored_file);

/// [[size, sent, peer_time, received], ...]; the reader throws hetcast::Error on anything else.
[[nodiscard]] nlohmann::json samples_to_json(const std::vector<PingSample>& samples);
[[nodiscard]] std::vector<PingSample> samples_from_json(const nlohmann::json& j);

}  // namespace hetcast
