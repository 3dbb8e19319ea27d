#include "hetcast/runtime/node.hpp"

#include <algorithm>
#include <ctime>

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/report/plan_report.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/push_plan.hpp"
#include "hetcast/runtime/service.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sched/wu.hpp"
#include "hetcast/sim/pattern_bound.hpp"

namespace hetcast {

NodeConfig load_node_config(const std::filesystem::path& daemon_config) {
    const DaemonConfig d = load_daemon_config(daemon_config);
    NodeConfig c;
    c.peer.name = d.name;
    c.peer.host = d.host;
    c.peer.port = d.port;
    c.peer.identity = read_identity(d.identity_file);
    c.peer.dest_root = d.dest_root;
    c.peer.spool = d.state_dir / "spool";
    c.peer.chunk = d.chunk;
    c.peer.max_message = d.max_message;
    c.peer.stall_timeout = d.stall_timeout;
    c.peer.umask = d.umask;
    c.peer.serve_roots = d.serve_roots;
    if (d.link_profile) c.peer.link_profile = load_network(*d.link_profile);
    if (d.cluster_file) c.members = load_cluster(*d.cluster_file);
    if (const auto map = d.state_dir / "map.yaml"; std::filesystem::exists(map)) c.map_file = map;
    return c;
}

namespace {
std::pair<Overhead, Overhead> own_overheads(const PeerConfig& c) {
    if (c.link_profile) {
        if (const auto id = c.link_profile->find(c.name)) {
            return {c.link_profile->send_overheads()[*id], c.link_profile->recv_overheads()[*id]};
        }
    }
    return {};
}
}  // namespace

Node::Node(NodeConfig config)
    : host_(config.peer.host), overheads_(own_overheads(config.peer)), peer_(std::move(config.peer)) {
    if (!config.members.empty()) set_members(std::move(config.members));
    if (config.map_file) load_map(*config.map_file);
    serve_requests();
}

/// What the daemons ask of a member: who it is (the joining daemon's hello), and the new
/// member list and map after a join or a leave.
void Node::serve_requests() {
    peer_.on_request([this](const net::PeerIdentity& from, const nlohmann::json& req, Peer::Responder respond) {
        try {
            const std::string cmd = req.value("cmd", "");
            if (cmd == "hello") {
                const auto& [send, recv] = overheads_;
                respond({{"ok", true},
                         {"name", name()},
                         {"version", version()},
                         {"send_overhead", {send.fixed, send.per_byte}},
                         {"recv_overhead", {recv.fixed, recv.per_byte}}});
            } else if (cmd == "ping") {
                respond(answer_ping(peer_, req));
            } else if (cmd == "set_members") {
                if (req.contains("revoked")) {
                    // Only what an operator's leave order backs (runtime/order.hpp).
                    std::vector<net::Revocation> checked;
                    for (auto& r : revocations_from_json(req["revoked"])) {
                        try {
                            check_revocation(r, peer_.identity().ca_pem);
                            checked.push_back(std::move(r));
                        } catch (const InputError&) {
                        }
                    }
                    peer_.revoke(checked);
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

Node::Node(PeerConfig config) : Node(NodeConfig{std::move(config), std::nullopt, {}}) {}
Node::~Node() { stop(); }

void Node::start() { peer_.start(); }
void Node::stop() { peer_.stop(); }
std::uint16_t Node::port() const { return peer_.port(); }
const std::string& Node::name() const { return peer_.name(); }

void Node::set_members(std::vector<Member> members) { peer_.set_members(std::move(members)); }

std::vector<Member> Node::members() const { return peer_.members(); }

void Node::set_map(Network map) {
    if (!map.find(name())) throw InputError("this node '" + name() + "' is not in the map");
    std::lock_guard lock(mu_);
    map_ = std::move(map);
}

void Node::load_map(const std::filesystem::path& map_file) { set_map(load_network(map_file)); }

void Node::join(std::vector<Member> members, Network map) {
    for (const auto& m : members) {
        if (!map.find(m.name)) throw InputError("member '" + m.name + "' is not in the map");
    }
    if (!map.find(name())) throw InputError("this node '" + name() + "' is not in the map");
    peer_.set_members(std::move(members));
    std::lock_guard lock(mu_);
    map_ = std::move(map);
}

void Node::join(const std::filesystem::path& cluster_file, const std::filesystem::path& map_file) {
    join(load_cluster(cluster_file), load_network(map_file));
}

void Node::join(const std::string& seed_host, std::uint16_t seed_port) {
    const std::string host = host_ == "0.0.0.0" ? "127.0.0.1" : host_;
    // Signed: the seed passes the new member list on with it, and every member checks who asked.
    const nlohmann::json req = sign_join(peer_.identity(), {{"cmd", "join"}, {"name", name()}, {"host", host}, {"port", port()}},
                                         static_cast<std::int64_t>(std::time(nullptr)));
    const auto [answer, seed] = peer_.call_at(seed_host, seed_port, req, std::chrono::minutes(2));
    if (!answer.value("ok", false)) {
        throw Error("'" + seed + "' at " + seed_host + ":" + std::to_string(seed_port) +
                    " did not admit this node: " + answer.value("error", std::string("refused")));
    }
    join(members_from_json(answer.at("members")),
         parse_network(answer.at("map").get<std::string>(), "the map from '" + seed + "'"));
}

std::map<std::string, std::string> Node::unreachable(const std::vector<std::string>& names) {
    std::map<std::string, std::string> out;
    for (const auto& n : names) {
        if (n == name()) continue;
        if (auto why = peer_.unreachable(n)) out[n] = *why;
    }
    return out;
}

Network Node::map() const {
    std::lock_guard lock(mu_);
    if (!map_) throw InputError("join a cluster first (Node::join)");
    return *map_;
}

JobReport Node::broadcast(Bytes bytes, const std::string& algo) { return multicast(std::move(bytes), {}, algo); }

JobReport Node::multicast(Bytes bytes, const std::vector<std::string>& dests, const std::string& algo) {
    if (!bytes) throw InputError("no buffer");
    const Network net = map();
    for (const auto& d : dests) (void)net.id(d);  // unknown names are refused before anything else
    const bool all = dests.empty();
    std::vector<std::string> wanted = dests;
    if (all) {
        for (const auto& n : net.names()) {
            if (n != name()) wanted.push_back(n);
        }
    }
    const auto down = unreachable(wanted);
    std::vector<NodeId> ids;
    for (const auto& d : wanted) {
        if (!down.contains(d)) ids.push_back(net.id(d));
    }
    if (ids.empty()) {
        if (all) throw Error("no other member can be reached");
        JobReport none;
        none.algorithm = algo;
        none.bytes = bytes->size();
        for (const auto& [d, why] : down) none.outcomes.push_back({0, name(), d, 0, 0, false, "unreachable: " + why});
        return none;
    }
    const double size = static_cast<double>(bytes->size());
    const PlanRequest req = make_request(net, net.id(name()), std::move(ids), size, ExecModel::nonblocking);
    JobSpec spec = plan_push(net, req, algo);
    spec.inputs.emplace_back(std::make_shared<BufferBody>(std::move(bytes)), "");
    JobReport report = peer_.run(std::move(spec));
    for (const auto& [d, why] : down) {
        if (all) {
            report.skipped.push_back(d);
        } else {
            report.outcomes.push_back({0, name(), d, 0, 0, false, "unreachable: " + why});
        }
    }
    return report;
}

JobReport Node::exchange(const std::vector<ExchangeEntry>& pattern, const std::string& algo) {
    if (pattern.empty()) throw InputError("an empty exchange");
    const Network net = map();
    PatternRequest req;
    std::vector<JobInput> inputs;
    std::vector<std::string> everyone;
    for (const auto& e : pattern) {
        (void)net.id(e.source);
        for (const auto& d : e.dests) (void)net.id(d);
        everyone.push_back(e.source);
        everyone.insert(everyone.end(), e.dests.begin(), e.dests.end());
    }
    if (std::any_of(pattern.begin(), pattern.end(), [](const ExchangeEntry& e) { return e.dests.empty(); })) {
        everyone = net.names();
    }
    std::sort(everyone.begin(), everyone.end());
    everyone.erase(std::unique(everyone.begin(), everyone.end()), everyone.end());
    const auto down = unreachable(everyone);
    for (const auto& e : pattern) {
        if (const auto it = down.find(e.source); it != down.end()) {
            throw Error("source '" + e.source + "' cannot be reached: " + it->second);
        }
    }
    for (const auto& e : pattern) {
        Message m;
        m.source = net.id(e.source);
        for (const auto& d : e.dests) {
            if (!down.contains(d)) m.dests.push_back(net.id(d));
        }
        if (e.dests.empty()) {
            for (NodeId v = 0; v < net.size(); ++v) {
                if (v != m.source && !down.contains(net.name(v))) m.dests.push_back(v);
            }
        }
        if (m.dests.empty()) throw Error("no destination of '" + e.source + "' can be reached");
        std::shared_ptr<const net::MessageBody> local;
        if (e.source == name()) {
            std::lock_guard lock(mu_);
            if (const auto it = offers_.find(e.key); it != offers_.end()) local = it->second;
        }
        if (local) {
            m.size = static_cast<double>(local->size());
            inputs.emplace_back(std::move(local), "");
        } else {
            const std::string origin = "offer:" + e.key;
            const Peer::Described d = peer_.describe(e.source, origin);
            m.size = static_cast<double>(d.size);
            inputs.emplace_back(origin, "", d.size, d.sha);
        }
        req.messages.push_back(std::move(m));
    }
    check_pattern(net, req);
    JobSpec spec;
    spec.network = &net;
    spec.schedule = algo == "auto" ? plan_pattern_auto(net, req).schedule : find_pattern_algorithm(algo).plan(net, req);
    spec.lower_bound = pattern_lower_bound(net, req);
    spec.inputs = std::move(inputs);
    JobReport report = peer_.run(std::move(spec));
    for (const auto& [d, why] : down) report.skipped.push_back(d);
    return report;
}

void Node::offer(const std::string& key, Bytes bytes) {
    if (!bytes) throw InputError("no buffer");
    auto body = std::make_shared<const BufferBody>(std::move(bytes));
    std::lock_guard lock(mu_);  // the local and the served offer change together
    offers_[key] = body;
    peer_.offer(key, std::move(body));
}

void Node::withdraw(const std::string& key) {
    std::lock_guard lock(mu_);
    offers_.erase(key);
    peer_.withdraw(key);
}

std::optional<Delivery> Node::receive(std::chrono::milliseconds timeout) { return peer_.receive(timeout); }

void Node::on_delivery(std::function<void(Delivery)> callback) { peer_.on_delivery(std::move(callback)); }

}  // namespace hetcast
