#pragma once
// The TCP backend's insides, shared by transport.cpp (the transport, connecting, the TLS
// handshake, reading) and transport_write.cpp (a connection's send queue: frames, streams
// with pacing, stall deadlines). Not installed; only lib/src/net/tcp includes it.
// Every byte after the TCP connect goes through TLS 1.3 (Asio's ssl::stream over OpenSSL),
// so there is no sendfile: this kernel has no kTLS (docs/security.md).
// GCC 12 miscompiles co_await inside larger expressions (conditions, `?:`, structured
// bindings, temporaries around it): every co_await here is a statement of its own, and
// errors come back through redirect_error rather than tuples.
#include <netinet/in.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <asio.hpp>
#include <asio/ssl.hpp>

#include <atomic>
#include <deque>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <variant>

#include "hetcast/error.hpp"
#include "hetcast/net/transport.hpp"
#include "tcp_info.hpp"

namespace hetcast::net::tcp_detail {

using asio::ip::tcp;
using Tls = asio::ssl::stream<tcp::socket>;
using Clock = std::chrono::steady_clock;
using Done = std::function<void(std::error_code)>;

inline std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

/// "10 s" or "300 ms".
inline std::string duration_text(std::chrono::milliseconds d) {
    return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + " s" : std::to_string(d.count()) + " ms";
}

/// Keepalive probes an idle connection (after 5 s, every 1 s, 5 of them) so a dead peer is
/// noticed; TCP_USER_TIMEOUT drops one whose sent data stays unacknowledged for `stall`.
/// Best effort: a socket that refuses an option keeps working without it.
inline void set_liveness_options(int fd, std::chrono::milliseconds stall) {
    const auto set = [fd](int level, int name, int value) { (void)::setsockopt(fd, level, name, &value, sizeof value); };
    set(SOL_SOCKET, SO_KEEPALIVE, 1);
    set(IPPROTO_TCP, TCP_KEEPIDLE, 5);
    set(IPPROTO_TCP, TCP_KEEPINTVL, 1);
    set(IPPROTO_TCP, TCP_KEEPCNT, 5);
    if (stall.count() > 0) {
        set(IPPROTO_TCP, TCP_USER_TIMEOUT, static_cast<int>(std::min<std::int64_t>(stall.count(), 1'000'000'000)));
    }
}

struct Stream {
    std::uint64_t job;
    std::uint32_t message;
    std::shared_ptr<const MessageBody> body;
    std::size_t chunk;
};

struct Item {
    std::variant<Frame, Stream> what;
    Done done;
    Clock::time_point queued;
};

/// A stream being written: its body's reader, and whether it waits for the body to grow.
struct Sending {
    Item item;
    std::unique_ptr<MessageBody::Reader> reader;
    std::vector<std::byte> buf;
    std::size_t chunk = 0;
    std::uint64_t sent = 0;
    std::shared_ptr<std::atomic<bool>> woken;  ///< the body grew since it last waited
    bool waiting = false;
    std::string abandoned;  ///< why its body cannot be read on, when it cannot
};

class TcpTransport;

class TcpConnection final : public Connection, public std::enable_shared_from_this<TcpConnection> {
public:
    TcpConnection(TcpTransport& owner, tcp::socket socket, asio::ssl::context& tls);

    const std::string& peer() const override { return identity_.name; }
    const PeerIdentity& identity() const override { return identity_; }
    void send(Frame f, Done done) override { enqueue(Item{std::move(f), std::move(done), Clock::now()}); }
    void send_stream(std::uint64_t job, std::uint32_t message, std::shared_ptr<const MessageBody> body,
                     std::size_t chunk, Done done) override {
        enqueue(Item{Stream{job, message, std::move(body), std::max<std::size_t>(chunk, 1)}, std::move(done),
                     Clock::now()});
    }
    void close(const std::string& reason) override;
    void abort(const std::string& why) override;
    Clock::time_point received_at() const override { return Clock::time_point(Clock::duration(received_.load())); }
    std::optional<std::uint64_t> kernel_received() override {
        const std::lock_guard lock(fd_mu_);
        return fd_closed_ ? std::nullopt : kernel_bytes_received(sock().native_handle());
    }
    std::string congestion() override {
        const std::lock_guard lock(fd_mu_);
        return fd_closed_ ? std::string() : congestion_of(sock().native_handle());
    }
    bool set_max_pacing(double bytes_per_s) override {
        const std::lock_guard lock(fd_mu_);
        if (fd_closed_) return false;
        const double wire = tcp_detail::pacing_rate_for(bytes_per_s, tcp_detail::mss_of(sock().native_handle()));
        const unsigned rate = wire <= 0 || wire >= 4e9 ? ~0u : static_cast<unsigned>(wire);
        return ::setsockopt(sock().native_handle(), SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate) == 0;
    }
    void set_shape(LinkShape shape) override {
        asio::post(stream_.get_executor(), [self = shared_from_this(), shape] { self->shape_ = shape; });
    }

    /// Empty when both sides proved an identity the cluster CA issued and the other admits;
    /// otherwise why not (the socket is closed). `expect`: the name the client wants.
    asio::awaitable<std::string> handshake(bool server, std::string expect);
    /// After TLS: who the peer is, and whether this side admits it (empty) or not (why).
    std::string check_peer(bool server, const std::string& expect);
    /// The server's verdict after TLS: auth_ok, or an error frame with the reason.
    asio::awaitable<std::string> tell_verdict(const std::string& why);
    asio::awaitable<std::string> await_verdict();
    std::string refuse(bool server, const std::string& why);
    asio::awaitable<void> read_loop();
    asio::awaitable<void> write_loop();
    /// `reset`: no FIN after what the socket holds; a reset that drops it.
    void shutdown(const std::string& why, bool reset = false);
    /// Closes the connection once nothing has passed on it for config().idle and it
    /// carries no work (TransportCallbacks::busy); checked again at `at`.
    void arm_idle(Clock::time_point at);
    bool inbound() const { return inbound_; }

private:
    void enqueue(Item item) {
        asio::post(stream_.get_executor(), [self = shared_from_this(), item = std::move(item)]() mutable {
            if (self->closed_ || self->closing_) {
                if (item.done) item.done(asio::error::not_connected);
                return;
            }
            self->queue_.push_back(std::move(item));
            self->wake_.cancel();
            self->data_.cancel();
        });
    }
    asio::awaitable<std::error_code> write_paced(std::vector<asio::const_buffer> buffers, std::size_t bytes,
                                                 Clock::time_point queued);
    asio::awaitable<std::error_code> write_frame(Item& item);
    /// Opens a stream's body; false (and why in `out.abandoned`) when it cannot be read.
    bool open_stream(Sending& out);
    /// Whether the stream can write its next chunk now; when not, a wake is armed once.
    bool can_go(Sending& s);
    /// Its next chunk, or its end (data_end, or a job_cancel when abandoned): the error and
    /// whether the stream is over.
    asio::awaitable<std::pair<std::error_code, bool>> write_chunk(Sending& out);
    /// Ends a stream whose body failed between frames: a job_cancel for its message, and
    /// the stream's error; the connection goes on.
    asio::awaitable<std::error_code> write_abandon(const Stream& s, const std::string& why);
    bool abandoned_ = false;  ///< the item just written was abandoned cleanly
    /// Writes all of `buffers` to the socket, timing progress for the stall rule. Several
    /// buffers are joined first: TLS would make a record of each.
    asio::awaitable<std::error_code> write_socket(std::vector<asio::const_buffer> buffers);
    tcp::socket& sock() { return stream_.next_layer(); }
    /// Closes the socket under fd_mu_: the calls above may come from any thread, and must
    /// never ask about a descriptor the kernel has since given to another socket.
    void close_socket(std::error_code& ec) {
        const std::lock_guard lock(fd_mu_);
        fd_closed_ = true;
        sock().close(ec);
    }
    std::mutex fd_mu_;
    bool fd_closed_ = false;
    std::vector<std::byte> joined_;  ///< write_socket's joined buffers
    /// The stall rule: while a write waits on the socket, the connection closes when no
    /// byte has been taken for config().stall.
    void begin_write();
    void end_write() { writing_ = false; }
    void arm_stall();
    std::string stall_reason() const;
    asio::awaitable<std::pair<std::error_code, Frame>> read_frame(std::size_t max_payload);

    TcpTransport& owner_;
    Tls stream_;
    asio::steady_timer wake_;
    asio::steady_timer pace_;
    asio::steady_timer data_;  ///< streams waiting for their bodies to grow
    asio::steady_timer stall_;  ///< checks a write waiting on the socket
    Clock::time_point progress_{};  ///< when the socket last took bytes (or the write began)
    /// Bytes the socket held unacknowledged when last looked at: a queue that shrinks is
    /// progress too (on a congested link the writer is woken only once a third of a
    /// megabytes-deep buffer has drained).
    int outq_ = -1;
    std::atomic<Clock::rep> received_{Clock::now().time_since_epoch().count()};
    /// Reads all of `buffers`, noting every partial read in received_.
    asio::awaitable<std::error_code> read_all(asio::mutable_buffer buffers);
    [[nodiscard]] int unacked() {
        int n = -1;
        return ::ioctl(sock().native_handle(), SIOCOUTQ, &n) == 0 ? n : -1;
    }
    bool writing_ = false;          ///< a write waits on the socket
    bool stall_armed_ = false;
    std::deque<Item> queue_;
    std::deque<Sending> sending_;  ///< streams under way, in the order they were queued
    PeerIdentity identity_;
    LinkShape shape_;
    Clock::time_point next_free_{};
    bool closed_ = false;
    bool closing_ = false;  // an error frame is queued; nothing more is accepted
    bool inbound_ = false;  ///< the peer dialled this side
    asio::steady_timer idle_;
    Clock::time_point sent_at_ = Clock::now();  ///< when the socket last took bytes
};

/// TLS 1.3 only, this identity's certificate, and the cluster CA as the only trust anchor;
/// both sides must present a certificate. Throws hetcast::Error for an unusable identity.
asio::ssl::context make_tls_context(const TransportConfig& config);

class TcpTransport final : public Transport {
public:
    TcpTransport(TransportConfig config, TransportCallbacks callbacks)
        : config_(std::move(config)), cb_(std::move(callbacks)), tls_(make_tls_context(config_)), acceptor_(io_),
          accept_pause_(io_) {}
    ~TcpTransport() override { stop(); }

    void start() override {
        tcp::endpoint ep(asio::ip::make_address(config_.host), config_.port);
        std::error_code ec;
        acceptor_.open(ep.protocol(), ec);
        if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
        if (!ec) acceptor_.bind(ep, ec);
        if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
        if (ec) {
            throw Error("cannot listen on " + config_.host + ":" + std::to_string(config_.port) + ": " + ec.message());
        }
        if (!config_.congestion.empty()) {
            if (const std::string why = set_congestion(acceptor_.native_handle(), config_.congestion); !why.empty()) {
                throw Error("TCP congestion control '" + config_.congestion + "': " + why);
            }
        }
        port_ = acceptor_.local_endpoint().port();
        asio::co_spawn(io_, accept_loop(), asio::detached);
        thread_ = std::thread([this] { io_.run(); });
    }

    void stop() override {
        if (!thread_.joinable()) return;
        asio::post(io_, [this] {
            std::error_code ec;
            acceptor_.close(ec);
            accept_pause_.cancel();
            for (const auto& c : live()) c->shutdown("transport stopped");
        });
        // Give the connections a moment to flush their error frames, then stop.
        asio::post(io_, [this] { io_.stop(); });
        thread_.join();
    }

    std::uint16_t port() const override { return port_; }

    ConnectionPtr connect(const std::string& host, std::uint16_t port, const std::string& expect) override {
        const std::string where = host + ":" + std::to_string(port);
        auto fut = asio::co_spawn(io_, connect_to(host, port, expect), asio::use_future);
        if (fut.wait_for(config_.timeout + std::chrono::seconds(1)) != std::future_status::ready) {
            throw Error("cannot reach " + where + ": timed out after " + std::to_string(config_.timeout.count()) + " ms");
        }
        auto [conn, why] = fut.get();
        if (!conn) throw Error("cannot reach " + where + ": " + why);
        return conn;
    }

    void close_if(std::function<bool(const PeerIdentity&)> which, const std::string& reason) override {
        asio::post(io_, [this, which = std::move(which), reason] {
            for (const auto& c : live()) {
                if (which(c->identity())) {
                    log(LogLevel::info, "closing the connection with '" + c->peer() + "': " + reason);
                    c->close(reason);
                }
            }
        });
    }

    const TransportConfig& config() const { return config_; }
    const TransportCallbacks& callbacks() const { return cb_; }
    void log(LogLevel level, const std::string& line) const {
        if (cb_.log) cb_.log(level, line);
    }
    void opened(const std::shared_ptr<TcpConnection>& c) {
        connections_.insert(c);
        if (config_.idle.count() > 0) c->arm_idle(Clock::now() + config_.idle);
        if (cb_.on_open) cb_.on_open(c);
    }
    /// Open connections `name` made to this side.
    std::size_t inbound_from(const std::string& name) const {
        return static_cast<std::size_t>(std::count_if(connections_.begin(), connections_.end(), [&](const auto& c) {
            return c->inbound() && c->peer() == name;
        }));
    }
    void closed(const std::shared_ptr<TcpConnection>& c, const std::string& why) {
        if (connections_.erase(c) && cb_.on_close) cb_.on_close(c, why);
    }

private:
    std::vector<std::shared_ptr<TcpConnection>> live() const { return {connections_.begin(), connections_.end()}; }

    /// Out of descriptors (or memory), accepting again at once fails again at once: the
    /// loop waits, 100 ms doubling up to 1 s, and logs at most one line per 10 s, with a
    /// count of the failures it did not log.
    asio::awaitable<void> accept_loop() {
        using std::chrono::milliseconds;
        constexpr auto log_every = std::chrono::seconds(10);
        milliseconds pause{0};
        Clock::time_point last_log{}, next_log{};
        std::size_t unlogged = 0;
        const auto since_last = [&](Clock::time_point now) {
            const auto s = std::chrono::duration_cast<std::chrono::seconds>(now - last_log).count();
            return std::to_string(std::max<std::int64_t>(s, 1)) + " s";
        };
        while (acceptor_.is_open()) {
            std::error_code ec;
            tcp::socket accepted = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
            if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
            const auto now = Clock::now();
            if (ec) {
                // Out of descriptors (EMFILE, ENFILE), buffers or memory: the pending
                // connection stays in the backlog and accepting again fails again, so wait.
                // A connection reset before it was accepted costs only itself.
                const bool transient = ec == asio::error::connection_aborted || ec == asio::error::interrupted ||
                                       ec == asio::error::would_block || ec == asio::error::try_again;
                if (!transient) pause = pause.count() == 0 ? milliseconds(100) : std::min(2 * pause, milliseconds(1000));
                if (now >= next_log) {
                    std::string line = "accept failed: " + ec.message();
                    if (unlogged > 0) line += " (" + std::to_string(unlogged) + " more in the last " + since_last(now) + ")";
                    if (!transient) line += "; backing off";
                    log(transient ? LogLevel::warn : LogLevel::error, line);
                    unlogged = 0;
                    last_log = now;
                    next_log = now + log_every;
                } else {
                    ++unlogged;
                }
                if (!transient) {
                    accept_pause_.expires_after(pause);
                    std::error_code ignore;
                    co_await accept_pause_.async_wait(asio::redirect_error(asio::use_awaitable, ignore));
                }
                continue;
            }
            pause = milliseconds(0);
            if (unlogged > 0 && now >= next_log) {
                log(LogLevel::info, "accepting again (" + std::to_string(unlogged) + " more accept failures in the last " +
                    since_last(now) + ")");
                unlogged = 0;
                last_log = now;
                next_log = now + log_every;
            }
            auto conn = std::make_shared<TcpConnection>(*this, std::move(accepted), tls_);
            asio::co_spawn(io_, start_inbound(conn), asio::detached);
        }
    }

    asio::awaitable<void> start_inbound(std::shared_ptr<TcpConnection> conn) {
        const std::string why = co_await conn->handshake(true, std::string());
        if (!why.empty()) co_return;
        opened(conn);
        asio::co_spawn(io_, conn->write_loop(), asio::detached);
        co_await conn->read_loop();
    }

    asio::awaitable<std::pair<ConnectionPtr, std::string>> connect_to(std::string host, std::uint16_t port,
                                                                     std::string expect) {
        tcp::socket socket(io_);
        asio::steady_timer timer(io_);
        timer.expires_after(config_.timeout);
        bool timed_out = false;
        timer.async_wait([&](std::error_code ec) {
            if (!ec) {
                timed_out = true;
                std::error_code ignore;
                socket.close(ignore);
            }
        });
        std::error_code ec;
        // A literal address needs no resolver; a host name goes through getaddrinfo.
        tcp::resolver resolver(io_);
        tcp::resolver::results_type endpoints;
        if (const auto addr = asio::ip::make_address(host, ec); !ec) {
            endpoints = tcp::resolver::results_type::create(tcp::endpoint(addr, port), host, std::to_string(port));
        } else {
            endpoints = co_await resolver.async_resolve(host, std::to_string(port), asio::redirect_error(asio::use_awaitable, ec));
            if (ec) {
                timer.cancel();
                co_return std::pair{ConnectionPtr{}, "cannot resolve '" + host + "': " + ec.message()};
            }
        }
        co_await asio::async_connect(socket, endpoints, asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            timer.cancel();
            co_return std::pair{ConnectionPtr{}, timed_out ? "timed out after " + std::to_string(config_.timeout.count()) + " ms"
                                                           : ec.message()};
        }
        auto conn = std::make_shared<TcpConnection>(*this, std::move(socket), tls_);
        const std::string why = co_await conn->handshake(false, expect);
        timer.cancel();
        if (!why.empty()) co_return std::pair{ConnectionPtr{}, why};
        opened(conn);
        asio::co_spawn(io_, conn->write_loop(), asio::detached);
        asio::co_spawn(io_, conn->read_loop(), asio::detached);
        co_return std::pair{ConnectionPtr(conn), std::string()};
    }

    asio::io_context io_;
    TransportConfig config_;
    TransportCallbacks cb_;
    asio::ssl::context tls_;
    tcp::acceptor acceptor_;
    asio::steady_timer accept_pause_;
    std::thread thread_;
    std::uint16_t port_ = 0;
    std::set<std::shared_ptr<TcpConnection>> connections_;
};

}  // namespace hetcast::net::tcp_detail
