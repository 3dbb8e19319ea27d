#pragma once
// Node's insides, shared by node.cpp (jobs) and node_members.cpp (the cluster: joins,
// requests from members, the probe). Not installed.
#include <atomic>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hetcast/error.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/node.hpp"
#include "hetcast/runtime/push_options.hpp"
#include "hetcast/sched/plan.hpp"

namespace hetcast {

inline std::pair<Overhead, Overhead> own_overheads(const PeerConfig& c) {
    if (c.link_profile) {
        if (const auto id = c.link_profile->find(c.name)) {
            return {c.link_profile->send_overheads()[*id], c.link_profile->recv_overheads()[*id]};
        }
    }
    return {};
}

struct Node::Impl {
    explicit Impl(NodeConfig& config)
        : host(config.peer.host), overheads(own_overheads(config.peer)), peer(std::move(config.peer)) {}

    std::string host;  ///< the address this node gives a seed when it joins
    std::pair<Overhead, Overhead> overheads;  ///< send and receive, from the link profile
    Peer peer;
    mutable std::mutex mu;
    std::optional<Network> map;
    std::map<std::string, std::shared_ptr<const net::MessageBody>, std::less<>> offers;
    /// One thread per job started here, with whether it has returned; joined by stop().
    std::mutex threads_mu;
    std::list<std::pair<std::thread, std::shared_ptr<std::atomic<bool>>>> threads;

    [[nodiscard]] const std::string& name() const { return peer.name(); }
    void set_map(Network m) {
        if (!m.find(name())) throw InputError("this node '" + name() + "' is not in the map");
        std::lock_guard lock(mu);
        map = std::move(m);
    }
    void set_members(std::vector<Member> members) { peer.set_members(std::move(members)); }
    [[nodiscard]] std::shared_ptr<const Network> current_map() const {
        std::lock_guard lock(mu);
        if (!map) throw InputError("join a cluster first (Node::join)");
        return std::make_shared<const Network>(*map);
    }
    [[nodiscard]] nlohmann::json hello(bool nic = false) const;
    void serve_requests();
    /// The members of `names` that cannot be reached now, with why.
    [[nodiscard]] std::map<std::string, std::string> unreachable(const std::vector<std::string>& names);
    /// Where a single-source job from this node goes: `dests` (every other member of `net`
    /// when empty) that can be reached now, those that cannot, and what the report says of
    /// the latter (skipped by a broadcast, failed outcomes of a multicast).
    struct Destinations {
        std::vector<NodeId> ids;
        bool all = false;
        std::map<std::string, std::string> down;
        std::function<void(JobReport&)> finish;
    };
    [[nodiscard]] Destinations destinations(const Network& net, const std::vector<std::string>& dests);
    /// Runs `spec` (planned on `net`, which it points to) on a thread of its own;
    /// `finish` completes the report (who was left out) before anyone sees it.
    JobHandle launch(JobSpec spec, std::shared_ptr<const Network> net, SendOptions& options,
                     std::function<void(JobReport&)> finish);
    void join_threads();
    /// plan_push(), announced with its plan alone, then planned beside the jobs that run and
    /// the pushes announced before it (Peer::beside): auto weighs its candidates with their
    /// flows (issue 27).
    [[nodiscard]] JobSpec plan_beside(const Network& net, PlanRequest req, const PushOptions& options);
};

}  // namespace hetcast
