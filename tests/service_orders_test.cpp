// A daemon (Service, in-process) applies a member list or a map only when an operator's
// order backs it, and takes no job a member planned on its own (issue 24).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "hetcast/model/loader.hpp"
#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/service.hpp"
#include "identity.hpp"
#include "temp_dir.hpp"
#include "wait.hpp"

using namespace hetcast;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::int64_t wall() { return static_cast<std::int64_t>(std::time(nullptr)); }

std::string map_text(const std::vector<std::string>& names, double bw) {
    const std::size_t n = names.size();
    Matrix lat(n, std::vector<double>(n, 0.0001)), band(n, std::vector<double>(n, bw));
    return format_network(Network::parametric(names, lat, band, std::vector<Overhead>(n), std::vector<Overhead>(n)));
}

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Daemon {
    test::TempDir dir;
    std::mutex mu;
    std::vector<std::string> lines;
    std::unique_ptr<Service> service;
    Daemon() {
        const fs::path id = dir.path / "n1.pem";
        std::ofstream(id) << net::identity_pem(test::identity("n1"));
        fs::permissions(id, fs::perms::owner_read | fs::perms::owner_write);
        std::ofstream(dir.path / "cluster.yaml") << "members:\n"
                                                    "  - {name: n1, host: 127.0.0.1, port: 1}\n"
                                                    "  - {name: n2, host: 127.0.0.1, port: 2}\n"
                                                    "  - {name: n3, host: 127.0.0.1, port: 3}\n";
        fs::create_directories(dir.path / "state");
        std::ofstream(dir.path / "state" / "map.yaml") << map_text({"n1", "n2", "n3"}, 1e8);
        DaemonConfig c;
        c.name = "n1";
        c.port = 0;
        c.state_dir = dir.path / "state";
        c.dest_root = dir.path / "dest";
        c.identity_file = id;
        c.cluster_file = dir.path / "cluster.yaml";
        service = std::make_unique<Service>(c, [this](LogLevel, const std::string& line) {
            std::lock_guard lock(mu);
            lines.push_back(line);
        });
        service->start();
    }
    ~Daemon() { service->stop(); }
    std::string map() const { return read(dir.path / "state" / "map.yaml"); }
    bool logged(const std::string& what) {
        std::lock_guard lock(mu);
        return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(what) != std::string::npos; });
    }
};

/// Member n2's own peer, asking the daemon n1.
std::unique_ptr<Peer> member(const std::string& name, const Daemon& d) {
    PeerConfig c;
    c.name = name;
    c.identity = test::identity(name);
    auto p = std::make_unique<Peer>(c);
    p->start();
    p->set_members({{"n1", "127.0.0.1", d.service->port()}});
    return p;
}

std::vector<std::string> names_of(const json& status) {
    std::vector<std::string> out;
    for (const auto& m : status.at("members")) out.push_back(m.at("name").get<std::string>());
    return out;
}

}  // namespace

TEST_CASE("service orders: set_map and set_members from a member need an order that backs them") {
    Daemon d;
    auto n2 = member("n2", d);
    const auto op = test::identity("ops", net::Role::operator_);
    const std::string before = d.map();
    const std::string other = map_text({"n1", "n2", "n3"}, 1e3);
    const auto ask = [&](const json& req) { return n2->call("n1", req, std::chrono::seconds(10)); };

    CHECK_FALSE(ask({{"cmd", "set_map"}, {"map", other}}).value("ok", true));
    CHECK(d.logged("refused 'set_map' from 'n2': no operator's order"));
    // A probe order given to n3 does not let n2 publish a map.
    const json probe_n3 = sign_order(op, {{"cmd", "probe"}}, "n3", wall());
    CHECK_FALSE(ask({{"cmd", "set_map"}, {"map", other}, {"order", probe_n3}}).value("ok", true));
    // A push order is no map change.
    const json push_n2 = sign_order(op, {{"cmd", "push"}, {"files", {"/x"}}}, "n2", wall());
    CHECK_FALSE(ask({{"cmd", "set_map"}, {"map", other}, {"order", push_n2}}).value("ok", true));
    CHECK(d.map() == before);
    // The probe the operator gave n2 does.
    const json probe_n2 = sign_order(op, {{"cmd", "probe"}}, "n2", wall());
    CHECK(ask({{"cmd", "set_map"}, {"map", other}, {"order", probe_n2}}).value("ok", false));
    CHECK(d.map() == other);

    const auto list = [](const std::vector<std::string>& names) {
        std::vector<Member> ms;
        for (const auto& n : names) ms.push_back({n, "127.0.0.1", static_cast<std::uint16_t>(10 + n.back() - '0')});
        return members_to_json(ms);
    };
    const std::vector<std::string> all{"n1", "n2", "n3"};
    CHECK_FALSE(ask({{"cmd", "set_members"}, {"members", list({"n1", "n2"})}}).value("ok", true));
    CHECK(d.logged("refused 'set_members' from 'n2': no operator's order"));
    // A leave of n3 given to n2 does not remove n1 too, nor does a probe change the list.
    const json leave_n3 = sign_order(op, {{"cmd", "leave"}, {"name", "n3"}}, "n2", wall());
    CHECK_FALSE(ask({{"cmd", "set_members"}, {"members", list({"n2"})}, {"order", leave_n3}}).value("ok", true));
    CHECK_FALSE(ask({{"cmd", "set_members"}, {"members", list({"n1", "n2"})}, {"order", probe_n2}}).value("ok", true));
    // A join signed by n2 for n4 is no join of n4's.
    const json join_by_n2 = sign_join(test::identity("n2"), {{"cmd", "join"}, {"name", "n4"}, {"host", "127.0.0.1"}, {"port", 9}}, wall());
    CHECK_FALSE(ask({{"cmd", "set_members"}, {"members", list({"n1", "n2", "n3", "n4"})}, {"order", join_by_n2}}).value("ok", true));
    CHECK(names_of(ask({{"cmd", "status"}, {"hellos", false}})) == all);
    // n4's own join, passed on by n2, adds n4 where it asked to be.
    const json join_n4 = sign_join(test::identity("n4"), {{"cmd", "join"}, {"name", "n4"}, {"host", "127.0.0.1"}, {"port", 14}}, wall());
    const json joined = ask({{"cmd", "set_members"}, {"members", list({"n1", "n2", "n3", "n4"})}, {"order", join_n4}});
    INFO(joined.dump());
    CHECK(joined.value("ok", false));
    CHECK(names_of(ask({{"cmd", "status"}, {"hellos", false}})).size() == 4);
    n2->stop();
}

TEST_CASE("service orders: a daemon refuses a job plan a member made, and closes that connection") {
    Daemon d;
    std::ofstream(d.dir.path / "dest" / "a.bin") << "the original";
    std::mutex mu;
    std::vector<std::string> events;
    int closed = 0;
    net::TransportConfig tc;
    tc.identity = test::identity("n2");
    net::TransportCallbacks cb;
    cb.on_frame = [&](const net::ConnectionPtr&, net::Frame&& f) {
        std::lock_guard lock(mu);
        events.emplace_back(net::as_text(f.payload));
    };
    cb.on_close = [&](const net::ConnectionPtr&, const std::string&) {
        std::lock_guard lock(mu);
        ++closed;
    };
    auto t = net::make_tcp_transport(tc, cb);
    t->start();
    JobPlan p;
    p.job = 5;
    p.algorithm = "flat";
    p.coordinator = "n2";
    p.participants = {{"n2", "127.0.0.1", 2}, {"n1", "127.0.0.1", d.service->port()}};
    JobMessage m;
    m.source = "n2";
    m.size = 4;
    m.name = "a.bin";
    m.dests = {"n1"};
    p.messages = {m};
    p.tasks = {{Op::recv, 0, "n2"}};
    // Even with an operator's order, when it was given to another member.
    p.order = sign_order(test::identity("ops", net::Role::operator_), {{"cmd", "push"}, {"files", {"/a.bin"}}, {"to", {"n1"}}},
                         "n3", wall())
                  .dump();
    const auto c = t->connect("127.0.0.1", d.service->port(), "n1");
    const std::string text = to_json(p).dump();
    const auto* b = reinterpret_cast<const std::byte*>(text.data());
    c->send(net::Frame{net::FrameHeader{net::FrameType::job_plan, 0, 5, 0, 0}, {b, b + text.size()}});
    REQUIRE(test::wait_for([&] {
        std::lock_guard lock(mu);
        return closed > 0;
    }));
    CHECK(d.logged("closing the connection with 'n2': refused job 5: the order was given to 'n3', not to 'n2'"));
    CHECK(read(d.dir.path / "dest" / "a.bin") == "the original");
    t->stop();
}

TEST_CASE("service orders: a push or probe whose order is not given to this daemon is refused before anything runs") {
    Daemon d;
    std::mutex mu;
    std::vector<json> answers;
    net::TransportConfig tc;
    const auto op = test::identity("ops", net::Role::operator_);
    tc.identity = op;
    net::TransportCallbacks cb;
    cb.on_frame = [&](const net::ConnectionPtr&, net::Frame&& f) {
        std::lock_guard lock(mu);
        if (f.header.type == net::FrameType::response) answers.push_back(json::parse(net::as_text(f.payload)));
    };
    auto t = net::make_tcp_transport(tc, cb);
    t->start();
    const auto c = t->connect("127.0.0.1", d.service->port(), "n1");
    const json push{{"cmd", "push"}, {"files", {"/etc/hostname"}}, {"to", {"n2"}}};
    const std::vector<json> requests{push, sign_order(op, push, "n2", wall()),
                                     sign_order(op, {{"cmd", "probe"}}, "n3", wall()),
                                     sign_order(op, push, "n1", wall() - order_lifetime - 60)};
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const std::string text = requests[i].dump();
        const auto* b = reinterpret_cast<const std::byte*>(text.data());
        c->send(net::Frame{net::FrameHeader{net::FrameType::request, 0, 0, static_cast<std::uint32_t>(i + 1), 0}, {b, b + text.size()}});
    }
    REQUIRE(test::wait_for([&] {
        std::lock_guard lock(mu);
        return answers.size() == requests.size();
    }));
    for (const json& a : answers) {
        INFO(a.dump());
        CHECK_FALSE(a.value("ok", true));
        CHECK(a.value("error", "").find("needs the operator's signed order") != std::string::npos);
    }
    CHECK(d.logged("refused 'push' from 'ops': no operator's order"));
    CHECK(d.logged("refused 'probe' from 'ops': the order was given to 'n3', not to 'n1'"));
    t->stop();
}
