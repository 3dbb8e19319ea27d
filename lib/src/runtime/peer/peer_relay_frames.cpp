// The control tree's frames: routes, the relayed plan's envelope and its check
// (peer_relay_frames.hpp).
#include "peer_relay_frames.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "hetcast/error.hpp"
#include "../wire/frames.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::Frame;
using net::FrameType;

namespace {

std::string signed_text(std::uint64_t job, const std::string& to, const std::string& parent, std::string_view plan) {
    std::string s = "hetcast job_relay\n" + std::to_string(job) + "\n" + to + "\n" + parent + "\n";
    s.append(plan);
    return s;
}

}  // namespace

std::pair<json, std::string_view> split_relay(const Frame& f) {
    const std::string_view all = net::as_text(f.payload);
    const auto nl = all.find('\n');
    if (nl == std::string_view::npos || nl > 64 * 1024) throw InputError("a job_relay frame without its route line");
    json head = json::parse(all.substr(0, nl));
    if (!head.is_object() || !head.contains("route") || !head["route"].is_array() || !head.contains("to") ||
        !head["to"].is_string() || !head.contains("parent") || !head["parent"].is_string()) {
        throw InputError("a job_relay frame's route line lacks route, to or parent");
    }
    for (const auto& r : head["route"]) {
        if (!r.is_string()) throw InputError("a job_relay frame's route names a member by something else than a string");
    }
    return {std::move(head), all.substr(nl + 1)};
}

Frame relay_envelope(std::uint64_t job, const json& head, std::string_view plan) {
    std::string text = head.dump(-1, ' ', false, json::error_handler_t::replace);
    text += '\n';
    text.append(plan);
    return make_frame(FrameType::job_relay, job, 0, text);
}

std::vector<std::vector<std::string>> control_routes(const std::vector<std::string>& members, std::size_t fanout) {
    fanout = std::max<std::size_t>(fanout, 1);
    std::vector<std::vector<std::string>> routes(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) {
        if (i >= fanout) routes[i] = routes[(i - fanout) / fanout];
        routes[i].push_back(members[i]);
    }
    return routes;
}

Frame relay_frame(const net::Identity& id, const std::string& coordinator, std::uint64_t job,
                  const std::vector<std::string>& route, std::string_view plan_text) {
    const std::string& to = route.back();
    const std::string& parent = route.size() >= 2 ? route[route.size() - 2] : coordinator;
    json head{{"route", std::vector<std::string>(route.begin() + 1, route.end())},
              {"to", to},
              {"parent", parent},
              {"cert", id.cert_pem},
              {"sig", net::sign(id, signed_text(job, to, parent, plan_text))}};
    return relay_envelope(job, head, plan_text);
}

std::string_view check_relayed(const Frame& f, const std::string& me, const std::string& sender, std::string_view ca_pem,
                               const std::vector<net::Revocation>& revoked, std::int64_t now) {
    auto [head, plan] = split_relay(f);
    const auto to = head["to"].get<std::string>(), parent = head["parent"].get<std::string>();
    if (to != me) throw InputError("a relayed plan for '" + to + "' came to '" + me + "'");
    if (parent != sender) throw InputError("a relayed plan names '" + parent + "' as its parent, but came from '" + sender + "'");
    const net::PeerIdentity who = net::verify_signature(head.value("cert", ""), ca_pem, signed_text(f.header.job, to, parent, plan),
                                                        head.value("sig", ""), now);
    if (who.role != net::Role::member) throw InputError("a relayed plan signed by '" + who.name + "', not a member");
    for (const auto& r : revoked) {
        if (net::revokes(r, who)) throw InputError("a relayed plan signed by '" + who.name + "', revoked");
    }
    const json p = json::parse(plan);
    if (!p.is_object() || p.value("coordinator", "") != who.name) {
        throw InputError("a relayed plan signed by '" + who.name + "' names another coordinator");
    }
    return plan;
}

}  // namespace hetcast::detail
