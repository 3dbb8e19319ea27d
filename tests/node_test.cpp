// hetcast::Node, the embeddable API: nodes as threads of one process over loopback.
#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/runtime/client.hpp"
#include "hetcast/runtime/node.hpp"
#include "hetcast/runtime/service.hpp"

#include <nlohmann/json.hpp>
#include "node_cluster.hpp"
#include "temp_dir.hpp"
#include "wait.hpp"
#include "identity.hpp"

using namespace hetcast;
using test::TempDir;

using test::Nodes;
using test::random_bytes;
using test::two_subnets;

TEST_CASE("node: broadcast and multicast of 1 B, 64 KiB and 32 MiB reach exactly their receivers") {
    Nodes c(5);
    for (const std::size_t size : {std::size_t{1}, std::size_t{64} << 10, std::size_t{32} << 20}) {
        CAPTURE(size);
        const Bytes bytes = random_bytes(size, size);
        const JobReport all = c[0].broadcast(bytes);
        CHECK(all.ok());
        CHECK(all.outcomes.size() == 4);
        CHECK(all.lower_bound <= all.predicted + 1e-12);
        for (std::size_t i = 1; i < 5; ++i) {
            const auto d = c[i].receive(std::chrono::seconds(10));
            REQUIRE(d);
            CHECK(d->source == "n0");
            CHECK(*d->bytes == *bytes);
        }
        const JobReport some = c[3].multicast(bytes, {"n0", "n4"}, "ecef");
        CHECK(some.ok());
        CHECK(some.algorithm == "ecef");
        for (std::size_t i : {0, 4}) {
            const auto d = c[i].receive(std::chrono::seconds(10));
            REQUIRE(d);
            CHECK(d->source == "n3");
            CHECK(*d->bytes == *bytes);
        }
        for (std::size_t i = 0; i < 5; ++i) CHECK_FALSE(c[i].receive(std::chrono::milliseconds(0)));
    }
}

TEST_CASE("node: receive waits about its timeout and returns nothing, the callback variant gets every delivery") {
    Nodes c(5);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_FALSE(c[1].receive(std::chrono::milliseconds(150)));
    const auto waited = std::chrono::steady_clock::now() - t0;
    CHECK(waited >= std::chrono::milliseconds(150));
    CHECK(waited < std::chrono::seconds(5));

    std::atomic<int> calls{0};
    std::atomic<std::size_t> bytes_seen{0};
    c[2].on_delivery([&](Delivery d) {
        bytes_seen += d.bytes->size();
        ++calls;
    });
    for (int k = 0; k < 3; ++k) CHECK(c[0].broadcast(random_bytes(1000 + k, k)).ok());
    REQUIRE(test::wait_for([&] { return calls == 3; }));
    CHECK(bytes_seen == 1000 + 1001 + 1002);
    CHECK_FALSE(c[2].receive(std::chrono::milliseconds(0)));  // the queue was bypassed
    c[2].on_delivery({});
    CHECK(c[0].multicast(random_bytes(10, 9), {"n2"}).ok());
    CHECK(c[2].receive(std::chrono::seconds(5)));
}

TEST_CASE("node: an exchange of three sources delivers every offered buffer to its destinations") {
    Nodes c(5);
    const Bytes a = random_bytes(70'000, 1), b = random_bytes(1, 2), d = random_bytes(300'000, 3);
    c[1].offer("a", a);
    c[2].offer("b", b);
    c[4].offer("d", d);
    const JobReport r = c[0].exchange({{"n1", "a", {}}, {"n2", "b", {"n0", "n3"}}, {"n4", "d", {"n1", "n2"}}});
    REQUIRE(r.ok());
    CHECK(r.outcomes.size() == 4 + 2 + 2);
    CHECK(r.lower_bound <= r.predicted + 1e-12);
    std::map<std::pair<std::string, std::string>, Bytes> expected{
        {{"n0", "n1"}, a}, {{"n2", "n1"}, a}, {{"n3", "n1"}, a}, {{"n4", "n1"}, a},
        {{"n0", "n2"}, b}, {{"n3", "n2"}, b}, {{"n1", "n4"}, d}, {{"n2", "n4"}, d}};
    std::size_t seen = 0;
    for (std::size_t i = 0; i < 5; ++i) {
        while (auto got = c[i].receive(std::chrono::milliseconds(200))) {
            const auto it = expected.find({"n" + std::to_string(i), got->source});
            REQUIRE(it != expected.end());
            CHECK(*got->bytes == *it->second);
            ++seen;
        }
    }
    CHECK(seen == expected.size());
    // An entry whose source offered nothing under that key is refused before anything moves.
    CHECK_THROWS_AS((void)c[0].exchange({{"n3", "nothing", {}}}), InputError);
}

TEST_CASE("node: a node that leaves mid-run is named in the report, the others get the data") {
    // 2 MB/s links: each 4 MiB transfer takes about 2 s, so n3 leaves well inside it even
    // when a loaded machine makes the job's set-up slow.
    Nodes c(5, true);
    const Bytes bytes = random_bytes(4 << 20, 4);
    std::thread leaver([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        c[3].stop();
    });
    const JobReport r = c[0].broadcast(bytes, "flat");
    leaver.join();
    CHECK_FALSE(r.ok());
    for (const auto& o : r.outcomes) {
        CAPTURE(o.dest);
        CHECK(o.ok == (o.dest != "n3"));
        if (o.dest == "n3") CHECK(o.error.find("n3") != std::string::npos);
    }
    for (std::size_t i : {1, 2, 4}) {
        const auto d = c[i].receive(std::chrono::seconds(5));
        REQUIRE(d);
        CHECK(*d->bytes == *bytes);
    }
}

TEST_CASE("node: requests that cannot be planned are refused") {
    PeerConfig cfg;
    cfg.name = "lonely";
    cfg.identity = test::identity(cfg.name);
    Node node(cfg);
    CHECK_THROWS_AS((void)node.broadcast(random_bytes(1, 1)), InputError);  // no cluster yet
    Nodes c(3);
    CHECK_THROWS_AS((void)c[0].multicast(random_bytes(1, 1), {"nobody"}), InputError);
    CHECK_THROWS_AS((void)c[0].broadcast(nullptr), InputError);
    CHECK_THROWS_AS(c[0].join({{"stranger", "127.0.0.1", 1}}, two_subnets(3)), InputError);
}

TEST_CASE("node: built from a NodeConfig (map file, members) or a daemon config, the coordinator can be a source") {
    TempDir dir;
    const Network map = two_subnets(5);
    const auto map_file = dir.path / "map.yaml";
    std::ofstream(map_file) << format_network(map);
    std::vector<std::unique_ptr<Node>> nodes;
    std::vector<Member> members;
    for (std::size_t i = 0; i < 4; ++i) {
        NodeConfig c;
        c.peer.name = "n" + std::to_string(i);
        c.peer.identity = test::identity(c.peer.name);
        c.peer.dest_root = dir.path / c.peer.name;
        c.map_file = map_file;
        nodes.push_back(std::make_unique<Node>(c));
        nodes.back()->start();
        members.push_back({c.peer.name, "127.0.0.1", nodes.back()->port()});
    }

    // n4 from the YAML a daemon reads: members from its cluster file, the map from state_dir.
    const auto state = dir.path / "state";
    std::filesystem::create_directories(state);
    std::filesystem::copy_file(map_file, state / "map.yaml");
    std::ofstream(dir.path / "n4.pem") << net::identity_pem(test::identity("n4"));
    std::filesystem::permissions(dir.path / "n4.pem",
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::ofstream(dir.path / "cluster.yaml") << "members:\n  - {name: n0, host: 127.0.0.1, port: " << members[0].port
                                             << "}\n  - {name: n4, host: 127.0.0.1, port: 1}\n";
    std::ofstream(dir.path / "hetcastd.yaml") << "name: n4\nlisten: 127.0.0.1:0\nstate_dir: state\n"
                                                 "dest_root: recv\nidentity: n4.pem\ncluster: cluster.yaml\n";
    const NodeConfig loaded = load_node_config(dir.path / "hetcastd.yaml");
    CHECK(loaded.peer.name == "n4");
    CHECK(net::describe(loaded.peer.identity).name == "n4");
    CHECK(loaded.peer.port == 0);
    CHECK(loaded.peer.dest_root == dir.path / "recv");
    REQUIRE(loaded.map_file);
    CHECK(*loaded.map_file == state / "map.yaml");
    CHECK(loaded.members.size() == 2);
    nodes.push_back(std::make_unique<Node>(loaded));
    CHECK(nodes[4]->members().size() == 2);
    nodes[4]->start();
    members.push_back({"n4", "127.0.0.1", nodes[4]->port()});
    for (auto& n : nodes) n->set_members(members);
    CHECK(nodes[2]->members().size() == 5);

    // n0 coordinates and sources "x" itself (a local body); n3 sources "y" remotely.
    const Bytes x = random_bytes(64 << 10, 7), y = random_bytes(5000, 8);
    nodes[0]->offer("x", x);
    nodes[3]->offer("y", y);
    const JobReport r = nodes[0]->exchange({{"n0", "x", {"n1", "n2"}}, {"n3", "y", {"n0", "n4"}}}, "wr");
    REQUIRE(r.ok());
    CHECK(r.outcomes.size() == 4);
    CHECK(r.lower_bound <= r.predicted + 1e-12);
    for (std::size_t i : {1, 2}) {
        const auto d = nodes[i]->receive(std::chrono::seconds(5));
        REQUIRE(d);
        CHECK(d->source == "n0");
        CHECK(*d->bytes == *x);
    }
    for (std::size_t i : {0, 4}) {
        const auto d = nodes[i]->receive(std::chrono::seconds(5));
        REQUIRE(d);
        CHECK(d->source == "n3");
        CHECK(*d->bytes == *y);
    }
    nodes[3]->withdraw("y");
    CHECK_THROWS_AS((void)nodes[0]->exchange({{"n3", "y", {"n1"}}}), InputError);
    CHECK_THROWS_AS(nodes[4]->set_map(two_subnets(2)), InputError);  // n4 is not in it
}

TEST_CASE("node: members that are down before a job are skipped by a broadcast and named by a multicast") {
    Nodes c(5);
    c[2].stop();
    const Bytes bytes = random_bytes(64 << 10, 8);
    const JobReport b = c[0].broadcast(bytes);
    CHECK(b.ok());
    CHECK(b.skipped == std::vector<std::string>{"n2"});
    CHECK(b.outcomes.size() == 3);
    for (const auto& o : b.outcomes) CHECK(o.dest != "n2");
    const JobReport m = c[0].multicast(bytes, {"n1", "n2", "n3"}, "flat");
    CHECK_FALSE(m.ok());
    CHECK(m.failures() == 1);
    for (const auto& o : m.outcomes) {
        CAPTURE(o.dest);
        CHECK(o.ok == (o.dest != "n2"));
        if (o.dest == "n2") CHECK(o.error.find("unreachable") != std::string::npos);
    }
    for (std::size_t i : {1, 3}) {
        for (int k = 0; k < 2; ++k) {
            const auto d = c[i].receive(std::chrono::seconds(5));
            REQUIRE(d);
            CHECK(*d->bytes == *bytes);
        }
    }
    CHECK(c[4].receive(std::chrono::seconds(5)));  // the broadcast only
    CHECK_FALSE(c[4].receive(std::chrono::milliseconds(200)));
}

/// A daemon's config under `dir`/NAME with its identity file, on an ephemeral port.
static DaemonConfig daemon_config(const TempDir& dir, const std::string& name) {
    const auto id_file = dir.path / (name + ".pem");
    std::ofstream(id_file) << net::identity_pem(test::identity(name));
    std::filesystem::permissions(id_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    DaemonConfig dc;
    dc.name = name;
    dc.port = 0;
    dc.state_dir = dir.path / name / "state";
    dc.dest_root = dir.path / name / "files";
    dc.identity_file = id_file;
    return dc;
}

TEST_CASE("node: joins a running daemon through it as a seed, the next node to join reaches it too") {
    TempDir dir;
    Service daemon(daemon_config(dir, "d0"));
    daemon.start();
    const auto embedded = [&](const std::string& name) {
        PeerConfig c;
        c.name = name;
        c.identity = test::identity(c.name);
        c.dest_root = dir.path / name;
        c.connect_timeout = std::chrono::milliseconds(3000);
        auto n = std::make_unique<Node>(c);
        n->start();
        return n;
    };
    const auto names_of = [](const std::vector<Member>& ms) {
        std::vector<std::string> out;
        for (const auto& m : ms) out.push_back(m.name);
        std::sort(out.begin(), out.end());
        return out;
    };
    auto a = embedded("a");
    a->join("127.0.0.1", daemon.port());
    CHECK(names_of(a->members()) == std::vector<std::string>{"a", "d0"});
    auto b = embedded("b");
    // The daemon knows a member now: another one joins by the operator's order.
    Client op("127.0.0.1", daemon.port(), test::identity("ops", net::Role::operator_));
    CHECK(op.call({{"cmd", "join"}, {"name", "b"}, {"host", "127.0.0.1"}, {"port", b->port()}}).value("ok", false));
    b->join("127.0.0.1", daemon.port());
    CHECK(names_of(b->members()) == std::vector<std::string>{"a", "b", "d0"});
    // The daemon measured b against a (a answered its ping request) and told a of b.
    CHECK(test::wait_for([&] { return names_of(a->members()).size() == 3; }));
    const Bytes bytes = random_bytes(100000, 9);
    const JobReport r = b->multicast(bytes, {"a"});
    CHECK(r.ok());
    const auto d = a->receive(std::chrono::seconds(5));
    REQUIRE(d);
    CHECK(d->source == "b");
    CHECK(*d->bytes == *bytes);
    // A node's own job is refused by the daemon at set-up with the reason (it takes jobs
    // only under an operator's order), not accepted and dropped.
    const JobReport to_daemon = b->multicast(bytes, {"a", "d0"});
    CHECK_FALSE(to_daemon.ok());
    for (const auto& o : to_daemon.outcomes) {
        CHECK(o.ok == (o.dest == "a"));
        if (o.dest == "d0") CHECK_MESSAGE(o.error.find("carries no operator's order") != std::string::npos, o.error);
    }
    CHECK(a->receive(std::chrono::seconds(5)));
    CHECK_THROWS_AS(embedded("c")->join("127.0.0.1", 1), Error);
    b->stop();
    a->stop();
    daemon.stop();
}

TEST_CASE("daemon: a request whose answer quotes bytes that are not UTF-8 is answered, and the daemon goes on") {
    TempDir dir;
    Service daemon(daemon_config(dir, "d0"));
    daemon.start();
    Client client("127.0.0.1", daemon.port(), test::identity("ops", net::Role::operator_), std::chrono::seconds(5), "d0");
    // 'é' is two bytes; the error quotes the first 40 bytes of the job text, cutting one.
    std::string text;
    for (int i = 0; i < 30; ++i) text += "\xc3\xa9";
    const nlohmann::json a = client.call({{"cmd", "cancel"}, {"job", "x" + text}});
    CHECK_FALSE(a.value("ok", true));
    CHECK(a.value("error", std::string()).find("is not a job id") != std::string::npos);
    CHECK(client.call({{"cmd", "hello"}}).value("name", std::string()) == "d0");
    daemon.stop();
}
