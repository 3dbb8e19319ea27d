// The control plane as a tree (runtime/peer/peer_relay.hpp): in-process peers with a
// fan-out of 2, so that 8 of them form a tree three levels deep.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "identity.hpp"
#include "peer_cluster.hpp"
#include "wait.hpp"

using namespace hetcast;
using test::TempDir;

namespace {

Network lan(std::size_t n) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) names.push_back("p" + std::to_string(i));
    const Matrix lat(n, std::vector<double>(n, 1e-4)), bw(n, std::vector<double>(n, 125e6));
    return Network::parametric(names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
}

/// With fan-out 2, p0 coordinating p1..p7: p1 and p2 are its children, p1 relays p3, p4
/// and (through p3) p7, p2 relays p5 and p6.
struct Cluster : test::PeerCluster {
    Cluster(std::size_t n, const std::map<std::size_t, std::function<bool(net::Frame&)>>& tamper)
        : PeerCluster(n, [&](std::size_t i, PeerConfig& c) {
              c.stall_timeout = std::chrono::milliseconds(5000);
              c.control_fanout = 2;
              if (const auto t = tamper.find(i); t != tamper.end()) c.tamper_relay = t->second;
          }) {}
};

JobSpec broadcast(const Network& net, std::shared_ptr<const std::vector<std::byte>> bytes) {
    const double size = static_cast<double>(bytes->size());
    JobSpec spec;
    spec.network = &net;
    spec.schedule = find_algorithm("binomial").plan(net, make_request(net, 0, {}, size, ExecModel::nonblocking));
    spec.lower_bound = bhat_lower_bound(net, 0, {}, size);
    spec.inputs.push_back({std::make_shared<BufferBody>(bytes), ""});
    spec.replan = [&net, size](const std::vector<NodeId>& dests, const std::vector<NodeId>& avoid) {
        PlanRequest r = make_request(net, 0, dests, size, ExecModel::nonblocking);
        r.options.avoid = avoid;
        return find_algorithm("flat").plan(net, r);
    };
    spec.timeout = std::chrono::seconds(60);
    return spec;
}

std::shared_ptr<const std::vector<std::byte>> random_bytes(std::size_t n, std::uint64_t seed) {
    auto v = std::make_shared<std::vector<std::byte>>(n);
    std::mt19937_64 rng(seed);
    for (auto& b : *v) b = static_cast<std::byte>(rng());
    return v;
}

/// The member a job_relay frame is for.
std::string relay_target(const net::Frame& f) {
    const std::string text(reinterpret_cast<const char*>(f.payload.data()), f.payload.size());
    return nlohmann::json::parse(text.substr(0, text.find('\n'))).value("to", "");
}

const Outcome* outcome_of(const JobReport& r, const std::string& dest) {
    for (const auto& o : r.outcomes) {
        if (o.dest == dest) return &o;
    }
    return nullptr;
}

}  // namespace

TEST_CASE("control tree: the coordinator talks to its children only, plans and events pass through relays") {
    std::atomic<int> relayed{0};
    const auto count = [&relayed](net::Frame&) {
        ++relayed;
        return true;
    };
    Cluster c(8, {{1, count}, {2, count}, {3, count}});
    const Network net = lan(8);
    const auto bytes = random_bytes(200'000, 1);
    const std::uint64_t opened = c.peers[0]->stats().connections_opened.load();
    JobSpec spec = broadcast(net, bytes);
    // binomial from p0 to 8: p0 sends to p4, p2 and p1, so its lanes are three of its own.
    std::set<std::string> lanes;
    for (const Task& t : spec.schedule.tasks[0]) {
        if (t.op == Op::send) lanes.insert(net.name(t.peer));
    }
    const JobReport r = c.peers[0]->run(std::move(spec));
    CHECK(r.ok());
    CHECK(r.outcomes.size() == 7);
    for (std::size_t i = 1; i < 8; ++i) {
        auto d = c.peers[i]->receive(std::chrono::seconds(5));
        REQUIRE(d);
        CHECK(*d->bytes == *bytes);
    }
    // Two control connections (p1, p2) and the data lanes; a star would open seven and the lanes.
    CHECK(c.peers[0]->stats().connections_opened.load() - opened == 2 + lanes.size());
    // Plans passed on: p3, p4, p7 (twice: by p1 and p3), p5, p6.
    CHECK(relayed.load() == 6);

    // A second push reuses the tree's connections.
    const std::uint64_t again = c.peers[0]->stats().connections_opened.load();
    const JobReport r2 = c.peers[0]->run(broadcast(net, bytes));
    CHECK(r2.ok());
    CHECK(c.peers[0]->stats().connections_opened.load() - again == lanes.size());
}

TEST_CASE("control tree: a plan a relay changed on its way is refused by its member, the others complete") {
    // p1 passes p4's plan on with another order in it: p4 refuses it (the coordinator's
    // signature no longer matches), and the push ends without p4.
    const auto forge = [](net::Frame& f) {
        if (relay_target(f) != "p4") return true;
        std::string text(reinterpret_cast<const char*>(f.payload.data()), f.payload.size());
        const auto nl = text.find('\n');
        nlohmann::json plan = nlohmann::json::parse(text.substr(nl + 1));
        plan["order"] = {{"cmd", "push"}, {"forged", true}};
        text = text.substr(0, nl + 1) + plan.dump();
        const auto* p = reinterpret_cast<const std::byte*>(text.data());
        f.payload.assign(p, p + text.size());
        f.header.length = static_cast<std::uint32_t>(f.payload.size());
        return true;
    };
    Cluster c(8, {{1, forge}});
    const Network net = lan(8);
    const auto bytes = random_bytes(100'000, 2);
    const JobReport r = c.peers[0]->run(broadcast(net, bytes));
    const Outcome* p4 = outcome_of(r, "p4");
    REQUIRE(p4);
    CHECK_FALSE(p4->ok);
    CHECK_FALSE(p4->error.empty());
    CHECK(c.logged("p4: closing the connection with 'p1': the signature does not match"));
    CHECK_FALSE(c.peers[4]->receive(std::chrono::milliseconds(0)));
    for (std::size_t i : {1, 2, 3, 5, 6, 7}) {
        CAPTURE(i);
        const Outcome* o = outcome_of(r, "p" + std::to_string(i));
        REQUIRE(o);
        CAPTURE(o->error);
        CHECK(o->ok);
        auto d = c.peers[i]->receive(std::chrono::seconds(5));
        REQUIRE(d);
        CHECK(*d->bytes == *bytes);
    }
}

TEST_CASE("control tree: a relay gone during set-up fails, the members below it are planned again through others") {
    // p2 holds back the plans of p5 and p6, then stops: the coordinator loses its child,
    // and with it the subtree, which a next try reaches through another tree.
    std::atomic<bool> held{false};
    Cluster c(8, {{2, [&held](net::Frame&) {
                       held = true;
                       return false;
                   }}});
    const Network net = lan(8);
    const auto bytes = random_bytes(100'000, 3);
    auto run = std::async(std::launch::async, [&] { return c.peers[0]->run(broadcast(net, bytes)); });
    REQUIRE(test::wait_for([&] { return held.load(); }));
    c.peers[2]->stop();
    REQUIRE(run.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    const JobReport r = run.get();
    const Outcome* p2 = outcome_of(r, "p2");
    REQUIRE(p2);
    CHECK_FALSE(p2->ok);
    REQUIRE(r.failed_members.size() == 1);
    CHECK(r.failed_members[0].member == "p2");
    for (std::size_t i : {1, 3, 4, 5, 6, 7}) {
        CAPTURE(i);
        const Outcome* o = outcome_of(r, "p" + std::to_string(i));
        REQUIRE(o);
        CAPTURE(o->error);
        CHECK(o->ok);
        if (i == 5 || i == 6) CHECK(o->attempt >= 2);
        auto d = c.peers[i]->receive(std::chrono::seconds(5));
        REQUIRE(d);
        CHECK(*d->bytes == *bytes);
    }
}

namespace {

std::vector<std::string> others(std::size_t n) {
    std::vector<std::string> names;
    for (std::size_t i = 1; i < n; ++i) names.push_back("p" + std::to_string(i));
    return names;
}

/// Each peer answers a hello with its name, as a daemon does.
void answer_hellos(test::PeerCluster& c) {
    for (std::size_t i = 0; i < c.peers.size(); ++i) {
        c.peers[i]->on_request([name = "p" + std::to_string(i)](const net::PeerIdentity&, const nlohmann::json& req, Responder respond) {
            if (req.value("cmd", "") == "hello") respond({{"ok", true}, {"name", name}});
        });
    }
}

}  // namespace

TEST_CASE("control tree: whether members are up is asked along the tree, the coordinator dials its children only") {
    Cluster c(8, {});
    answer_hellos(c);
    const std::uint64_t opened = c.peers[0]->stats().connections_opened.load();
    const auto names = others(8);
    const Peer::Answers a = c.peers[0]->hello_all(names, std::chrono::seconds(10));
    REQUIRE(a.errors.size() == names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
        CAPTURE(names[i]);
        CHECK(a.errors[i].empty());
        CHECK(a.responses[i].value("name", "") == names[i]);  // each member's own answer, in order
    }
    // p1 and p2; a star would dial all seven.
    CHECK(c.peers[0]->stats().connections_opened.load() - opened == 2);
}

TEST_CASE("control tree: a relay down and a member down below a relay are reported down, the rest up, in time") {
    // p1 (relay of p3, p4, p7) is stopped; p5 (below p2) takes hellos and never answers.
    Cluster c(8, {});
    answer_hellos(c);
    c.peers[5]->on_request([](const net::PeerIdentity&, const nlohmann::json&, Responder) {});
    c.peers[1]->stop();
    const auto names = others(8);
    auto asked = std::async(std::launch::async, [&] { return c.peers[0]->hello_all(names, std::chrono::milliseconds(2000)); });
    REQUIRE(asked.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    const Peer::Answers a = asked.get();
    REQUIRE(a.errors.size() == names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
        CAPTURE(names[i]);
        CAPTURE(a.errors[i]);
        const bool down = names[i] == "p1" || names[i] == "p5";
        CHECK(a.errors[i].empty() == !down);
        if (!down) CHECK(a.responses[i].value("name", "") == names[i]);
    }
}
