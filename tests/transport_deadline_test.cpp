// Transport deadlines: a peer that stops reading costs only its own connection, a stream
// waiting for its body is not a stall, and running out of descriptors does not make the
// accept loop spin.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/body.hpp"
#include "wait.hpp"
#include "identity.hpp"

using namespace hetcast;
using namespace hetcast::net;
using namespace std::chrono_literals;

namespace {

struct Side {
    std::mutex mu;
    std::vector<Frame> frames;
    std::vector<std::string> closes;
    std::vector<std::string> logs;
    std::atomic<bool> block{false};  ///< on_frame blocks the I/O thread while set: nothing is read
    std::unique_ptr<Transport> t;

    explicit Side(const std::string& name, std::chrono::milliseconds stall = 10s,
                  std::chrono::milliseconds timeout = 2s) {
        TransportConfig cfg;
        cfg.identity = test::identity(name);
        cfg.timeout = timeout;
        cfg.stall = stall;
        TransportCallbacks cb;
        cb.on_frame = [this](const ConnectionPtr&, Frame&& f) {
            {
                std::lock_guard lock(mu);
                frames.push_back(std::move(f));
            }
            // Bounded, so a failing test cannot hang the run.
            const auto end = std::chrono::steady_clock::now() + 30s;
            while (block && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(5ms);
        };
        cb.on_close = [this](const ConnectionPtr&, const std::string& why) {
            std::lock_guard lock(mu);
            closes.push_back(why);
        };
        cb.log = [this](LogLevel, const std::string& line) {
            std::lock_guard lock(mu);
            logs.push_back(line);
        };
        t = make_tcp_transport(cfg, cb);
        t->start();
    }
    ~Side() {
        block = false;
        t->stop();
    }
    std::vector<std::string> closed() {
        std::lock_guard lock(mu);
        return closes;
    }
    std::size_t count_logs(const std::string& what) {
        std::lock_guard lock(mu);
        return static_cast<std::size_t>(
            std::count_if(logs.begin(), logs.end(), [&](const std::string& l) { return l.find(what) != std::string::npos; }));
    }
    std::size_t frame_count() {
        std::lock_guard lock(mu);
        return frames.size();
    }
};

/// A body that is not ready until released (a relay waiting for its upstream).
class LateBody final : public MessageBody {
public:
    explicit LateBody(std::size_t size) : bytes_(size, std::byte{7}) {}
    std::uint64_t size() const override { return bytes_.size(); }
    Digest sha256() const override {
        Sha256 h;
        h.update(bytes_);
        return h.finish();
    }
    std::unique_ptr<Reader> open() const override { return std::make_unique<R>(*this); }
    void release() {
        std::function<void()> wake;
        {
            std::lock_guard lock(mu_);
            ready_ = true;
            wake = std::move(wake_);
        }
        if (wake) wake();
    }

private:
    struct R final : Reader {
        explicit R(const LateBody& b) : body(b) {}
        std::size_t read(std::span<std::byte> out) override {
            const std::size_t n = std::min(out.size(), body.bytes_.size() - pos);
            std::memcpy(out.data(), body.bytes_.data() + pos, n);
            pos += n;
            return n;
        }
        bool ready(std::function<void()> wake) override {
            std::lock_guard lock(body.mu_);
            if (body.ready_) return true;
            body.wake_ = std::move(wake);
            return false;
        }
        const LateBody& body;
        std::size_t pos = 0;
    };
    std::vector<std::byte> bytes_;
    mutable std::mutex mu_;
    mutable bool ready_ = false;
    mutable std::function<void()> wake_;
};

int count_open_fds_upper_bound() {
    int top = 2;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
        top = std::max(top, std::atoi(e.path().filename().c_str()));
    }
    return top;
}

}  // namespace

TEST_CASE("transport deadline: a peer that stops reading is closed after the stall and its sends fail") {
    Side sender("sender", 300ms), frozen("frozen"), other("other");
    frozen.block = true;
    ConnectionPtr c = sender.t->connect("127.0.0.1", frozen.t->port());
    // Far more than the socket buffers of both ends hold.
    constexpr int frames = 64;
    std::atomic<int> done{0}, failed{0};
    std::atomic<bool> last_failed{false};
    for (int i = 0; i < frames; ++i) {
        c->send(Frame{FrameHeader{FrameType::request, 0, 1, 0, 0}, std::vector<std::byte>(1 << 20)},
                [&, i](std::error_code ec) {
                    if (ec) ++failed;
                    if (i == frames - 1) last_failed = static_cast<bool>(ec);
                    ++done;
                });
    }
    REQUIRE(test::wait_for([&] { return !sender.closed().empty(); }, 10s));
    const std::string why = sender.closed().front();
    CHECK_MESSAGE(why.find("no progress sending for 300 ms") != std::string::npos, why);
    REQUIRE(test::wait_for([&] { return done == frames; }, 10s));
    CHECK(failed > 0);
    CHECK(last_failed);
    // The sender is fine otherwise.
    ConnectionPtr d = sender.t->connect("127.0.0.1", other.t->port());
    std::atomic<int> ok{-1};
    d->send(Frame{FrameHeader{FrameType::request, 0, 2, 0, 0}, std::vector<std::byte>(10)},
            [&](std::error_code ec) { ok = ec ? 0 : 1; });
    CHECK(test::wait_for([&] { return other.frame_count() == 1; }, 10s));
    CHECK(test::wait_for([&] { return ok == 1; }, 10s));
    frozen.block = false;
}

TEST_CASE("transport deadline: a stream waiting for its body is not a stall") {
    Side sender("sender", 200ms), receiver("receiver");
    ConnectionPtr c = sender.t->connect("127.0.0.1", receiver.t->port());
    auto body = std::make_shared<LateBody>(100000);
    std::atomic<int> result{-1};
    c->send_stream(3, 1, body, 16384, [&](std::error_code ec) { result = ec ? 1 : 0; });
    std::this_thread::sleep_for(1000ms);  // five stalls' worth of waiting for the body
    CHECK(sender.closed().empty());
    CHECK(result == -1);
    body->release();
    REQUIRE(test::wait_for([&] { return result >= 0; }, 10s));
    CHECK(result == 0);
    CHECK(test::wait_for([&] {
        std::lock_guard lock(receiver.mu);
        return !receiver.frames.empty() && receiver.frames.back().header.type == FrameType::data_end;
    }));
    CHECK(sender.closed().empty());
}

// A lane carries a job's messages to one peer in order; a relayed one that waits for bytes
// its relay has not received must not hold the others (docs/protocol.md, "Lanes").
TEST_CASE("transport: streams go in order, and one waiting for its body lets those behind it go meanwhile") {
    Side sender("sender", 10s), receiver("receiver");
    ConnectionPtr c = sender.t->connect("127.0.0.1", receiver.t->port());
    auto late = std::make_shared<LateBody>(100000);
    const auto ready_body = [](std::size_t n, std::byte b) {
        return std::make_shared<BufferBody>(std::make_shared<const std::vector<std::byte>>(n, b));
    };
    std::atomic<int> first{-1}, second{-1}, third{-1};
    c->send_stream(3, 1, late, 16384, [&](std::error_code ec) { first = ec ? 1 : 0; });
    c->send_stream(3, 2, ready_body(200000, std::byte{2}), 16384, [&](std::error_code ec) { second = ec ? 1 : 0; });
    c->send_stream(3, 3, ready_body(200000, std::byte{3}), 16384, [&](std::error_code ec) { third = ec ? 1 : 0; });
    REQUIRE(test::wait_for([&] { return second >= 0 && third >= 0; }, 10s));
    CHECK(first == -1);
    CHECK(second == 0);
    CHECK(third == 0);
    late->release();
    REQUIRE(test::wait_for([&] { return first >= 0; }, 10s));
    CHECK(first == 0);
    // 'first' reports message 1 handed to the socket, not received: wait for its end to arrive.
    REQUIRE(test::wait_for([&] {
        std::lock_guard lock(receiver.mu);
        return std::any_of(receiver.frames.begin(), receiver.frames.end(), [](const Frame& f) {
            return f.header.type == FrameType::data_end && f.header.message == 1;
        });
    }, 10s));
    std::lock_guard lock(receiver.mu);
    // Messages 2 and 3 were ready: 2 went whole before 3 began. Message 1 came last, whole.
    std::vector<std::uint32_t> order;
    std::map<std::uint32_t, std::size_t> bytes;
    for (const auto& f : receiver.frames) {
        if (f.header.type != FrameType::data && f.header.type != FrameType::data_end) continue;
        if (order.empty() || order.back() != f.header.message) order.push_back(f.header.message);
        if (f.header.type == FrameType::data) bytes[f.header.message] += f.payload.size();
    }
    CHECK(order == std::vector<std::uint32_t>{2, 3, 1});
    CHECK(bytes[1] == 100000);
    CHECK(bytes[2] == 200000);
    CHECK(bytes[3] == 200000);
    CHECK(sender.closed().empty());
}

TEST_CASE("transport deadline: out of descriptors the accept loop backs off and logs little and accepts again") {
    // A long handshake timeout: the pending connection must not be dropped meanwhile.
    Side server("server", 10s, 60s);
    const std::uint16_t port = server.t->port();

    rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &old) == 0);
    std::vector<int> fillers;
    int client = -1;
    struct Restore {
        rlimit& old;
        std::vector<int>& fillers;
        ~Restore() {
            for (const int fd : fillers) ::close(fd);
            fillers.clear();
            ::setrlimit(RLIMIT_NOFILE, &old);
        }
    } restore{old, fillers};

    rlimit tight = old;
    tight.rlim_cur = static_cast<rlim_t>(count_open_fds_upper_bound() + 16);
    REQUIRE(tight.rlim_cur <= old.rlim_cur);
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &tight) == 0);
    // The client's socket first, then every descriptor taken: its connection waits in the
    // backlog and the server cannot accept it. (Freeing one for the client after the fill
    // raced with the server's threads, which could take it first.)
    client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(client >= 0);
    while (true) {
        const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) break;
        fillers.push_back(fd);
    }
    REQUIRE(errno == EMFILE);
    REQUIRE(!fillers.empty());
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);

    REQUIRE(test::wait_for([&] { return server.count_logs("accept failed") > 0; }, 10s));
    std::this_thread::sleep_for(1200ms);
    const std::size_t logged = server.count_logs("accept failed");
    CHECK(logged >= 1);
    CHECK(logged < 20);
    CHECK(server.count_logs("backing off") >= 1);

    // Descriptors freed: the waiting connection is accepted. It speaks no TLS, so the
    // server answers with an alert or closes; before the accept, nothing would come back.
    for (const int fd : fillers) ::close(fd);
    fillers.clear();
    ::setrlimit(RLIMIT_NOFILE, &old);
    CHECK(::send(client, "not TLS\r\n\r\n", 11, MSG_NOSIGNAL) == 11);
    pollfd p{client, POLLIN, 0};
    CHECK(::poll(&p, 1, 10000) == 1);
    char buf[64];
    CHECK(::recv(client, buf, sizeof buf, 0) >= 0);
    ::close(client);
    CHECK(server.count_logs("accept failed") < 20);

    Side friendly("friend");
    ConnectionPtr c = friendly.t->connect("127.0.0.1", port);
    CHECK(c->peer() == "server");
}
