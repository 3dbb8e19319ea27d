// Issue 27: a push started while another runs is planned beside it. Its coordinator asks
// the participants for the running jobs' remaining flows ({"cmd": "flows"}) and its
// prediction shares the capacities with them; the report says how many jobs it ran beside.
#include <doctest/doctest.h>

#include <algorithm>
#include <future>
#include <random>

#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/simulate.hpp"
#include "identity.hpp"
#include "peer_cluster.hpp"
#include "support.hpp"
#include "temp_dir.hpp"
#include "wait.hpp"

using namespace hetcast;

namespace {

JobSpec broadcast(const Network& net, NodeId root, std::size_t bytes, std::uint64_t seed) {
    auto v = std::make_shared<std::vector<std::byte>>(bytes);
    std::mt19937_64 rng(seed);
    for (auto& b : *v) b = static_cast<std::byte>(rng());
    JobSpec spec;
    spec.network = &net;
    spec.schedule = find_algorithm("flat").plan(net, make_request(net, root, {}, static_cast<double>(bytes), ExecModel::nonblocking));
    spec.inputs.push_back({std::make_shared<BufferBody>(v), ""});
    spec.timeout = std::chrono::seconds(60);
    return spec;
}

/// A peer per node of `net` on loopback, its links emulated as `net` says; stopped at the end.
struct Cluster : test::PeerCluster {
    explicit Cluster(const Network& net)
        : PeerCluster(net.size(), [&](std::size_t i, PeerConfig& c) {
              REQUIRE(net.name(i) == c.name);
              c.chunk = 64 << 10;
              c.link_profile = net;
          }) {}
};

}  // namespace

TEST_CASE("peer: a push started while another runs is planned beside it, and predicts a later end than alone") {
    const Network net = test::alternate_two_subnets(4, "p", 2e6, 2e6, 1e-3);
    Cluster cluster(net);
    auto& peers = cluster.peers;

    auto first = std::async(std::launch::async, [&] { return peers[0]->run(broadcast(net, 0, 3 << 20, 1)); });
    // p1 receives the first push's message: once bytes arrive there, its flow is running.
    REQUIRE(test::wait_for([&] {
        const auto jobs = peers[1]->jobs();
        return std::any_of(jobs.begin(), jobs.end(), [](const JobInfo& j) { return j.bytes > 0; });
    }));
    const JobSpec second = broadcast(net, 2, 256 << 10, 2);
    const double alone = simulate(net, second.schedule, ExecModel::nonblocking).completion;
    const JobReport beside = peers[2]->run(second);
    CHECK(beside.ok());
    CHECK(beside.beside == 1);
    CHECK(beside.predicted > alone * 1.2);
    const JobReport r = first.get();
    CHECK(r.ok());
    CHECK(r.beside == 0);

    // Once the first has ended, the same push is planned alone again.
    const JobReport after = peers[2]->run(broadcast(net, 2, 256 << 10, 3));
    CHECK(after.beside == 0);
    CHECK(after.predicted == doctest::Approx(alone));
}

TEST_CASE("peer: a push planned while another is planned but not started plans and predicts beside it") {
    const Network net = test::alternate_two_subnets(4, "p", 2e6, 2e6, 1e-3);
    Cluster cluster(net);
    auto& peers = cluster.peers;
    const std::vector<std::string> all = net.names();

    // p0 announces its push with its plan; nothing else is planned or runs.
    JobSpec a = broadcast(net, 0, 3 << 20, 1);
    const Peer::Beside first = peers[0]->beside(net, all, &a.schedule);
    CHECK(first.flows.empty());
    REQUIRE(!first.planning.empty());
    // p2's push, announced before p0's starts, sees its three flows, once each: from p0
    // itself, or, when p0 is not asked, from p0 all the same: the members p0 announced it
    // to name its key, and p0 is asked for its flows.
    JobSpec b = broadcast(net, 2, 256 << 10, 2);
    const Peer::Beside second = peers[2]->beside(net, all, &b.schedule);
    CHECK(second.jobs == 1);
    CHECK(second.flows.size() == 3);
    const Peer::Beside without_p0 = peers[3]->beside(net, {"p1", "p2", "p3"});
    CHECK(without_p0.jobs == 2);  // p2's too, seen by p1 and p3
    CHECK(without_p0.flows.size() == 6);

    a.planning = first.planning;
    auto ran = std::async(std::launch::async, [&] { return peers[0]->run(std::move(a)); });
    b.planning = second.planning;
    const double alone = simulate(net, b.schedule, ExecModel::nonblocking).completion;
    const JobReport r = peers[2]->run(std::move(b));
    CHECK(r.ok());
    CHECK(r.beside == 1);
    CHECK(r.predicted > alone * 1.2);
    CHECK(ran.get().ok());
    // Both ran: nothing of them is left to plan beside.
    CHECK(test::wait_for([&] { return peers[3]->beside(net, all).flows.empty(); }));
}
