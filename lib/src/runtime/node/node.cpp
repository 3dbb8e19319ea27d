#include "hetcast/runtime/node.hpp"

#include <algorithm>
#include <ctime>
#include <atomic>
#include <future>
#include <list>
#include <thread>

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/report/plan_report.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/runtime/nodeset.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/push_plan.hpp"
#include "hetcast/runtime/service.hpp"
#include "hetcast/runtime/tree.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sched/wu.hpp"
#include "hetcast/sim/pattern_bound.hpp"
#include "node_impl.hpp"
#include "node_job.hpp"

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
    c.peer.tcp_congestion = d.tcp_congestion;
    c.peer.serve_roots = d.serve_roots;
    if (d.link_profile) c.peer.link_profile = load_network(*d.link_profile);
    if (d.cluster_file) c.members = load_cluster(*d.cluster_file);
    if (const auto map = d.state_dir / "map.yaml"; std::filesystem::exists(map)) c.map_file = map;
    return c;
}

Node::Node(NodeConfig config) : impl_(std::make_unique<Impl>(config)) {
    if (!config.members.empty()) set_members(std::move(config.members));
    if (config.map_file) load_map(*config.map_file);
    impl_->serve_requests();
}

Node::Node(PeerConfig config) : Node(NodeConfig{std::move(config), std::nullopt, {}}) {}
Node::~Node() {
    if (impl_) stop();
}
Node::Node(Node&&) noexcept = default;
Node& Node::operator=(Node&& other) noexcept {
    if (this != &other) {
        if (impl_) stop();
        impl_ = std::move(other.impl_);
    }
    return *this;
}

void Node::start() { impl_->peer.start(); }
void Node::stop() {
    impl_->peer.stop();  // aborts the running jobs: their threads return
    impl_->join_threads();
}

void Node::Impl::join_threads() {
    std::list<std::pair<std::thread, std::shared_ptr<std::atomic<bool>>>> all;
    {
        std::lock_guard lock(threads_mu);
        all.swap(threads);
    }
    for (auto& [t, over] : all) {
        // stop() from a job's own callback: that thread cannot wait for itself.
        if (t.get_id() == std::this_thread::get_id()) {
            t.detach();
        } else if (t.joinable()) {
            t.join();
        }
    }
}

std::uint16_t Node::port() const { return impl_->peer.port(); }
const std::string& Node::name() const { return impl_->name(); }

void Node::set_members(std::vector<Member> members) { impl_->set_members(std::move(members)); }

std::vector<Member> Node::members() const { return impl_->peer.members(); }

void Node::set_map(Network map) { impl_->set_map(std::move(map)); }

void Node::load_map(const std::filesystem::path& map_file) { set_map(load_network(map_file)); }

std::map<std::string, std::string> Node::Impl::unreachable(const std::vector<std::string>& names) {
    std::map<std::string, std::string> out;
    for (const auto& n : names) {
        if (n == name()) continue;
        if (auto why = peer.unreachable(n)) out[n] = *why;
    }
    return out;
}

Node::Impl::Destinations Node::Impl::destinations(const Network& net, const std::vector<std::string>& dests) {
    // Names or node sets (`ws[01-40]`, `@subnet:2`), as `hetcast push --to` takes them; a set
    // that names this node leaves it out. Unknown names are refused before anything else.
    std::vector<std::string> wanted;
    for (const auto& d : dests) {
        const std::vector<NodeId> ids = select_members(net, d);
        for (NodeId id : ids) {
            const std::string& n = net.name(id);
            if ((ids.size() > 1 && n == name()) || std::find(wanted.begin(), wanted.end(), n) != wanted.end()) continue;
            wanted.push_back(n);
        }
    }
    Destinations out;
    out.all = dests.empty();
    if (out.all) {
        for (const auto& n : net.names()) {
            if (n != name()) wanted.push_back(n);
        }
    }
    out.down = unreachable(wanted);
    for (const auto& d : wanted) {
        if (!out.down.contains(d)) out.ids.push_back(net.id(d));
    }
    out.finish = [all = out.all, down = out.down, me = name()](JobReport& report) {
        for (const auto& [d, why] : down) {
            if (all) {
                report.skipped.push_back(d);
            } else {
                report.outcomes.push_back({0, me, d, 0, 0, false, "unreachable: " + why});
            }
        }
    };
    return out;
}

JobHandle Node::Impl::launch(JobSpec spec, std::shared_ptr<const Network> net, SendOptions& options,
                             std::function<void(JobReport&)> finish) {
    auto state = std::make_shared<JobHandle::State>();
    state->on_progress = std::move(options.on_progress);
    state->on_done = std::move(options.on_done);
    state->cancel_fn = [this](std::uint64_t job, const std::string& why) { return peer.cancel(job, why); };
    spec.network = net.get();
    spec.bwlimit = options.bwlimit;
    spec.timeout = options.timeout;
    spec.started = [state](std::uint64_t job) { state->started(job); };
    spec.progress = [state](const JobProgress& p) { state->moved_on(p); };
    auto over = std::make_shared<std::atomic<bool>>(false);
    std::lock_guard lock(threads_mu);
    // Threads of jobs that ended are joined here, so a long-lived Node does not pile them up.
    for (auto it = threads.begin(); it != threads.end();) {
        if (it->second->load()) {
            it->first.join();
            it = threads.erase(it);
        } else {
            ++it;
        }
    }
    threads.emplace_back(std::thread([this, state, over, net = std::move(net), spec = std::move(spec),
                                      finish = std::move(finish)]() mutable {
        try {
            JobReport r = peer.run(std::move(spec));
            if (finish) finish(r);
            state->end(std::move(r), nullptr);
        } catch (...) {
            state->end(std::nullopt, std::current_exception());
        }
        over->store(true);
    }),
                         over);
    return JobHandle(state);
}

JobSpec Node::Impl::plan_beside(const Network& net, PlanRequest req, const PushOptions& options) {
    std::future<double> throughput = push_throughput_async(net, req);  // beside the planning and the asking
    JobSpec spec = plan_push_only(net, req, options.algo, options.piece);
    if (!net.capacities() || req.model != ExecModel::nonblocking) {
        set_bounds(net, req, throughput.get(), spec);
        return spec;
    }
    std::vector<std::string> members{net.name(req.root)};
    for (NodeId v : req.dests) members.push_back(net.name(v));
    Peer::Beside others = peer.beside(net, members, &spec.schedule, options.bwlimit);
    if (!others.flows.empty() && options.algo == "auto") {
        req.beside = std::move(others.flows);
        spec = plan_push_only(net, req, options.algo, options.piece);
    }
    set_bounds(net, req, throughput.get(), spec);
    spec.planning = std::move(others.planning);
    return spec;
}

namespace {
/// `net` as the job sees it, after the options are checked.
std::shared_ptr<const Network> planned_on(std::shared_ptr<const Network> net, const PushOptions& options) {
    check(options);
    if (options.bwlimit == 0) return net;
    return std::make_shared<const Network>(capped_for_push(*net, options.bwlimit));
}
}  // namespace

JobHandle Node::start_broadcast(Bytes bytes, SendOptions options) {
    return start_multicast(std::move(bytes), {}, std::move(options));
}

JobHandle Node::start_multicast(Bytes bytes, std::vector<std::string> dests, SendOptions options) {
    if (!bytes) throw InputError("no buffer");
    const auto net = planned_on(impl_->current_map(), options);
    auto [ids, all, down, finish] = impl_->destinations(*net, dests);
    if (ids.empty()) {
        if (all) throw Error("no other member can be reached");
        auto state = std::make_shared<JobHandle::State>();
        JobReport none;
        none.algorithm = options.algo;
        none.bytes = bytes->size();
        finish(none);
        state->on_done = std::move(options.on_done);
        state->end(std::move(none), nullptr);
        return JobHandle(state);
    }
    const double size = static_cast<double>(bytes->size());
    const PlanRequest req = make_request(*net, net->id(name()), std::move(ids), size, ExecModel::nonblocking);
    JobSpec spec = impl_->plan_beside(*net, req, options);
    spec.inputs.emplace_back(std::make_shared<BufferBody>(std::move(bytes)), "");
    return impl_->launch(std::move(spec), net, options, finish);
}

JobHandle Node::start_exchange(std::vector<ExchangeEntry> pattern, SendOptions options) {
    if (pattern.empty()) throw InputError("an empty exchange");
    const auto net = planned_on(impl_->current_map(), options);
    PatternRequest req;
    std::vector<JobInput> inputs;
    std::vector<std::string> everyone;
    for (const auto& e : pattern) {
        (void)net->id(e.source);
        for (const auto& d : e.dests) (void)net->id(d);
        everyone.push_back(e.source);
        everyone.insert(everyone.end(), e.dests.begin(), e.dests.end());
    }
    if (std::any_of(pattern.begin(), pattern.end(), [](const ExchangeEntry& e) { return e.dests.empty(); })) {
        everyone = net->names();
    }
    std::sort(everyone.begin(), everyone.end());
    everyone.erase(std::unique(everyone.begin(), everyone.end()), everyone.end());
    const auto down = impl_->unreachable(everyone);
    for (const auto& e : pattern) {
        if (const auto it = down.find(e.source); it != down.end()) {
            throw Error("source '" + e.source + "' cannot be reached: " + it->second);
        }
    }
    for (const auto& e : pattern) {
        Message m;
        m.source = net->id(e.source);
        for (const auto& d : e.dests) {
            if (!down.contains(d)) m.dests.push_back(net->id(d));
        }
        if (e.dests.empty()) {
            for (NodeId v = 0; v < net->size(); ++v) {
                if (v != m.source && !down.contains(net->name(v))) m.dests.push_back(v);
            }
        }
        if (m.dests.empty()) throw Error("no destination of '" + e.source + "' can be reached");
        std::shared_ptr<const net::MessageBody> local;
        if (e.source == name()) {
            std::lock_guard lock(impl_->mu);
            if (const auto it = impl_->offers.find(e.key); it != impl_->offers.end()) local = it->second;
        }
        if (local) {
            m.size = static_cast<double>(local->size());
            inputs.emplace_back(std::move(local), "");
        } else {
            const std::string origin = "offer:" + e.key;
            const Peer::Described d = impl_->peer.describe(e.source, origin);
            m.size = static_cast<double>(d.size);
            inputs.emplace_back(origin, "", d.size, d.sha);
        }
        req.messages.push_back(std::move(m));
    }
    check_pattern(*net, req);
    JobSpec spec;
    const std::string& algo = options.algo;
    spec.schedule = algo == "auto" ? plan_pattern_auto(*net, req).schedule : find_pattern_algorithm(algo).plan(*net, req);
    spec.lower_bound = pattern_lower_bound(*net, req);
    spec.inputs = std::move(inputs);
    return impl_->launch(std::move(spec), net, options, [down](JobReport& report) {
        for (const auto& [d, why] : down) report.skipped.push_back(d);
    });
}

namespace {
/// A landing name relative to a destination's root, refused as the daemon's push refuses
/// one (files.hpp confine(): empty, absolute, or with a "..").
std::string relative_landing(const std::string& name) {
    (void)confine("/", name);
    return std::filesystem::path(name).lexically_normal().generic_string();
}
}  // namespace

JobHandle Node::start_push(PushFiles files, SendOptions options) {
    if (files.paths.empty()) throw InputError("push: no file");
    JobInput input;
    std::vector<std::string> absolute;
    for (const auto& p : files.paths) absolute.push_back(std::filesystem::absolute(p).lexically_normal().string());
    std::error_code ec;
    if (absolute.size() == 1 && !files.recursive && !std::filesystem::is_directory(absolute[0], ec)) {
        auto body = std::make_shared<FileBody>(absolute[0]);
        const std::string name = relative_landing(files.name.empty() ? std::filesystem::path(absolute[0]).filename().string() : files.name);
        input = JobInput(body, name);
        if (files.preserve) input.mtime = body->mtime();
    } else {
        auto tree = std::make_shared<TreeBody>(build_tree(absolute, TreeOptions{files.recursive, false}), nullptr);
        const std::string landing = relative_landing(files.name.empty() ? "bundle" : files.name);
        check_landing("/", landing, tree->entries());
        input = JobInput(tree, landing);
        input.tree = tree->entries();
    }
    input.preserve = files.preserve;
    const auto net = planned_on(impl_->current_map(), options);
    auto [ids, all, down, finish] = impl_->destinations(*net, files.dests);
    if (ids.empty()) throw Error(all ? "no other member can be reached" : "no destination can be reached");
    const double size = static_cast<double>(input.body->size());
    const PlanRequest req = make_request(*net, net->id(name()), std::move(ids), size, ExecModel::nonblocking);
    JobSpec spec = impl_->plan_beside(*net, req, options);
    spec.inputs.push_back(std::move(input));
    return impl_->launch(std::move(spec), net, options, std::move(finish));
}

JobReport Node::broadcast(Bytes bytes, const std::string& algo) { return multicast(std::move(bytes), {}, algo); }

JobReport Node::multicast(Bytes bytes, const std::vector<std::string>& dests, const std::string& algo) {
    SendOptions o;
    o.algo = algo;
    return start_multicast(std::move(bytes), dests, std::move(o)).wait();
}

JobReport Node::exchange(const std::vector<ExchangeEntry>& pattern, const std::string& algo) {
    SendOptions o;
    o.algo = algo;
    return start_exchange(pattern, std::move(o)).wait();
}

JobReport Node::push(PushFiles files, SendOptions options) { return start_push(std::move(files), std::move(options)).wait(); }

void Node::offer(const std::string& key, Bytes bytes) {
    if (!bytes) throw InputError("no buffer");
    auto body = std::make_shared<const BufferBody>(std::move(bytes));
    std::lock_guard lock(impl_->mu);  // the local and the served offer change together
    impl_->offers[key] = body;
    impl_->peer.offer(key, std::move(body));
}

void Node::withdraw(const std::string& key) {
    std::lock_guard lock(impl_->mu);
    impl_->offers.erase(key);
    impl_->peer.withdraw(key);
}

std::optional<Delivery> Node::receive(std::chrono::milliseconds timeout) { return impl_->peer.receive(timeout); }

void Node::on_delivery(std::function<void(Delivery)> callback) { impl_->peer.on_delivery(std::move(callback)); }

void Node::on_landed(std::function<void(Landed)> callback) { impl_->peer.on_landed(std::move(callback)); }

}  // namespace hetcast
