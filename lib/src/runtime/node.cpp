#include "hetcast/runtime/node.hpp"

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/report/plan_report.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sched/wu.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/wu_bound.hpp"

namespace hetcast {

Node::Node(PeerConfig config) : peer_(std::move(config)) {}
Node::~Node() { stop(); }

void Node::start() { peer_.start(); }
void Node::stop() { peer_.stop(); }
std::uint16_t Node::port() const { return peer_.port(); }
const std::string& Node::name() const { return peer_.name(); }

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

Network Node::map() const {
    std::lock_guard lock(mu_);
    if (!map_) throw InputError("join a cluster first (Node::join)");
    return *map_;
}

JobReport Node::broadcast(Bytes bytes, const std::string& algo) { return multicast(std::move(bytes), {}, algo); }

JobReport Node::multicast(Bytes bytes, const std::vector<std::string>& dests, const std::string& algo) {
    if (!bytes) throw InputError("no buffer");
    const Network net = map();
    std::vector<NodeId> ids;
    for (const auto& d : dests) ids.push_back(net.id(d));
    const double size = static_cast<double>(bytes->size());
    const PlanRequest req = make_request(net, net.id(name()), std::move(ids), size, ExecModel::nonblocking);
    JobSpec spec;
    spec.network = &net;
    spec.schedule = find_algorithm(algo).plan(net, req);
    spec.lower_bound = bhat_lower_bound(net, req.root, req.dests, size);
    spec.inputs.emplace_back(std::make_shared<BufferBody>(std::move(bytes)), "");
    return peer_.run(std::move(spec));
}

JobReport Node::exchange(const std::vector<ExchangeEntry>& pattern, const std::string& algo) {
    if (pattern.empty()) throw InputError("an empty exchange");
    const Network net = map();
    PatternRequest req;
    std::vector<JobInput> inputs;
    for (const auto& e : pattern) {
        Message m;
        m.source = net.id(e.source);
        for (const auto& d : e.dests) m.dests.push_back(net.id(d));
        if (e.dests.empty()) {
            for (NodeId v = 0; v < net.size(); ++v) {
                if (v != m.source) m.dests.push_back(v);
            }
        }
        const std::string origin = "offer:" + e.key;
        const Peer::Described d = peer_.describe(e.source, origin);
        m.size = static_cast<double>(d.size);
        req.messages.push_back(std::move(m));
        inputs.emplace_back(origin, "", d.size, d.sha);
    }
    check_pattern(net, req);
    JobSpec spec;
    spec.network = &net;
    spec.schedule = algo == "auto" ? plan_pattern_auto(net, req).schedule : find_pattern_algorithm(algo).plan(net, req);
    spec.lower_bound = wu_lower_bound(net, req);
    spec.inputs = std::move(inputs);
    return peer_.run(std::move(spec));
}

void Node::offer(const std::string& key, Bytes bytes) {
    if (!bytes) throw InputError("no buffer");
    peer_.offer(key, std::make_shared<BufferBody>(std::move(bytes)));
}

void Node::withdraw(const std::string& key) { peer_.withdraw(key); }

std::optional<Delivery> Node::receive(std::chrono::milliseconds timeout) { return peer_.receive(timeout); }

void Node::on_delivery(std::function<void(Delivery)> callback) { peer_.on_delivery(std::move(callback)); }

}  // namespace hetcast
