// A Node among its members: joining, what other members ask of it, and measuring them.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>

#include "hetcast/model/loader.hpp"
#include "hetcast/runtime/cluster_probe.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/runtime/nic_queue.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/service.hpp"
#include "node_impl.hpp"

namespace hetcast {

nlohmann::json Node::Impl::hello(bool nic) const {
    const auto& [send, recv] = overheads;
    nlohmann::json h{{"ok", true},
                     {"name", name()},
                     {"version", version()},
                     {"send_overhead", {send.fixed, send.per_byte}},
                     {"recv_overhead", {recv.fixed, recv.per_byte}}};
    if (nic) h["nic_queue"] = to_text(nic_queue_of(host));
    return h;
}

/// What the daemons and a probing member ask of a member: who it is (the joining daemon's
/// hello), latency and goodput measurements, and the new member list and map after a join,
/// a leave or a probe.
void Node::Impl::serve_requests() {
    peer.on_request([this](const net::PeerIdentity& from, const nlohmann::json& req, Peer::Responder respond) {
        try {
            const std::string cmd = req.value("cmd", "");
            if (cmd == "hello") {
                respond(hello(req.value("nic", false)));
            } else if (cmd == "ping") {
                respond(answer_ping(peer, req));
            } else if (cmd == "goodput") {
                respond(answer_goodput(peer, name(), req));
            } else if (cmd == "set_members") {
                if (req.contains("revoked")) {
                    // Only what an operator's leave order backs (runtime/order.hpp).
                    std::vector<net::Revocation> checked;
                    for (auto& r : revocations_from_json(req["revoked"])) {
                        try {
                            check_revocation(r, peer.identity().ca_pem);
                            checked.push_back(std::move(r));
                        } catch (const InputError&) {
                        }
                    }
                    peer.revoke(checked);
                }
                set_members(members_from_json(req.at("members")));
                respond({{"ok", true}});
            } else if (cmd == "set_map") {
                set_map(parse_network(req.at("map").get<std::string>(), "the map from '" + from.name + "'"));
                respond({{"ok", true}});
            } else {
                respond({{"ok", false}, {"error", "an embedded node takes no '" + cmd.substr(0, 32) + "' requests"}});
            }
        } catch (const std::exception& e) {
            respond({{"ok", false}, {"error", e.what()}});
        }
    });
}

void Node::join(std::vector<Member> members, Network map) {
    for (const auto& m : members) {
        if (!map.find(m.name)) throw InputError("member '" + m.name + "' is not in the map");
    }
    if (!map.find(name())) throw InputError("this node '" + name() + "' is not in the map");
    impl_->peer.set_members(std::move(members));
    std::lock_guard lock(impl_->mu);
    impl_->map = std::move(map);
}

void Node::join(const std::filesystem::path& cluster_file, const std::filesystem::path& map_file) {
    join(load_cluster(cluster_file), load_network(map_file));
}

void Node::join(const std::string& seed_host, std::uint16_t seed_port) {
    const std::string host = impl_->host == "0.0.0.0" ? "127.0.0.1" : impl_->host;
    // Signed: the seed passes the new member list on with it, and every member checks who asked.
    const nlohmann::json req = sign_join(impl_->peer.identity(), {{"cmd", "join"}, {"name", name()}, {"host", host}, {"port", port()}},
                                         static_cast<std::int64_t>(std::time(nullptr)));
    const auto [answer, seed] = impl_->peer.call_at(seed_host, seed_port, req, std::chrono::minutes(2));
    if (!answer.value("ok", false)) {
        throw Error("'" + seed + "' at " + seed_host + ":" + std::to_string(seed_port) +
                    " did not admit this node: " + answer.value("error", std::string("refused")));
    }
    join(members_from_json(answer.at("members")),
         parse_network(answer.at("map").get<std::string>(), "the map from '" + seed + "'"));
}

std::optional<Network> Node::map() const {
    std::lock_guard lock(impl_->mu);
    return impl_->map;
}

Network Node::probe(ProbeOptions options) {
    std::vector<std::string> names;
    for (const auto& m : impl_->peer.members()) names.push_back(m.name);
    if (std::find(names.begin(), names.end(), name()) == names.end()) names.insert(names.begin(), name());
    ProbeLink link;
    link.self = name();
    link.call = [this](const std::string& member, const nlohmann::json& req, std::chrono::milliseconds timeout) {
        if (member != name()) return impl_->peer.call(member, req, timeout);
        const std::string cmd = req.value("cmd", "");
        if (cmd == "goodput") return answer_goodput(impl_->peer, name(), req);
        if (cmd == "ping") return answer_ping(impl_->peer, req);
        return impl_->hello(req.value("nic", false));
    };
    Network map = measure_cluster(link, names, 10, std::move(options)).network;
    impl_->set_map(map);
    const std::string text = format_network(map);
    for (const auto& member : names) {
        if (member == name()) continue;
        try {
            (void)impl_->peer.call(member, {{"cmd", "set_map"}, {"map", text}}, std::chrono::seconds(10));
        } catch (const std::exception&) {  // unreachable now: it gets the map with the next join or probe
        }
    }
    return map;
}

}  // namespace hetcast
