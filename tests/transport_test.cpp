// Two transports over loopback with ephemeral ports.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>

#include "hetcast/error.hpp"
#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/body.hpp"
#include "../lib/src/net/tcp/tcp_info.hpp"
#include "wait.hpp"
#include "identity.hpp"

using namespace hetcast;
using namespace hetcast::net;

namespace {

struct Endpoint {
    std::mutex mu;
    std::vector<Frame> frames;
    std::vector<std::optional<std::uint64_t>> kernel;  ///< the connection's kernel_received() at each frame
    std::vector<std::string> closes;
    std::vector<std::string> logs;
    std::atomic<int> opened{0};
    std::vector<ConnectionPtr> open;  ///< every connection opened, in order
    std::unique_ptr<Transport> t;

    explicit Endpoint(const std::string& name, std::size_t max_frame = 1 << 20,
                      std::function<std::string(const PeerIdentity&)> admit = {})
        : Endpoint(test::identity(name), max_frame, std::move(admit)) {}
    explicit Endpoint(const Identity& id, std::size_t max_frame = 1 << 20,
                      std::function<std::string(const PeerIdentity&)> admit = {}, std::string congestion = {}) {
        TransportConfig cfg;
        cfg.identity = id;
        cfg.congestion = std::move(congestion);
        cfg.max_frame = max_frame;
        cfg.timeout = std::chrono::milliseconds(2000);
        TransportCallbacks cb;
        cb.on_frame = [this](const ConnectionPtr& c, Frame&& f) {
            std::lock_guard lock(mu);
            kernel.push_back(c->kernel_received());
            frames.push_back(std::move(f));
        };
        cb.on_close = [this](const ConnectionPtr& c, const std::string& why) {
            std::lock_guard lock(mu);
            closes.push_back(c->peer() + ": " + why);
        };
        cb.on_open = [this](const ConnectionPtr& c) {
            std::lock_guard lock(mu);
            open.push_back(c);
            ++opened;
        };
        cb.admit = std::move(admit);
        cb.log = [this](LogLevel, const std::string& line) {
            std::lock_guard lock(mu);
            logs.push_back(line);
        };
        t = make_tcp_transport(cfg, cb);
        t->start();
    }
    std::size_t frame_count() {
        std::lock_guard lock(mu);
        return frames.size();
    }
    bool logged(const std::string& what) {
        std::lock_guard lock(mu);
        for (const auto& l : logs) {
            if (l.find(what) != std::string::npos) return true;
        }
        return false;
    }
};

}  // namespace

TEST_CASE("transport: authenticated peers exchange frames both ways") {
    Endpoint a("alpha"), b("beta");
    ConnectionPtr c = a.t->connect("127.0.0.1", b.t->port());
    CHECK(c->peer() == "beta");
    REQUIRE(test::wait_for([&] { return b.opened == 1; }));
    c->send(Frame{FrameHeader{FrameType::request, 0, 7, 1, 0}, {std::byte{1}, std::byte{2}}});
    REQUIRE(test::wait_for([&] { return b.frame_count() == 1; }));
    {
        std::lock_guard lock(b.mu);
        CHECK(b.frames[0].header.type == FrameType::request);
        CHECK(b.frames[0].header.job == 7);
        CHECK(b.frames[0].payload.size() == 2);
    }
}

TEST_CASE("transport: the kernel's count of bytes received on a connection covers every frame read, and grows with them") {
    Endpoint a("alpha"), b("beta");
    ConnectionPtr c = a.t->connect("127.0.0.1", b.t->port());
    REQUIRE(test::wait_for([&] { return b.opened == 1; }));
    constexpr int frames = 40;
    constexpr std::size_t size = 100'000;
    for (int k = 0; k < frames; ++k) {
        c->send(Frame{FrameHeader{FrameType::request, 0, 7, 1, 0}, std::vector<std::byte>(size, std::byte{1})});
    }
    REQUIRE(test::wait_for([&] { return b.frame_count() == frames; }));
    std::lock_guard lock(b.mu);
    std::uint64_t read = 0, before = 0;
    for (const auto& k : b.kernel) {
        REQUIRE(k.has_value());
        read += size;
        CHECK(*k >= read);  // TLS records and frame headers on top of the payloads
        CHECK(*k >= before);
        before = *k;
    }
    // The overhead is records and headers, not another copy of the data.
    CHECK(before < read + read / 20 + 10'000);
}

namespace {

std::string first_line_of(const std::string& file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    return line;
}

}  // namespace

TEST_CASE("transport: every connection, made or accepted, runs the configured congestion control, and one the kernel lacks stops start()") {
    const std::string system = first_line_of("/proc/sys/net/ipv4/tcp_congestion_control");
    std::istringstream allowed(first_line_of("/proc/sys/net/ipv4/tcp_allowed_congestion_control"));
    std::string other, name;
    while (allowed >> name) {
        if (name != system) other = name;
    }
    if (system.empty() || other.empty()) {
        MESSAGE("skipped: this kernel allows no congestion control besides its default '" << system << "'");
        return;
    }
    Endpoint a(test::identity("alpha"), 1 << 20, {}, other), b(test::identity("beta"), 1 << 20, {}, other);
    Endpoint plain("plain");
    ConnectionPtr made = a.t->connect("127.0.0.1", b.t->port());
    REQUIRE(test::wait_for([&] { return b.opened == 1; }));
    CHECK(made->congestion() == other);
    {
        std::lock_guard lock(b.mu);
        CHECK(b.open.at(0)->congestion() == other);
    }
    // Unconfigured, a socket keeps the system's: what is read is the socket's, not the setting.
    ConnectionPtr to_plain = a.t->connect("127.0.0.1", plain.t->port());
    REQUIRE(test::wait_for([&] { return plain.opened == 1; }));
    CHECK(to_plain->congestion() == other);
    {
        std::lock_guard lock(plain.mu);
        CHECK(plain.open.at(0)->congestion() == system);
    }
    TransportConfig bad;
    bad.identity = test::identity("gamma");
    bad.congestion = "nosuchcc0";
    auto t = make_tcp_transport(bad, TransportCallbacks{});
    CHECK_THROWS_WITH_AS(t->start(), doctest::Contains("TCP congestion control 'nosuchcc0': this kernel has no such"), Error);
}

TEST_CASE("transport: a connection held to a pace sends no faster than it (a lower bound on the time, not a speed test)") {
    Endpoint a("alpha"), b("beta");
    ConnectionPtr c = a.t->connect("127.0.0.1", b.t->port());
    REQUIRE(test::wait_for([&] { return b.opened == 1; }));
    constexpr double pace = 2e6;
    constexpr int frames = 30;
    constexpr std::size_t size = 100'000;  // 3 MB: at least 1.5 s at the pace, after a first burst
    REQUIRE(c->set_max_pacing(pace));
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < frames; ++k) {
        c->send(Frame{FrameHeader{FrameType::request, 0, 7, 1, 0}, std::vector<std::byte>(size, std::byte{1})});
    }
    REQUIRE(test::wait_for([&] { return b.frame_count() == frames; }, std::chrono::seconds(20)));
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(took >= 0.8 * frames * size / pace);
    CHECK(c->set_max_pacing(0));  // and lifted again
}

TEST_CASE("transport: an identity from another CA is refused on both sides and the server keeps serving") {
    Endpoint server("server"), friendly("friend");
    Endpoint intruder(test::other_ca().issue("intruder", Role::member));
    CHECK_THROWS_WITH_AS((void)intruder.t->connect("127.0.0.1", server.t->port()),
                         doctest::Contains("TLS handshake failed"), Error);
    CHECK(test::wait_for([&] { return server.logged("refused connection from a peer: TLS handshake failed"); }));
    CHECK(server.opened == 0);
    // The other way round: the intruder as server is not trusted by a member either.
    CHECK_THROWS_WITH_AS((void)friendly.t->connect("127.0.0.1", intruder.t->port()),
                         doctest::Contains("not issued by this cluster's CA"), Error);
    CHECK(intruder.opened == 0);
    ConnectionPtr ok = friendly.t->connect("127.0.0.1", server.t->port());
    CHECK(ok->peer() == "server");
    CHECK(ok->identity().role == Role::member);
}

TEST_CASE("transport: a client names whom it expects, another certificate there is refused") {
    Endpoint server("server"), client("client");
    CHECK_THROWS_WITH_AS((void)client.t->connect("127.0.0.1", server.t->port(), "n7"),
                         doctest::Contains("expected 'n7' but the certificate there names 'server'"), Error);
    CHECK(client.t->connect("127.0.0.1", server.t->port(), "server")->peer() == "server");
}

TEST_CASE("transport: the server says why it does not admit a client, close_if ends open connections") {
    const auto no_mallory = [](const PeerIdentity& who) {
        return who.name == "mallory" ? std::string("'mallory' was revoked") : std::string();
    };
    Endpoint server("server", 1 << 20, no_mallory), mallory("mallory"), op(test::identity("ops", Role::operator_));
    CHECK_THROWS_WITH_AS((void)mallory.t->connect("127.0.0.1", server.t->port()),
                         doctest::Contains("refused: 'mallory' was revoked"), Error);
    CHECK(server.opened == 0);
    ConnectionPtr c = op.t->connect("127.0.0.1", server.t->port());
    REQUIRE(test::wait_for([&] { return server.opened == 1; }));
    server.t->close_if([](const PeerIdentity& who) { return who.role == Role::operator_; }, "revoked");
    CHECK(test::wait_for([&] {
        std::lock_guard lock(op.mu);
        return !op.closes.empty() && op.closes[0].find("revoked") != std::string::npos;
    }));
}

namespace {

/// A TCP relay on the path between a client and a server, like an attacker on the
/// network: it records what crosses, and can write bytes of its own into the stream.
class Proxy {
public:
    explicit Proxy(std::uint16_t upstream) : upstream_(upstream) {
        listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        socklen_t len = sizeof a;
        ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len);
        port = ntohs(a.sin_port);
        ::listen(listen_, 1);
        thread_ = std::thread([this] { run(); });
    }
    ~Proxy() {
        stop_ = true;
        thread_.join();
        ::close(listen_);
    }
    void inject(std::vector<std::byte> bytes) {
        std::lock_guard lock(mu_);
        pending_ = std::move(bytes);
    }
    std::string seen() {
        std::lock_guard lock(mu_);
        return seen_;
    }
    std::uint16_t port = 0;

private:
    void run() {
        pollfd l{listen_, POLLIN, 0};
        while (!stop_ && ::poll(&l, 1, 50) == 0) {
        }
        if (stop_) return;
        const int in = ::accept(listen_, nullptr, nullptr);
        const int out = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(upstream_);
        if (::connect(out, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return;
        std::array<char, 65536> buf;
        while (!stop_) {
            {
                std::lock_guard lock(mu_);
                if (!pending_.empty()) {
                    (void)::write(out, pending_.data(), pending_.size());
                    pending_.clear();
                }
            }
            pollfd p[2] = {{in, POLLIN, 0}, {out, POLLIN, 0}};
            if (::poll(p, 2, 20) <= 0) continue;
            for (int k = 0; k < 2; ++k) {
                if (!(p[k].revents & (POLLIN | POLLHUP))) continue;
                const ssize_t n = ::read(p[k].fd, buf.data(), buf.size());
                if (n <= 0) {
                    ::close(in);
                    ::close(out);
                    return;
                }
                (void)::write(k == 0 ? out : in, buf.data(), static_cast<std::size_t>(n));
                std::lock_guard lock(mu_);
                seen_.append(buf.data(), static_cast<std::size_t>(n));
            }
        }
        ::close(in);
        ::close(out);
    }
    std::uint16_t upstream_;
    int listen_ = -1;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::mutex mu_;
    std::vector<std::byte> pending_;
    std::string seen_;
};

}  // namespace

TEST_CASE("transport: a frame injected on the path after the handshake is refused, and nothing crosses in clear") {
    Endpoint server("server"), client("client");
    Proxy proxy(server.t->port());
    ConnectionPtr c = client.t->connect("127.0.0.1", proxy.port);
    REQUIRE(test::wait_for([&] { return server.opened == 1; }));
    const std::string secret_text = "the contents of /etc/shadow";
    c->send(Frame{FrameHeader{FrameType::request, 0, 0, 1, 0},
                  {reinterpret_cast<const std::byte*>(secret_text.data()),
                   reinterpret_cast<const std::byte*>(secret_text.data()) + secret_text.size()}});
    REQUIRE(test::wait_for([&] { return server.frame_count() == 1; }));
    CHECK(proxy.seen().find(secret_text) == std::string::npos);
    CHECK(proxy.seen().find("server") == std::string::npos);  // TLS 1.3 encrypts the certificates too

    // What worked against the old HMAC handshake: a well-formed push request written into
    // the client's stream. Now it is not a TLS record of this session.
    proxy.inject(encode(FrameType::request, 0, 2, R"({"cmd":"push","files":["/etc/shadow"],"to":["n1"]})"));
    CHECK(test::wait_for([&] {
        std::lock_guard lock(server.mu);
        return !server.closes.empty();
    }));
    CHECK(server.frame_count() == 1);
    {
        std::lock_guard lock(server.mu);
        INFO(server.closes[0]);
        CHECK(server.closes[0].find("client") == 0);
    }
}

TEST_CASE("transport: unreachable peers fail with the address and the reason") {
    Endpoint a("a");
    std::uint16_t closed_port;
    {
        Endpoint tmp("tmp");
        closed_port = tmp.t->port();
    }
    const std::string expected = "cannot reach 127.0.0.1:" + std::to_string(closed_port);
    CHECK_THROWS_WITH_AS((void)a.t->connect("127.0.0.1", closed_port), doctest::Contains(expected.c_str()), Error);
}

TEST_CASE("transport: an oversized frame closes that connection only") {
    Endpoint server("server", 1024), client("client");
    ConnectionPtr c = client.t->connect("127.0.0.1", server.t->port());
    c->send(Frame{FrameHeader{FrameType::request, 0, 0, 0, 0}, std::vector<std::byte>(4096)});
    CHECK(test::wait_for([&] {
        std::lock_guard lock(server.mu);
        return !server.closes.empty() && server.closes[0].find("exceeds the limit") != std::string::npos;
    }));
    CHECK(server.frame_count() == 0);
    CHECK(test::wait_for([&] { return server.logged("closing the connection with 'client'"); }));
    ConnectionPtr again = client.t->connect("127.0.0.1", server.t->port());
    again->send(Frame{FrameHeader{FrameType::request, 0, 0, 0, 0}, std::vector<std::byte>(10)});
    CHECK(test::wait_for([&] { return server.frame_count() == 1; }));
}

TEST_CASE("transport: a streamed body arrives as data frames and a checksum, paced when shaped") {
    Endpoint a("a"), b("b", 1 << 20);
    auto bytes = std::make_shared<std::vector<std::byte>>(300000);
    std::mt19937 rng(1);
    for (auto& x : *bytes) x = static_cast<std::byte>(rng());
    auto body = std::make_shared<BufferBody>(bytes);
    ConnectionPtr c = a.t->connect("127.0.0.1", b.t->port());
    // 300 kB at 3 MB/s takes 0.1 s on the emulated wire, plus 50 ms latency.
    c->set_shape(LinkShape{0.05, 3e6, {}});
    std::atomic<bool> done{false};
    const auto t0 = std::chrono::steady_clock::now();
    c->send_stream(9, 3, body, 65536, [&](std::error_code ec) {
        CHECK(!ec);
        done = true;
    });
    REQUIRE(test::wait_for([&] {
        std::lock_guard lock(b.mu);
        return !b.frames.empty() && b.frames.back().header.type == FrameType::data_end;
    }));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(elapsed >= 0.15 * 0.99);  // pacing can only delay: never faster than the profile
    CHECK(test::wait_for([&] { return done.load(); }));
    std::lock_guard lock(b.mu);
    std::vector<std::byte> got;
    for (const auto& f : b.frames) {
        CHECK(f.header.job == 9);
        CHECK(f.header.message == 3);
        if (f.header.type == FrameType::data) {
            CHECK(f.payload.size() <= 65536);
            got.insert(got.end(), f.payload.begin(), f.payload.end());
        }
    }
    CHECK(got == *bytes);
    CHECK(same_digest(b.frames.back().payload, body->sha256()));
}

TEST_CASE("transport: a file body goes out in chunks, unpaced or paced, and a short file fails") {
    const auto dir = std::filesystem::temp_directory_path() / ("hetcast-transport-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = dir / "body.bin";
    std::vector<std::byte> bytes(3'000'001);
    std::mt19937 rng(2);
    for (auto& x : bytes) x = static_cast<std::byte>(rng());
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
    const auto body = std::make_shared<FileBody>(path);
    for (const bool paced : {false, true}) {
        CAPTURE(paced);
        Endpoint a("a"), b("b", 1 << 20);
        ConnectionPtr c = a.t->connect("127.0.0.1", b.t->port());
        if (paced) c->set_shape(LinkShape{0, 1e9, {}});
        std::atomic<int> result{-1};
        c->send_stream(1, 0, body, 100'000, [&](std::error_code ec) { result = ec ? 1 : 0; });
        REQUIRE(test::wait_for([&] { return result >= 0; }));
        CHECK(result == 0);
        REQUIRE(test::wait_for([&] {
            std::lock_guard lock(b.mu);
            return !b.frames.empty() && b.frames.back().header.type == FrameType::data_end;
        }));
        std::lock_guard lock(b.mu);
        std::vector<std::byte> got;
        for (const auto& f : b.frames) {
            if (f.header.type != FrameType::data) continue;
            CHECK(f.payload.size() <= 100'000);
            got.insert(got.end(), f.payload.begin(), f.payload.end());
        }
        CHECK(got == bytes);
        CHECK(same_digest(b.frames.back().payload, body->sha256()));
    }
    // The file shrinks after it was described: the send fails instead of sending less.
    std::filesystem::resize_file(path, 1000);
    Endpoint a("a"), b("b", 1 << 20);
    ConnectionPtr c = a.t->connect("127.0.0.1", b.t->port());
    std::atomic<int> result{-1};
    c->send_stream(1, 0, body, 100'000, [&](std::error_code ec) { result = ec ? 1 : 0; });
    REQUIRE(test::wait_for([&] { return result >= 0; }));
    CHECK(result == 1);
    std::filesystem::remove_all(dir);
}

TEST_CASE("transport: before TLS a peer's frames are not read, the server closes at once") {
    Endpoint server("server", 16 << 20);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(server.t->port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    // A plaintext request frame, as a client of the old protocol (or an attacker) would send.
    const auto wire = encode(FrameType::request, 0, 1, R"({"cmd":"status"})");
    CHECK(::send(fd, wire.data(), wire.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(wire.size()));
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) {
    }
    CHECK(n == 0);
    ::close(fd);
    CHECK(test::wait_for([&] { return server.logged("TLS handshake failed"); }));
    CHECK(server.opened == 0);
    CHECK(server.frame_count() == 0);
}

namespace {
// A shared rate that keeps every booking, to check how connections use it.
class RecordingRate final : public SharedRate {
public:
    explicit RecordingRate(double rate) : rate_(rate) {}
    Clock::time_point book(Clock::time_point earliest, std::size_t bytes) override {
        std::lock_guard lock(mu_);
        const auto from = std::max(earliest, free_);
        free_ = from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(bytes / rate_));
        bookings.push_back({from, free_, bytes});
        return free_;
    }
    struct Booking {
        Clock::time_point start, end;
        std::size_t bytes;
    };
    std::vector<Booking> bookings;

private:
    double rate_;
    mutable std::mutex mu_;
    Clock::time_point free_{};
};
}  // namespace

TEST_CASE("transport: connections that share a rate book it one piece after another, every byte once") {
    // Two connections (to two receivers) share one emulated NIC of 20 MB/s: its bookings
    // never overlap, together they carry both bodies, and each connection waits for its
    // pieces' bookings.
    Endpoint a("a"), b("b", 1 << 20), c("c", 1 << 20);
    auto nic = std::make_shared<RecordingRate>(20e6);
    auto bytes = std::make_shared<std::vector<std::byte>>(400'000, std::byte{7});
    auto body = std::make_shared<BufferBody>(bytes);
    std::atomic<int> done{0};
    const auto t0 = std::chrono::steady_clock::now();
    for (Endpoint* to : {&b, &c}) {
        ConnectionPtr conn = a.t->connect("127.0.0.1", to->t->port());
        conn->set_shape(LinkShape{0, 0, {nic}});
        conn->send_stream(1, 0, body, 50'000, [&](std::error_code ec) {
            CHECK(!ec);
            ++done;
        });
    }
    REQUIRE(test::wait_for([&] { return done == 2; }));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::size_t total = 0;
    std::vector<RecordingRate::Booking> books = nic->bookings;
    std::sort(books.begin(), books.end(), [](const auto& x, const auto& y) { return x.end < y.end; });
    for (std::size_t i = 0; i < books.size(); ++i) {
        total += books[i].bytes;
        if (i > 0) CHECK(books[i].start >= books[i - 1].end - std::chrono::microseconds(1));
    }
    // Frame headers are paced too: at least the bodies' bytes went through the NIC.
    CHECK(total >= 2 * bytes->size());
    CHECK(elapsed >= 2 * 400'000 / 20e6 * 0.99);
}

TEST_CASE("transport: a pace is payload, the kernel's rate counts the segments' headers too") {
    using net::tcp_detail::pacing_rate_for;
    CHECK(pacing_rate_for(1e6, 1448) == doctest::Approx(1e6 * 1500 / 1448));
    CHECK(pacing_rate_for(1e6, 0) == pacing_rate_for(1e6, 1448));
    // Loopback's 64 KiB segments cost next to nothing.
    CHECK(pacing_rate_for(1e6, 65483) < 1e6 * 1.001);
    CHECK(pacing_rate_for(1e6, 65483) > 1e6);
    // None stays none; a pace too small to move a segment is raised, never 0.
    CHECK(pacing_rate_for(0, 1448) == 0);
    CHECK(pacing_rate_for(0.4, 1448) >= net::tcp_detail::min_pace);
}
