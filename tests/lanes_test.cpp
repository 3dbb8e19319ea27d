// Control and data lanes (docs/protocol.md "Lanes"), with peers in one process over
// loopback: p0 reaches p1 through a proxy that counts the bytes on the wire. A cancelled or
// failed push stops its bytes at once and the next push does not wait behind them; a push
// throttled far below chunk / stall_timeout neither stalls nor delays requests and pings.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/peer.hpp"
#include "identity.hpp"
#include "tcp_proxy.hpp"
#include "temp_dir.hpp"
#include "wait.hpp"

using namespace hetcast;
using namespace std::chrono_literals;
using test::TempDir;

namespace {

struct Pair {
    TempDir dir;
    std::vector<std::unique_ptr<Peer>> peers;
    std::unique_ptr<test::TcpProxy> proxy;  ///< p0's way to p1
    Network net;

    explicit Pair(std::size_t chunk, std::chrono::milliseconds stall,
                  const std::function<void(PeerConfig&)>& tweak = {})
        : net(Network::parametric({"p0", "p1"}, Matrix(2, std::vector<double>(2, 1e-4)),
                                  Matrix(2, std::vector<double>(2, 1e9)), std::vector<Overhead>(2),
                                  std::vector<Overhead>(2))) {
        std::vector<Member> members;
        for (const std::string name : {"p0", "p1"}) {
            PeerConfig c;
            c.name = name;
            c.identity = test::identity(name);
            c.dest_root = dir.path / name;
            c.spool = dir.path / (name + "-spool");
            c.chunk = chunk;
            c.stall_timeout = stall;
            c.connect_timeout = 3000ms;
            if (tweak) tweak(c);
            peers.push_back(std::make_unique<Peer>(c));
            peers.back()->start();
            members.push_back({name, "127.0.0.1", peers.back()->port()});
        }
        proxy = std::make_unique<test::TcpProxy>(members[1].port);
        peers[1]->set_members(members);
        members[1].port = proxy->port();
        peers[0]->set_members(members);
    }
    ~Pair() {
        for (auto& p : peers) p->stop();
        proxy->stop();
    }

    /// p0 pushes `body` to p1 as `name`.
    JobSpec spec(std::shared_ptr<const net::MessageBody> body, const std::string& name, std::uint64_t bwlimit,
                 Relay relay = Relay::store_and_forward) const {
        Schedule s("flat", 2, {Message{0, static_cast<double>(body->size()), {1}}});
        s.relay = relay;
        if (relay == Relay::cut_through) s.piece = 256 << 10;
        s.add_transfer(0, 0, 1);
        JobSpec spec;
        spec.network = &net;
        spec.schedule = std::move(s);
        spec.inputs.emplace_back(std::move(body), name);
        spec.bwlimit = bwlimit;
        spec.timeout = 60s;
        return spec;
    }

    /// Whether the bytes p0 sends p1 stop growing within `within` (quiet for 200 ms), and
    /// then stay below `slack` more for a second.
    [[nodiscard]] bool bytes_stop(std::chrono::milliseconds within, std::uint64_t slack) const {
        auto last = proxy->forward();
        auto changed = std::chrono::steady_clock::now();
        const bool quiet = test::wait_for(
            [&] {
                const auto now = proxy->forward();
                if (now != last) {
                    last = now;
                    changed = std::chrono::steady_clock::now();
                }
                return std::chrono::steady_clock::now() - changed > 200ms;
            },
            within);
        if (!quiet) return false;
        const auto base = proxy->forward();
        return !test::wait_for([&] { return proxy->forward() > base + slack; }, 1000ms);
    }
};

/// A second push right after: it must start moving at once, not behind what is left of the first.
void next_push_moves_at_once(Pair& c) {
    std::atomic<std::uint64_t> delivered{0};
    JobSpec next = c.spec(make_generated_body(std::uint64_t{8} << 20, 2), "next.bin", 0);
    next.progress = [&](const JobProgress& p) { delivered = p.delivered; };
    JobReport r;
    std::thread runner([&] { r = c.peers[0]->run(std::move(next)); });
    CHECK_MESSAGE(test::wait_for([&] { return delivered > 0; }, 3000ms), "the next push did not move within 3 s");
    runner.join();
    CHECK(r.ok());
}

}  // namespace

TEST_CASE("lanes: a cancelled push stops its bytes on the wire within a second and the next push does not wait") {
    Pair c(256 << 10, 5000ms);
    const std::uint64_t rate = 4 << 20;  // 64 MiB would take 16 s
    JobSpec spec = c.spec(make_generated_body(std::uint64_t{64} << 20, 1), "big.bin", rate);
    std::atomic<std::uint64_t> id{0};
    spec.started = [&](std::uint64_t j) { id = j; };
    JobReport r;
    std::thread runner([&] { r = c.peers[0]->run(std::move(spec)); });
    REQUIRE(test::wait_for([&] { return id != 0 && c.proxy->forward() > (2u << 20); }));
    CHECK(c.peers[0]->cancel(id, "by the test"));
    runner.join();
    CHECK_FALSE(r.ok());
    // Its lane reset may reach p1 before the cancel does: the report still says why.
    for (const auto& o : r.outcomes) {
        if (!o.ok) CHECK_MESSAGE(o.error.find("cancelled: by the test") != std::string::npos, o.error);
    }
    const auto at_cancel = c.proxy->forward();
    CHECK_MESSAGE(c.bytes_stop(1000ms, 64 << 10), "bytes after the cancel: " << c.proxy->forward() - at_cancel);
    MESSAGE("bytes on the wire from the cancel to 1 s after they stopped: " << c.proxy->forward() - at_cancel);
    CHECK(test::wait_for([&] { return c.peers[1]->jobs().empty(); }));
    next_push_moves_at_once(c);
}

TEST_CASE("lanes: a receiver whose copy fails resets its lane: the sender's bytes stop and the next push does not wait") {
    // Piece 2 arrives damaged every time: p1 fails its copy after a few tries and its job ends.
    std::atomic<bool> damage{true};
    Pair c(256 << 10, 5000ms, [&](PeerConfig& p) {
        if (p.name != "p1") return;
        p.tamper = [&](std::uint64_t, MessageId, std::uint64_t offset, std::span<std::byte> data) {
            const std::uint64_t at = std::uint64_t{2} * (256 << 10);
            if (damage && offset <= at && at < offset + data.size()) data[at - offset] ^= std::byte{1};
        };
    });
    const std::uint64_t rate = 4 << 20;
    JobSpec spec = c.spec(make_generated_body(std::uint64_t{64} << 20, 3), "big.bin", rate, Relay::cut_through);
    std::atomic<bool> failed{false};
    spec.progress = [&](const JobProgress& p) {
        for (const auto& m : p.members) {
            if (m.name == "p1" && m.state == "failed") failed = true;
        }
    };
    JobReport r;
    std::thread runner([&] { r = c.peers[0]->run(std::move(spec)); });
    REQUIRE(test::wait_for([&] { return failed.load(); }, 10000ms));
    const auto at_failure = c.proxy->forward();
    CHECK_MESSAGE(c.bytes_stop(1000ms, 64 << 10), "bytes after the failure: " << c.proxy->forward() - at_failure);
    MESSAGE("bytes on the wire from the failure to 1 s after they stopped: " << c.proxy->forward() - at_failure);
    runner.join();
    CHECK_FALSE(r.ok());
    damage = false;
    next_push_moves_at_once(c);
}

TEST_CASE("lanes: a push throttled far below chunk / stall_timeout completes while requests and pings answer at once") {
    // 1 MiB chunks at 256 KiB/s are one frame every 4 s, twice the stall timeout.
    Pair c(1 << 20, 2000ms);
    c.peers[1]->on_request([](const net::PeerIdentity&, const nlohmann::json&, const Peer::Responder& respond) {
        respond({{"ok", true}});
    });
    const std::uint64_t size = 1536 << 10;  // 6 s at the limit
    JobSpec spec = c.spec(make_generated_body(size, 4), "slow.bin", 256 << 10);
    std::atomic<std::uint64_t> delivered{0};
    spec.progress = [&](const JobProgress& p) { delivered = p.delivered; };
    std::atomic<bool> over{false};
    JobReport r;
    std::thread runner([&] {
        r = c.peers[0]->run(std::move(spec));
        over = true;
    });
    REQUIRE(test::wait_for([&] { return c.proxy->forward() > (256u << 10); }));
    // A frame held back by the limit would keep a request waiting up to 4 s.
    int answered = 0, asked = 0;
    for (int i = 0; i < 5 && !over; ++i) {
        asked += 2;
        try {
            const auto a = c.peers[0]->call("p1", {{"cmd", "anything"}}, 500ms);
            if (a.value("ok", false)) ++answered;
            const auto pings = c.peers[0]->ping("p1", {64}, 1);
            if (pings.size() == 1 && pings[0].received - pings[0].sent < 0.5) ++answered;
        } catch (const std::exception& e) {
            FAIL_CHECK("p1 did not answer during the throttled push: " << std::string(e.what()));
        }
        (void)test::wait_for([&] { return over.load(); }, 600ms);  // the asks spread over the push
    }
    CHECK(asked >= 2);
    CHECK(answered == asked);
    runner.join();
    CHECK(r.ok());
    for (const auto& o : r.outcomes) CHECK_MESSAGE(o.ok, o.error);
    CHECK(r.failed_members.empty());
}
