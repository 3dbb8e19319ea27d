// A participant takes a job only under an operator's order that covers the plan, and a
// job's frames only from the peers the plan names (issue 24): the pure check, then
// in-process peers sent hand-made frames over real TLS connections.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <sstream>

#include "hetcast/error.hpp"
#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/plan_order.hpp"
#include "hetcast/runtime/peer.hpp"
#include "identity.hpp"
#include "temp_dir.hpp"
#include "wait.hpp"

using namespace hetcast;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::int64_t wall() { return static_cast<std::int64_t>(std::time(nullptr)); }

const net::Identity& op() {
    static const net::Identity id = test::identity("ops", net::Role::operator_);
    return id;
}

json push_request(const std::string& file, const std::vector<std::string>& to) {
    return {{"cmd", "push"}, {"files", {file}}, {"to", to}, {"dest", ""}};
}

/// A daemon reads an order on its map (Service::Impl::order_scope); here: the file lands
/// under its own name, from the addressee, to the members the order lists.
OrderScope simple_scope(const json& order) {
    ScopedMessage m;
    m.source = order.at("order").at("to").get<std::string>();
    m.name = fs::path(order.at("files").at(0).get<std::string>()).filename().string();
    m.dests = order.at("to").get<std::vector<std::string>>();
    if (order.contains("upload")) {
        m.size = order["upload"].at("size").get<std::uint64_t>();
        m.sha = digest_from_hex(order["upload"].at("sha256").get<std::string>());
    }
    return {{m}};
}

net::Digest sha_of(const std::string& text) {
    net::Sha256 h;
    h.update(std::as_bytes(std::span(text.data(), text.size())));
    return h.finish();
}

/// The plan `coordinator` sends `to` for pushing `name` (the bytes `text`) to `dests`.
JobPlan plan_for(const std::string& coordinator, const std::string& to, const std::string& name,
                 const std::vector<std::string>& dests, const std::string& text, std::uint64_t job = 7) {
    JobPlan p;
    p.job = job;
    p.algorithm = "flat";
    p.coordinator = coordinator;
    p.participants = {{coordinator, "127.0.0.1", 1}, {to, "127.0.0.1", 2}};
    JobMessage m;
    m.source = coordinator;
    m.size = text.size();
    m.sha = sha_of(text);
    m.name = name;
    m.dests = dests;
    p.messages = {m};
    p.tasks = {{Op::recv, 0, coordinator}};
    return p;
}

std::string refusal(const JobPlan& p, const std::string& me, const std::vector<net::Revocation>& revoked = {}) {
    try {
        check_plan_order(p, test::cluster_ca().cert_pem(), revoked, simple_scope, me, wall());
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

}  // namespace

TEST_CASE("plan order: a plan is taken only under an operator's order that covers it") {
    JobPlan good = plan_for("p0", "p1", "a.bin", {"p1"}, "hello");
    good.order = sign_order(op(), push_request("/srv/a.bin", {"p1", "p2"}), "p0", wall()).dump();
    CHECK(refusal(good, "p1").empty());

    JobPlan none = good;
    none.order.clear();
    CHECK(refusal(none, "p1").find("no operator's order") != std::string::npos);
    // An order for file A reused for a plan of file B.
    JobPlan other_file = good;
    other_file.messages[0].name = "b.bin";
    CHECK(refusal(other_file, "p1").find("lands at 'b.bin'") != std::string::npos);
    // An order naming {p1, p2} used to plan p3.
    JobPlan other_dest = plan_for("p0", "p3", "a.bin", {"p3"}, "hello");
    other_dest.order = good.order;
    CHECK(refusal(other_dest, "p3").find("goes to 'p3'") != std::string::npos);
    // An order given to p0, used by p1 as coordinator.
    JobPlan stolen = plan_for("p1", "p2", "a.bin", {"p2"}, "hello");
    stolen.order = good.order;
    CHECK(refusal(stolen, "p2").find("given to 'p0', not to 'p1'") != std::string::npos);
    // Too old, a member's signature, a revoked operator.
    JobPlan old = good;
    old.order = sign_order(op(), push_request("/srv/a.bin", {"p1"}), "p0", wall() - order_lifetime - 10).dump();
    CHECK(refusal(old, "p1").find("too old") != std::string::npos);
    JobPlan by_member = good;
    by_member.order = sign_order(test::identity("p0"), push_request("/srv/a.bin", {"p1"}), "p0", wall()).dump();
    CHECK(refusal(by_member, "p1").find("a member") != std::string::npos);
    CHECK(refusal(good, "p1", {{"ops", wall() + 60, ""}}).find("revoked") != std::string::npos);
    // A plan that gives this member nothing.
    JobPlan idle = good;
    idle.tasks.clear();
    CHECK(refusal(idle, "p2").find("nothing to do") != std::string::npos);
}

TEST_CASE("plan order: every random alteration of a valid order and plan is refused") {
    const std::string text = "the pushed bytes";
    const net::Digest sha = sha_of(text);
    json request = push_request("/srv/a.bin", {"p1", "p2"});
    request["upload"] = {{"size", text.size()}, {"sha256", net::to_hex(sha)}};
    const std::int64_t t = wall();
    JobPlan good = plan_for("p0", "p1", "a.bin", {"p1", "p2"}, text);
    good.order = sign_order(op(), request, "p0", t).dump();
    REQUIRE(refusal(good, "p1").empty());
    std::mt19937 rng(24);
    for (int round = 0; round < 200; ++round) {
        JobPlan bad = good;
        json order = json::parse(good.order);
        const int what = static_cast<int>(rng() % 14);
        switch (what) {
            case 0: bad.coordinator = "p2"; break;
            case 1: bad.messages[0].name = "a.bin" + std::to_string(rng() % 100); break;
            case 2: bad.messages[0].dests.push_back("p" + std::to_string(3 + rng() % 5)); break;
            case 3: bad.messages[0].source = "p2"; break;
            case 4: bad.messages[0].origin = "file:/etc/shadow"; break;
            case 5: bad.messages[0].size += 1 + rng() % 1000; break;
            case 6: bad.messages[0].sha[rng() % 32] ^= std::byte(1 + rng() % 255); break;
            case 7: bad.messages.push_back(bad.messages[0]); break;
            case 8: order["to"].push_back("p9"); break;  // the request changed after signing
            case 9: order["order"]["to"] = "p1"; break;
            case 10: order["order"]["issued"] = t - 1 - static_cast<std::int64_t>(rng() % 100); break;
            case 11: {
                std::string sig = order["order"]["sig"].get<std::string>();
                char& c = sig[rng() % sig.size()];
                c = c == '0' ? '1' : '0';
                order["order"]["sig"] = sig;
                break;
            }
            case 12: order["cmd"] = "probe"; break;
            case 13: bad.messages[0].tree.push_back(TreeEntry{}); break;
        }
        if (what >= 8 && what <= 12) bad.order = order.dump();
        INFO("alteration " << what);
        CHECK_FALSE(refusal(bad, "p1").empty());
    }
}

namespace {

/// A peer that enforces orders (as a daemon does), with an existing file in its dest_root.
struct Target {
    test::TempDir dir;
    std::mutex log_mu;
    std::vector<std::string> lines;
    std::unique_ptr<Peer> peer;
    explicit Target(const std::string& name) {
        fs::create_directories(dir.path / "dest");
        std::ofstream(dir.path / "dest" / "a.bin") << "the original";
        PeerConfig c;
        c.name = name;
        c.identity = test::identity(name);
        c.dest_root = dir.path / "dest";
        c.order_scope = simple_scope;
        c.log = [this](LogLevel, const std::string& line) {
            std::lock_guard lock(log_mu);
            lines.push_back(line);
        };
        peer = std::make_unique<Peer>(c);
        peer->start();
    }
    ~Target() { peer->stop(); }
    bool logged(const std::string& what) {
        std::lock_guard lock(log_mu);
        return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(what) != std::string::npos; });
    }
    std::string file(const std::string& name) const {
        std::ifstream in(dir.path / "dest" / name);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }
    /// Nothing but the original file under dest_root (no temporaries, nothing new).
    std::size_t entries() const {
        std::size_t n = 0;
        for (const auto& e : fs::recursive_directory_iterator(dir.path / "dest")) {
            if (e.path().filename() != ".hetcast-spool") ++n;
        }
        return n;
    }
};

/// Hand-made frames with a member's identity, on connections of its own.
struct Raw {
    std::unique_ptr<net::Transport> transport;
    std::mutex mu;
    std::vector<std::pair<std::string, net::FrameType>> frames;  // (peer, type)
    std::vector<std::string> events;                             // job_report payloads
    int closed = 0;
    explicit Raw(const std::string& name) {
        net::TransportConfig tc;
        tc.identity = test::identity(name);
        net::TransportCallbacks cb;
        cb.on_frame = [this](const net::ConnectionPtr& c, net::Frame&& f) {
            std::lock_guard lock(mu);
            frames.emplace_back(c->peer(), f.header.type);
            // Events, and the reason a closing peer gives.
            if (f.header.type == net::FrameType::job_report || f.header.type == net::FrameType::error) {
                events.emplace_back(net::as_text(f.payload));
            }
        };
        cb.on_close = [this](const net::ConnectionPtr&, const std::string& why) {
            std::lock_guard lock(mu);
            events.push_back(why);  // a refusing peer's error frame ends up here
            ++closed;
        };
        transport = net::make_tcp_transport(tc, cb);
        transport->start();
    }
    ~Raw() { transport->stop(); }
    net::ConnectionPtr dial(const Target& t) { return transport->connect("127.0.0.1", t.peer->port(), t.peer->name()); }
    int closes() {
        std::lock_guard lock(mu);
        return closed;
    }
    bool heard(const std::string& what) {
        std::lock_guard lock(mu);
        return std::any_of(events.begin(), events.end(), [&](const std::string& e) { return e.find(what) != std::string::npos; });
    }
};

net::Frame frame(net::FrameType type, std::uint64_t job, std::uint32_t message, const std::string& payload) {
    const auto* p = reinterpret_cast<const std::byte*>(payload.data());
    return {net::FrameHeader{type, 0, job, message, 0}, {p, p + payload.size()}};
}

net::Frame data_end(std::uint64_t job, const net::Digest& sha) {
    net::Frame f = frame(net::FrameType::data_end, job, 0, "");
    f.payload.assign(reinterpret_cast<const std::byte*>(sha.data()), reinterpret_cast<const std::byte*>(sha.data()) + 32);
    return f;
}

/// Plan, start, data and end of `text`, all from `c`; `ready`: after the plan, until it is taken.
void send_whole_job(const net::ConnectionPtr& c, const JobPlan& p, const std::string& text,
                    const std::function<bool()>& ready = {}) {
    c->send(frame(net::FrameType::job_plan, p.job, 0, to_json(p).dump()));
    if (ready) REQUIRE(test::wait_for(ready));
    c->send(frame(net::FrameType::job_start, p.job, 0, ""));
    c->send(frame(net::FrameType::data, p.job, 0, text));
    c->send(data_end(p.job, sha_of(text)));
}

}  // namespace

TEST_CASE("plan order: a member's hand-made job is refused, logged, its connection closed, nothing lands") {
    Target target("p2");
    Raw q1("p1");
    const std::string text = "written by p1 on its own";
    // No order at all.
    JobPlan p = plan_for("p1", "p2", "a.bin", {"p2"}, text, 11);
    q1.dial(target)->send(frame(net::FrameType::job_plan, p.job, 0, to_json(p).dump()));
    REQUIRE(test::wait_for([&] { return q1.closes() >= 1; }));
    CHECK(q1.heard("refused job 11: the plan carries no operator's order"));
    CHECK(test::wait_for([&] { return target.logged("closing the connection with 'p1': refused job 11"); }));
    // An operator's order, but given to p0: p1 cannot use it.
    p.job = 12;
    p.order = sign_order(op(), push_request("/srv/a.bin", {"p2"}), "p0", wall()).dump();
    q1.dial(target)->send(frame(net::FrameType::job_plan, p.job, 0, to_json(p).dump()));
    REQUIRE(test::wait_for([&] { return q1.closes() >= 2; }));
    CHECK(q1.heard("given to 'p0', not to 'p1'"));
    // Start and data of a job never taken, on a connection of their own.
    const auto lane = q1.dial(target);
    lane->send(frame(net::FrameType::job_start, 11, 0, ""));
    lane->send(frame(net::FrameType::data, 11, 0, text));
    lane->send(data_end(11, sha_of(text)));
    REQUIRE(test::wait_for([&] { return q1.closes() >= 3; }));
    CHECK(target.logged("ignored a start of job 11 from 'p1'"));
    // And all four back to back, as an attacker would not wait for an answer.
    p.job = 13;
    send_whole_job(q1.dial(target), p, text);
    REQUIRE(test::wait_for([&] { return q1.closes() >= 4; }));
    CHECK(target.logged("resetting the connection with 'p1': data of job 11"));
    CHECK(target.file("a.bin") == "the original");
    CHECK(target.entries() == 1);
}

TEST_CASE("plan order: under a valid order the job lands, and data from a peer the plan does not name is refused") {
    Target target("p2");
    Raw coordinator("p0"), intruder("p3");
    const std::string text = "the operator's file";
    JobPlan p = plan_for("p0", "p2", "a.bin", {"p2"}, text, 21);
    p.order = sign_order(op(), push_request("/srv/a.bin", {"p1", "p2"}), "p0", wall()).dump();
    // The order is for a.bin to {p1, p2}: reused for b.bin, or for a plan sending to p4, refused.
    {
        JobPlan b = p;
        b.job = 22;
        b.messages[0].name = "b.bin";
        const auto c = coordinator.dial(target);
        c->send(frame(net::FrameType::job_plan, b.job, 0, to_json(b).dump()));
        REQUIRE(test::wait_for([&] { return coordinator.closes() >= 1; }));
        CHECK(coordinator.heard("refused job 22: message 0 lands at 'b.bin'"));
    }
    {
        JobPlan extra = p;
        extra.job = 23;
        extra.participants.push_back({"p4", "127.0.0.1", 4});
        extra.messages[0].dests = {"p2", "p4"};
        const auto c = coordinator.dial(target);
        c->send(frame(net::FrameType::job_plan, extra.job, 0, to_json(extra).dump()));
        REQUIRE(test::wait_for([&] { return coordinator.closes() >= 2; }));
        CHECK(coordinator.heard("refused job 23: message 0 goes to 'p4'"));
    }
    const auto control = coordinator.dial(target);
    control->send(frame(net::FrameType::job_plan, p.job, 0, to_json(p).dump()));
    REQUIRE(test::wait_for([&] { return coordinator.heard("\"ready\""); }));
    // p3, a member the plan does not name, sends the job's data: refused, closed.
    const auto foreign = intruder.dial(target);
    foreign->send(frame(net::FrameType::data, p.job, 0, "not from the plan's sender"));
    REQUIRE(test::wait_for([&] { return intruder.closes() >= 1; }));
    CHECK(target.logged("closing the connection with 'p3': 'p3' sent message 0, which this node does not expect from it"));
    // p3's start of the job is refused too: only the coordinator starts it.
    const auto foreign2 = intruder.dial(target);
    foreign2->send(frame(net::FrameType::job_start, p.job, 0, ""));
    REQUIRE(test::wait_for([&] { return intruder.closes() >= 2; }));
    CHECK(target.file("a.bin") == "the original");
    // p3 cannot pace the job's sends either: ignored, logged; the coordinator's pace is taken.
    const std::string pace = R"({"paces": [{"message": 0, "to": "p2", "rate": 1000}]})";
    intruder.dial(target)->send(frame(net::FrameType::job_pace, p.job, 0, pace));
    CHECK(test::wait_for([&] { return target.logged("ignored a pace of job 21 from 'p3', which does not coordinate it"); }));
    control->send(frame(net::FrameType::job_pace, p.job, 0, pace));
    // The coordinator's own start and data land.
    control->send(frame(net::FrameType::job_start, p.job, 0, ""));
    const auto lane = coordinator.dial(target);
    lane->send(frame(net::FrameType::data, p.job, 0, text));
    lane->send(data_end(p.job, sha_of(text)));
    CHECK(test::wait_for([&] { return target.file("a.bin") == text; }));
    CHECK(test::wait_for([&] { return coordinator.heard("\"done\""); }));
}

TEST_CASE("plan order: a peer without order_scope takes plans from any member, as embedded use did") {
    test::TempDir dir;
    PeerConfig c;
    c.name = "p2";
    c.identity = test::identity("p2");
    c.dest_root = dir.path;
    Peer peer(c);
    peer.start();
    Raw q1("p1");
    const std::string text = "embedded";
    JobPlan p = plan_for("p1", "p2", "e.bin", {"p2"}, text, 31);
    const auto conn = q1.transport->connect("127.0.0.1", peer.port(), "p2");
    send_whole_job(conn, p, text, [&] { return q1.heard("\"ready\""); });
    CHECK(test::wait_for([&] { return q1.heard("\"done\""); }));
    std::ifstream in(dir.path / "e.bin");
    std::string landed;
    std::getline(in, landed);
    CHECK(landed == text);
    peer.stop();
}
