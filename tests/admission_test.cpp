// Who may connect to a daemon at all (docs/threat-model.md): identities the cluster does not
// know are refused before a request is read.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <condition_variable>
#include <fstream>
#include <set>
#include <mutex>
#include <nlohmann/json.hpp>

#include "hetcast/error.hpp"
#include "hetcast/model/network.hpp"
#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/client.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/runtime/node.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/service.hpp"
#include "identity.hpp"
#include "temp_dir.hpp"
#include "wait.hpp"

using namespace hetcast;
using test::TempDir;

namespace {

/// A daemon of a two-member cluster (d0 and m1, m1 not running), its log kept.
struct Daemon {
    TempDir dir;
    std::mutex mu;
    std::vector<std::string> logs;
    std::unique_ptr<Service> svc;

    explicit Daemon(const std::function<void(DaemonConfig&)>& adjust = {}, const net::Identity& id = test::identity("d0")) {
        const auto id_file = dir.path / "d0.pem";
        std::ofstream(id_file) << net::identity_pem(id);
        ::chmod(id_file.c_str(), 0600);
        std::ofstream(dir.path / "cluster.yaml")
            << "members: [{name: d0, host: 127.0.0.1, port: 1}, {name: m1, host: 127.0.0.1, port: 2}]\n";
        DaemonConfig dc;
        dc.name = "d0";
        dc.port = 0;
        dc.state_dir = dir.path / "state";
        dc.dest_root = dir.path / "files";
        dc.identity_file = id_file;
        dc.cluster_file = dir.path / "cluster.yaml";
        if (adjust) adjust(dc);
        svc = std::make_unique<Service>(dc, [this](LogLevel, const std::string& line) {
            std::lock_guard lock(mu);
            logs.push_back(line);
        });
        svc->start();
    }
    ~Daemon() { svc->stop(); }
    bool logged(const std::string& what) {
        std::lock_guard lock(mu);
        for (const auto& l : logs) {
            if (l.find(what) != std::string::npos) return true;
        }
        return false;
    }
};

/// A bare transport with `id`: the responses it is sent, and which of its connections closed.
struct Raw {
    std::mutex mu;
    std::vector<std::string> responses;
    std::set<const net::Connection*> closed;
    std::unique_ptr<net::Transport> t;
    explicit Raw(const net::Identity& id) {
        net::TransportConfig cfg;
        cfg.identity = id;
        cfg.timeout = std::chrono::milliseconds(3000);
        net::TransportCallbacks cb;
        cb.on_frame = [this](const net::ConnectionPtr&, net::Frame&& f) {
            std::lock_guard lock(mu);
            if (f.header.type == net::FrameType::response) responses.emplace_back(net::as_text(f.payload));
        };
        cb.on_close = [this](const net::ConnectionPtr& c, const std::string&) {
            std::lock_guard lock(mu);
            closed.insert(c.get());
        };
        t = net::make_tcp_transport(cfg, cb);
        t->start();
    }
    std::size_t count(const std::string& part) {
        std::lock_guard lock(mu);
        return static_cast<std::size_t>(
            std::count_if(responses.begin(), responses.end(), [&](const std::string& r) { return r.find(part) != std::string::npos; }));
    }
    bool is_closed(const net::ConnectionPtr& c) {
        std::lock_guard lock(mu);
        return closed.count(c.get()) > 0;
    }
};

net::Frame request(std::uint32_t seq, const std::string& cmd) {
    const std::string text = nlohmann::json{{"cmd", cmd}}.dump();
    const auto* p = reinterpret_cast<const std::byte*>(text.data());
    return net::Frame{net::FrameHeader{net::FrameType::request, 0, 0, seq, 0}, std::vector<std::byte>(p, p + text.size())};
}

/// A peer whose "block" requests wait until released; `adjust` sets its limits.
struct Blocking {
    std::mutex mu;
    std::condition_variable cv;
    bool released = false;
    int waiting = 0;
    std::vector<std::string> logs;
    std::unique_ptr<Peer> peer;
    explicit Blocking(const std::function<void(PeerConfig&)>& adjust) {
        PeerConfig c;
        c.name = "a";
        c.identity = test::identity("a");
        c.dest_root = std::filesystem::temp_directory_path();
        c.log = [this](LogLevel, const std::string& line) {
            std::lock_guard lock(mu);
            logs.push_back(line);
        };
        adjust(c);
        peer = std::make_unique<Peer>(c);
        peer->on_request([this](const net::PeerIdentity&, const nlohmann::json& req, Peer::Responder respond) {
            if (req.value("cmd", "") == "block") {
                std::unique_lock lock(mu);
                ++waiting;
                cv.wait(lock, [this] { return released; });
            }
            respond({{"ok", true}});
        });
        peer->start();
    }
    ~Blocking() {
        release();
        peer->stop();
    }
    void release() {
        std::lock_guard lock(mu);
        released = true;
        cv.notify_all();
    }
    int blocked() {
        std::lock_guard lock(mu);
        return waiting;
    }
    bool logged(const std::string& what) {
        std::lock_guard lock(mu);
        return std::any_of(logs.begin(), logs.end(), [&](const std::string& l) { return l.find(what) != std::string::npos; });
    }
};

}  // namespace

TEST_CASE("admission: an identity the CA issued for a name that is no member is refused before any request") {
    Daemon d;
    Raw ghost(test::identity("ghost"));
    CHECK_THROWS_WITH_AS((void)ghost.t->connect("127.0.0.1", d.svc->port()),
                         doctest::Contains("'ghost' is not a member of this cluster"), Error);
    CHECK(test::wait_for([&] { return d.logged("refused connection from 'ghost': 'ghost' is not a member"); }));
    // A member and an operator are admitted, and their requests answered.
    Raw m1(test::identity("m1"));
    net::ConnectionPtr c = m1.t->connect("127.0.0.1", d.svc->port(), "d0");
    CHECK(c->peer() == "d0");
    Client op("127.0.0.1", d.svc->port(), test::identity("ops", net::Role::operator_));
    CHECK(op.call({{"cmd", "hello"}}).value("name", "") == "d0");
}

TEST_CASE("admission: the first member joins a lone daemon, later ones by the operator's order, then strangers are refused") {
    Daemon d([](DaemonConfig& dc) { dc.cluster_file.reset(); });
    const auto embedded = [&](const std::string& name) {
        PeerConfig c;
        c.name = name;
        c.identity = test::identity(name);
        c.dest_root = d.dir.path / name;
        c.connect_timeout = std::chrono::milliseconds(3000);
        auto n = std::make_unique<Node>(c);
        n->start();
        return n;
    };
    auto a = embedded("a");
    a->join("127.0.0.1", d.svc->port());  // d0 knew nobody: nothing to check against
    auto b = embedded("b");
    CHECK_THROWS_WITH_AS(b->join("127.0.0.1", d.svc->port()), doctest::Contains("'b' is not a member of this cluster"), Error);
    CHECK(test::wait_for([&] { return d.logged("refused connection from 'b'"); }));
    Client op("127.0.0.1", d.svc->port(), test::identity("ops", net::Role::operator_));
    const nlohmann::json answer = op.call({{"cmd", "join"}, {"name", "b"}, {"host", "127.0.0.1"}, {"port", b->port()}});
    CHECK_MESSAGE(answer.value("ok", false), answer.dump());
    CHECK(test::wait_for([&] { return b->members().size() == 3; }));
    // b knows the cluster now: a stranger is refused there too, a member is not.
    Raw ghost(test::identity("ghost"));
    CHECK_THROWS_WITH_AS((void)ghost.t->connect("127.0.0.1", b->port()), doctest::Contains("not a member"), Error);
    Raw a_raw(test::identity("a"));
    CHECK(a_raw.t->connect("127.0.0.1", b->port(), "b")->peer() == "b");
    b->stop();
    a->stop();
}

TEST_CASE("limits: 50 silent connections close after the idle time, one with a request running stays until it ends") {
    Daemon d([](DaemonConfig& dc) { dc.idle_timeout = std::chrono::milliseconds(300); });
    Raw m1(test::identity("m1"));
    std::vector<net::ConnectionPtr> silent;
    for (int i = 0; i < 50; ++i) silent.push_back(m1.t->connect("127.0.0.1", d.svc->port(), "d0"));
    CHECK(test::wait_for([&] { return std::all_of(silent.begin(), silent.end(), [&](const auto& c) { return m1.is_closed(c); }); }));
    CHECK(d.logged("closing an idle connection with 'm1': nothing for 300 ms"));
    // The daemon goes on: a new connection is answered.
    Client op("127.0.0.1", d.svc->port(), test::identity("ops", net::Role::operator_));
    CHECK(op.call({{"cmd", "hello"}}).value("name", "") == "d0");

    Blocking a([](PeerConfig& c) { c.idle_timeout = std::chrono::milliseconds(300); });
    Raw b(test::identity("b"));
    const net::ConnectionPtr working = b.t->connect("127.0.0.1", a.peer->port());
    working->send(request(1, "block"));
    REQUIRE(test::wait_for([&] { return a.blocked() == 1; }));
    std::vector<net::ConnectionPtr> quiet;
    for (int i = 0; i < 5; ++i) quiet.push_back(b.t->connect("127.0.0.1", a.peer->port()));
    CHECK(test::wait_for([&] { return std::all_of(quiet.begin(), quiet.end(), [&](const auto& c) { return b.is_closed(c); }); }));
    CHECK_FALSE(b.is_closed(working));  // as idle as the others, but its request runs
    a.release();
    CHECK(test::wait_for([&] { return b.count("\"ok\":true") == 1; }));
    CHECK(test::wait_for([&] { return b.is_closed(working); }));
}

TEST_CASE("limits: one peer's connections and requests over its limits are refused with the reason, the peer goes on") {
    Blocking a([](PeerConfig& c) {
        c.requests_per_peer = 2;
        c.connections_per_peer = 3;
    });
    Raw b(test::identity("b"));
    std::vector<net::ConnectionPtr> cs;
    for (int i = 0; i < 3; ++i) cs.push_back(b.t->connect("127.0.0.1", a.peer->port()));
    CHECK_THROWS_WITH_AS((void)b.t->connect("127.0.0.1", a.peer->port()),
                         doctest::Contains("'b' has 3 connections open here, the most one peer may have"), Error);
    CHECK(test::wait_for([&] { return a.logged("refused connection from 'b': 'b' has 3 connections open here"); }));
    // Another peer is not held to b's count.
    Raw c(test::identity("c"));
    CHECK_NOTHROW((void)c.t->connect("127.0.0.1", a.peer->port()));

    for (std::uint32_t i = 1; i <= 4; ++i) cs[i % 2]->send(request(i, "block"));
    CHECK(test::wait_for([&] { return b.count("'b' has 2 requests waiting or running on 'a', the most one peer may have") == 2; }));
    CHECK(a.logged("refused a request from 'b': busy"));
    a.release();
    CHECK(test::wait_for([&] { return b.count("\"ok\":true") == 2; }));
    cs[2]->send(request(9, "hello"));
    CHECK(test::wait_for([&] { return b.count("\"ok\":true") == 3; }));
}

TEST_CASE("operators: another operator's leave --operator revokes an operator, whose connections and orders are refused then") {
    Daemon d;
    const net::Identity ops = test::identity("ops", net::Role::operator_);
    const net::Identity eve = test::identity("eve", net::Role::operator_);
    const net::Identity m1 = test::identity("m1");
    // An order eve signed, passed on by member m1 (a cancel looked for on every member).
    const auto passed_on = [&] {
        const auto now = static_cast<std::int64_t>(std::time(nullptr));
        Client via("127.0.0.1", d.svc->port(), m1, std::chrono::seconds(5), "d0");
        return via.call(sign_order(eve, {{"cmd", "cancel"}, {"job", "12345"}}, "m1", now)).dump();
    };
    CHECK(passed_on().find("no job 12345") != std::string::npos);
    {
        Client as_eve("127.0.0.1", d.svc->port(), eve, std::chrono::seconds(5), "d0");
        const nlohmann::json self = as_eve.call({{"cmd", "leave"}, {"name", "eve"}, {"operator", true}});
        CHECK(self.value("error", "").find("cannot revoke its own identity") != std::string::npos);
        const nlohmann::json member = as_eve.call({{"cmd", "leave"}, {"name", "m1"}, {"operator", true}});
        CHECK(member.value("error", "").find("'m1' is a member") != std::string::npos);
    }
    Client as_ops("127.0.0.1", d.svc->port(), ops, std::chrono::seconds(5), "d0");
    const nlohmann::json a = as_ops.call({{"cmd", "leave"}, {"name", "eve"}, {"operator", true}});
    CHECK(a.value("not_updated", nlohmann::json::array()) == nlohmann::json::array({"m1"}));  // m1 is down
    CHECK(d.logged("the operator identity 'eve' was revoked by 'ops'"));
    CHECK_THROWS_WITH_AS(Client("127.0.0.1", d.svc->port(), eve, std::chrono::seconds(5), "d0"),
                         doctest::Contains("'eve' was revoked (by another operator)"), Error);
    CHECK(passed_on().find("signed by 'eve', whose identity was revoked") != std::string::npos);
    // Kept with the members' revocations, so that a restarted daemon still refuses eve.
    const auto kept = load_revoked(d.dir.path / "state" / "revoked.yaml");
    REQUIRE(kept.size() == 1);
    CHECK(kept[0].name == "eve");
}

TEST_CASE("expiry: an expired identity is refused by a daemon, and a daemon does not start with one") {
    const net::Identity old = test::cluster_ca().issue("m1", net::Role::member, 1, 2 * 86400);
    CHECK(net::describe(old).expires < std::time(nullptr));
    Daemon d;
    Raw m1(old);
    CHECK_THROWS_WITH_AS((void)m1.t->connect("127.0.0.1", d.svc->port()), doctest::Contains("certificate expired"), Error);
    CHECK(test::wait_for([&] { return d.logged("the peer's certificate is not valid now (certificate has expired"); }));
    // An operator's order signed with an expired identity is refused too.
    const net::Identity op_old = test::cluster_ca().issue("ops", net::Role::operator_, 1, 2 * 86400);
    const auto order = sign_order(op_old, {{"cmd", "cancel"}, {"job", "1"}}, "m1", static_cast<std::int64_t>(std::time(nullptr)));
    CHECK_THROWS_WITH_AS((void)check_order(order, test::cluster_ca().cert_pem(), {}, "m1", std::time(nullptr)),
                         doctest::Contains("not valid now"), InputError);
    CHECK_THROWS_WITH_AS(Daemon({}, test::cluster_ca().issue("d0", net::Role::member, 1, 2 * 86400)),
                         doctest::Contains("its certificate has expired"), InputError);
}

TEST_CASE("rotation: with the old and the new CA trusted, identities of either connect and sign orders, one CA alone refuses the other's") {
    const net::ClusterCa& old_ca = test::cluster_ca();
    const net::ClusterCa new_ca = net::ClusterCa::create("rotated");
    const auto both = [&](net::Identity id) {
        id.ca_pem += id.ca_pem == old_ca.cert_pem() ? new_ca.cert_pem() : old_ca.cert_pem();
        return net::parse_identity(net::identity_pem(id), "a rotated identity");  // what a daemon reads
    };
    // d0 keeps its old certificate but trusts both; m1 already has one of the new CA.
    Daemon d({}, both(old_ca.issue("d0", net::Role::member)));
    Raw m1(both(new_ca.issue("m1", net::Role::member)));
    CHECK(m1.t->connect("127.0.0.1", d.svc->port(), "d0")->peer() == "d0");
    const net::Identity new_ops = both(new_ca.issue("ops", net::Role::operator_));
    Client op("127.0.0.1", d.svc->port(), new_ops, std::chrono::seconds(5), "d0");
    CHECK(op.call({{"cmd", "hello"}}).value("name", "") == "d0");
    // The new operator's order, passed on by an old member, checks out against the bundle.
    const auto now = static_cast<std::int64_t>(std::time(nullptr));
    Client via("127.0.0.1", d.svc->port(), both(old_ca.issue("m1", net::Role::member)), std::chrono::seconds(5), "d0");
    CHECK(via.call(sign_order(new_ops, {{"cmd", "cancel"}, {"job", "7"}}, "m1", now)).dump().find("no job 7") != std::string::npos);
    // Without the bundle, the new CA's identities are strangers to an old daemon.
    Daemon only_old;
    CHECK_THROWS_WITH_AS((void)m1.t->connect("127.0.0.1", only_old.svc->port()), doctest::Contains("unknown ca"), Error);
    // An identity file holds at most max_trusted_cas CAs, each one a CA's.
    net::Identity many = old_ca.issue("m2", net::Role::member);
    for (std::size_t i = 0; i < net::max_trusted_cas; ++i) many.ca_pem += new_ca.cert_pem();
    CHECK_THROWS_WITH_AS((void)net::parse_identity(net::identity_pem(many), "f"), doctest::Contains("found 6"), InputError);
    net::Identity leaf = old_ca.issue("m3", net::Role::member);
    leaf.ca_pem += old_ca.issue("m4", net::Role::member).cert_pem;
    CHECK_THROWS_WITH_AS((void)net::parse_identity(net::identity_pem(leaf), "f"), doctest::Contains("no CA's"), InputError);
}

TEST_CASE("rotation: during the overlap a push crosses members on the old and the new CA, relays included") {
    TempDir dir;
    const net::ClusterCa new_ca = net::ClusterCa::create("rotated-push");
    const std::size_t n = 4;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) names.push_back("r" + std::to_string(i));
    Matrix lat(n, std::vector<double>(n, 1e-4)), bw(n, std::vector<double>(n, 1e8));
    const Network map = Network::parametric(names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
    std::vector<std::unique_ptr<Node>> nodes;
    std::vector<Member> members;
    for (std::size_t i = 0; i < n; ++i) {
        PeerConfig c;
        c.name = names[i];
        // Members 0 and 2 still hold the old CA's certificate, 1 and 3 the new one's; all trust both.
        c.identity = i % 2 == 0 ? test::cluster_ca().issue(c.name, net::Role::member) : new_ca.issue(c.name, net::Role::member);
        c.identity.ca_pem = test::cluster_ca().cert_pem() + new_ca.cert_pem();
        c.dest_root = dir.path / c.name;
        nodes.push_back(std::make_unique<Node>(c));
        nodes.back()->start();
        members.push_back({c.name, "127.0.0.1", nodes.back()->port()});
    }
    for (auto& node : nodes) node->join(members, map);
    auto bytes = std::make_shared<std::vector<std::byte>>(std::size_t{4} << 20, std::byte{7});
    const JobReport r = nodes[1]->broadcast(bytes);
    CHECK_MESSAGE(r.ok(), r.outcomes.size());
    for (std::size_t i : {0u, 2u, 3u}) {
        const auto d = nodes[i]->receive(std::chrono::seconds(10));
        REQUIRE(d);
        CHECK(*d->bytes == *bytes);
    }
    for (auto& node : nodes) node->stop();
}
