// The TCP backend of the transport: Asio, one I/O thread, C++20 coroutines.
// GCC 12 miscompiles co_await inside larger expressions (conditions, `?:`, structured
// bindings, temporaries around it): every co_await here is a statement of its own, and
// errors come back through redirect_error rather than tuples.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

#include <asio.hpp>

#include <deque>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <variant>

#include "hetcast/error.hpp"
#include "hetcast/net/transport.hpp"

namespace hetcast::net {
namespace {

using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using Done = std::function<void(std::error_code)>;

std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

/// "10 s" or "300 ms".
std::string duration_text(std::chrono::milliseconds d) {
    return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + " s" : std::to_string(d.count()) + " ms";
}

/// Keepalive probes an idle connection (after 5 s, every 1 s, 5 of them) so a dead peer is
/// noticed; TCP_USER_TIMEOUT drops one whose sent data stays unacknowledged for `stall`.
/// Best effort: a socket that refuses an option keeps working without it.
void set_liveness_options(int fd, std::chrono::milliseconds stall) {
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

class TcpTransport;

class TcpConnection final : public Connection, public std::enable_shared_from_this<TcpConnection> {
public:
    TcpConnection(TcpTransport& owner, tcp::socket socket);

    const std::string& peer() const override { return peer_; }
    void send(Frame f, Done done) override { enqueue(Item{std::move(f), std::move(done), Clock::now()}); }
    void send_stream(std::uint64_t job, std::uint32_t message, std::shared_ptr<const MessageBody> body,
                     std::size_t chunk, Done done) override {
        enqueue(Item{Stream{job, message, std::move(body), std::max<std::size_t>(chunk, 1)}, std::move(done),
                     Clock::now()});
    }
    void close(const std::string& reason) override;
    void set_shape(LinkShape shape) override {
        asio::post(socket_.get_executor(), [self = shared_from_this(), shape] { self->shape_ = shape; });
    }

    /// Empty when both sides proved the secret; otherwise why not (the socket is closed).
    asio::awaitable<std::string> handshake(bool server);
    asio::awaitable<std::string> handshake_server();
    asio::awaitable<std::string> handshake_client();
    std::string refuse(bool server, const std::string& why);
    asio::awaitable<void> read_loop();
    asio::awaitable<void> write_loop();
    void shutdown(const std::string& why);

private:
    void enqueue(Item item) {
        asio::post(socket_.get_executor(), [self = shared_from_this(), item = std::move(item)]() mutable {
            if (self->closed_ || self->closing_) {
                if (item.done) item.done(asio::error::not_connected);
                return;
            }
            self->queue_.push_back(std::move(item));
            self->wake_.cancel();
        });
    }
    asio::awaitable<std::error_code> write_paced(std::vector<asio::const_buffer> buffers, std::size_t bytes,
                                                 Clock::time_point queued);
    asio::awaitable<std::error_code> write_item(Item& item);
    /// Ends a stream whose body failed between frames: a job_cancel for its message, and
    /// the stream's error; the connection goes on.
    asio::awaitable<std::error_code> write_abandon(const Stream& s, const std::string& why);
    bool abandoned_ = false;  ///< the item just written was abandoned cleanly
    /// Frames queued behind a stream go out between its chunks: a request, a ping or a
    /// cancel must not wait for a whole message to cross a slow link.
    asio::awaitable<std::error_code> write_queued_frames();
    asio::awaitable<std::error_code> send_file(MessageBody::Reader::FileRange range);
    /// Waits until the reader can go on (a relayed message still arriving); false when
    /// the connection closes meanwhile.
    asio::awaitable<bool> await_data(MessageBody::Reader& reader);
    /// Writes all of `buffers` to the socket, timing progress for the stall rule.
    asio::awaitable<std::error_code> write_socket(std::vector<asio::const_buffer> buffers);
    /// The stall rule: while a write waits on the socket, the connection closes when no
    /// byte has been taken for config().stall.
    void begin_write();
    void end_write() { writing_ = false; }
    void arm_stall();
    std::string stall_reason() const;
    asio::awaitable<std::pair<std::error_code, Frame>> read_frame(std::size_t max_payload);

    TcpTransport& owner_;
    tcp::socket socket_;
    asio::steady_timer wake_;
    asio::steady_timer pace_;
    asio::steady_timer data_;  ///< a stream waiting for its body to grow
    asio::steady_timer stall_;  ///< checks a write waiting on the socket
    Clock::time_point progress_{};  ///< when the socket last took bytes (or the write began)
    bool writing_ = false;          ///< a write waits on the socket
    bool stall_armed_ = false;
    std::deque<Item> queue_;
    std::string peer_;
    LinkShape shape_;
    Clock::time_point next_free_{};
    bool closed_ = false;
    bool closing_ = false;  // an error frame is queued; nothing more is accepted
};

class TcpTransport final : public Transport {
public:
    TcpTransport(TransportConfig config, TransportCallbacks callbacks)
        : config_(std::move(config)), cb_(std::move(callbacks)), acceptor_(io_), accept_pause_(io_) {}
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

    ConnectionPtr connect(const std::string& host, std::uint16_t port) override {
        const std::string where = host + ":" + std::to_string(port);
        auto fut = asio::co_spawn(io_, connect_to(host, port), asio::use_future);
        if (fut.wait_for(config_.timeout + std::chrono::seconds(1)) != std::future_status::ready) {
            throw Error("cannot reach " + where + ": timed out after " + std::to_string(config_.timeout.count()) + " ms");
        }
        auto [conn, why] = fut.get();
        if (!conn) throw Error("cannot reach " + where + ": " + why);
        return conn;
    }

    const TransportConfig& config() const { return config_; }
    const TransportCallbacks& callbacks() const { return cb_; }
    void log(const std::string& line) const {
        if (cb_.log) cb_.log(line);
    }
    void opened(const std::shared_ptr<TcpConnection>& c) {
        connections_.insert(c);
        if (cb_.on_open) cb_.on_open(c);
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
                    log(line);
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
                log("accepting again (" + std::to_string(unlogged) + " more accept failures in the last " +
                    since_last(now) + ")");
                unlogged = 0;
                last_log = now;
                next_log = now + log_every;
            }
            auto conn = std::make_shared<TcpConnection>(*this, std::move(accepted));
            asio::co_spawn(io_, start_inbound(conn), asio::detached);
        }
    }

    asio::awaitable<void> start_inbound(std::shared_ptr<TcpConnection> conn) {
        const std::string why = co_await conn->handshake(true);
        if (!why.empty()) co_return;
        opened(conn);
        asio::co_spawn(io_, conn->write_loop(), asio::detached);
        co_await conn->read_loop();
    }

    asio::awaitable<std::pair<ConnectionPtr, std::string>> connect_to(std::string host, std::uint16_t port) {
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
        auto conn = std::make_shared<TcpConnection>(*this, std::move(socket));
        const std::string why = co_await conn->handshake(false);
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
    tcp::acceptor acceptor_;
    asio::steady_timer accept_pause_;
    std::thread thread_;
    std::uint16_t port_ = 0;
    std::set<std::shared_ptr<TcpConnection>> connections_;
};

TcpConnection::TcpConnection(TcpTransport& owner, tcp::socket socket)
    : owner_(owner), socket_(std::move(socket)), wake_(socket_.get_executor()), pace_(socket_.get_executor()),
      data_(socket_.get_executor()), stall_(socket_.get_executor()) {
    std::error_code ec;
    socket_.set_option(tcp::no_delay(true), ec);
    set_liveness_options(socket_.native_handle(), owner_.config().stall);
}

void TcpConnection::begin_write() {
    writing_ = true;
    progress_ = Clock::now();
    arm_stall();
}

void TcpConnection::arm_stall() {
    const auto stall = owner_.config().stall;
    if (stall.count() <= 0 || stall_armed_ || closed_) return;
    stall_armed_ = true;
    stall_.expires_at(progress_ + stall);
    stall_.async_wait([w = weak_from_this(), stall](std::error_code ec) {
        const auto self = w.lock();
        if (!self) return;
        self->stall_armed_ = false;
        if (ec || self->closed_ || !self->writing_) return;
        if (Clock::now() - self->progress_ >= stall) {
            self->shutdown(self->stall_reason());
        } else {
            self->arm_stall();
        }
    });
}

std::string TcpConnection::stall_reason() const {
    return "no progress sending for " + duration_text(owner_.config().stall) + ": the peer takes no data";
}

asio::awaitable<std::error_code> TcpConnection::write_socket(std::vector<asio::const_buffer> buffers) {
    begin_write();
    // Called after every partial write: each one is progress.
    const auto progress = [this](const std::error_code& e, std::size_t n) -> std::size_t {
        progress_ = Clock::now();
        return asio::transfer_all()(e, n);
    };
    std::error_code ec;
    co_await asio::async_write(socket_, buffers, progress, asio::redirect_error(asio::use_awaitable, ec));
    end_write();
    co_return ec;
}

/// Handshake frames carry a nonce, a proof and a name: nobody unauthenticated gets more.
constexpr std::size_t max_handshake_frame = 4096;

asio::awaitable<std::pair<std::error_code, Frame>> TcpConnection::read_frame(std::size_t max_payload) {
    std::array<std::byte, header_size> hdr;
    std::error_code ec;
    co_await asio::async_read(socket_, asio::buffer(hdr), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return std::pair{ec, Frame{}};
    const Decoded d = decode_header(hdr, max_payload);
    if (d.status != Decoded::Status::complete) {
        owner_.log("closing the connection with " + (peer_.empty() ? std::string("a peer") : "'" + peer_ + "'") + ": " +
                   d.error);
        shutdown(d.error);
        co_return std::pair{std::make_error_code(std::errc::protocol_error), Frame{}};
    }
    Frame f{d.header, std::vector<std::byte>(d.header.length)};
    if (!f.payload.empty()) {
        co_await asio::async_read(socket_, asio::buffer(f.payload), asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return std::pair{ec, std::move(f)};
}

std::string TcpConnection::refuse(bool server, const std::string& why) {
    owner_.log((server ? "refused connection from " : "handshake with ") +
               (peer_.empty() ? std::string("a peer") : "'" + peer_ + "'") + ": " + why);
    shutdown(why);
    return why;
}

asio::awaitable<std::string> TcpConnection::handshake(bool server) {
    // The socket is closed if the exchange takes longer than the timeout; the pending
    // read then fails and the handshake is refused.
    auto timer = std::make_shared<asio::steady_timer>(socket_.get_executor());
    auto expired = std::make_shared<bool>(false);
    timer->expires_after(owner_.config().timeout);
    timer->async_wait([self = shared_from_this(), expired](std::error_code ec) {
        if (!ec) {
            *expired = true;
            std::error_code ignore;
            self->socket_.close(ignore);
        }
    });
    // Not a conditional expression: GCC 12 miscompiles co_await inside `?:`.
    std::string why;
    if (server) {
        why = co_await handshake_server();
    } else {
        why = co_await handshake_client();
    }
    timer->cancel();
    if (*expired) why = "no handshake within " + std::to_string(owner_.config().timeout.count()) + " ms";
    co_return why.empty() ? why : refuse(server, why);
}

asio::awaitable<std::string> TcpConnection::handshake_server() {
    const auto& cfg = owner_.config();
    const Nonce mine = make_nonce();
    std::string hello(reinterpret_cast<const char*>(mine.data()), mine.size());
    hello += cfg.name;
    const auto wire = encode(FrameType::hello, 0, 0, hello);
    std::error_code ec;
    co_await asio::async_write(socket_, asio::buffer(wire), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return "handshake write failed: " + ec.message();
    auto got = co_await read_frame(max_handshake_frame);
    if (got.first) co_return "no authentication: " + got.first.message();
    const Frame& f = got.second;
    if (f.header.type != FrameType::auth || f.payload.size() < 64) co_return std::string("expected an auth frame");
    Nonce theirs;
    std::copy_n(f.payload.begin() + 32, 32, theirs.begin());
    peer_ = std::string(as_text(std::span(f.payload).subspan(64)));
    const Digest expect = auth_proof(cfg.secret, Role::client, mine, theirs);
    if (!same_digest(expect, std::span(f.payload).first(32))) {
        const auto err = encode(FrameType::error, 0, 0, "wrong cluster secret");
        co_await asio::async_write(socket_, asio::buffer(err), asio::redirect_error(asio::use_awaitable, ec));
        co_return std::string("wrong cluster secret");
    }
    const Digest proof = auth_proof(cfg.secret, Role::server, theirs, mine);
    const auto ok = encode(FrameType::auth_ok, 0, 0, as_text(proof));
    co_await asio::async_write(socket_, asio::buffer(ok), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return "handshake write failed: " + ec.message();
    co_return std::string();
}

asio::awaitable<std::string> TcpConnection::handshake_client() {
    const auto& cfg = owner_.config();
    const Nonce mine = make_nonce();
    auto got = co_await read_frame(max_handshake_frame);
    if (got.first) co_return "no hello: " + got.first.message();
    const Frame& hello = got.second;
    if (hello.header.type != FrameType::hello || hello.payload.size() < 32) co_return std::string("expected a hello frame");
    Nonce theirs;
    std::copy_n(hello.payload.begin(), 32, theirs.begin());
    peer_ = std::string(as_text(std::span(hello.payload).subspan(32)));
    const Digest proof = auth_proof(cfg.secret, Role::client, theirs, mine);
    std::string auth(reinterpret_cast<const char*>(proof.data()), proof.size());
    auth.append(reinterpret_cast<const char*>(mine.data()), mine.size());
    auth += cfg.name;
    const auto wire = encode(FrameType::auth, 0, 0, auth);
    std::error_code ec;
    co_await asio::async_write(socket_, asio::buffer(wire), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return "handshake write failed: " + ec.message();
    auto answer = co_await read_frame(max_handshake_frame);
    if (answer.first) co_return "no answer to authentication: " + answer.first.message();
    const Frame& reply = answer.second;
    if (reply.header.type == FrameType::error) co_return std::string(as_text(reply.payload));
    if (reply.header.type != FrameType::auth_ok || reply.payload.size() != 32 ||
        !same_digest(reply.payload, auth_proof(cfg.secret, Role::server, mine, theirs))) {
        co_return std::string("the server could not prove the cluster secret");
    }
    co_return std::string();
}

asio::awaitable<void> TcpConnection::read_loop() {
    auto self = shared_from_this();
    while (!closed_) {
        auto got = co_await read_frame(owner_.config().max_frame);
        const std::error_code ec = got.first;
        Frame& f = got.second;
        if (ec) {
            // TCP_USER_TIMEOUT or keepalive gave up on the peer.
            if (ec == asio::error::timed_out) {
                shutdown(writing_ ? stall_reason() : "the peer stopped answering (" + ec.message() + ")");
            } else {
                shutdown(ec == asio::error::eof ? "closed by peer" : ec.message());
            }
            co_return;
        }
        if (f.header.type == FrameType::error) {
            shutdown("peer says: " + std::string(as_text(f.payload)));
            co_return;
        }
        if (const auto& on_frame = owner_.callbacks().on_frame) on_frame(self, std::move(f));
    }
}

asio::awaitable<std::error_code> TcpConnection::write_paced(std::vector<asio::const_buffer> buffers,
                                                            std::size_t bytes, Clock::time_point queued) {
    if (shape_.bandwidth > 0 || !shape_.shared.empty()) {
        const auto dep = std::max(queued, next_free_);
        auto end = shape_.bandwidth > 0
                       ? dep + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(static_cast<double>(bytes) / shape_.bandwidth))
                       : dep;
        for (const auto& r : shape_.shared) end = std::max(end, r->book(dep, bytes));
        next_free_ = end;
        pace_.expires_at(end + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(shape_.latency)));
        std::error_code ignore;
        co_await pace_.async_wait(asio::redirect_error(asio::use_awaitable, ignore));
    }
    const std::error_code ec = co_await write_socket(std::move(buffers));
    co_return ec;
}

asio::awaitable<std::error_code> TcpConnection::write_item(Item& item) {
    if (auto* f = std::get_if<Frame>(&item.what)) {
        std::array<std::byte, header_size> hdr;
        f->header.length = static_cast<std::uint32_t>(f->payload.size());
        encode_header(f->header, hdr);
        // Buffers are built before co_await: GCC 12 cannot keep an initializer_list across one.
        std::vector<asio::const_buffer> bufs{asio::buffer(hdr), asio::buffer(f->payload)};
        const std::error_code ec = co_await write_paced(std::move(bufs), hdr.size() + f->payload.size(), item.queued);
        co_return ec;
    }
    auto& s = std::get<Stream>(item.what);
    // A body that fails between frames ends only its message: the receiver is told with a
    // job_cancel and the connection, which may carry other jobs, stays.
    std::string abandoned;
    const auto abandon = [&](const std::string& why) {
        owner_.log("cannot read a message to send: " + why);
        abandoned = "the sender cannot go on: " + why;
    };
    std::unique_ptr<MessageBody::Reader> reader;
    try {
        reader = s.body->open();
    } catch (const std::exception& e) {
        abandon(e.what());
    }
    if (!abandoned.empty()) co_return co_await write_abandon(s, abandoned);
    std::vector<std::byte> buf;
    std::array<std::byte, header_size> hdr;
    std::uint64_t sent = 0;
    while (true) {
        std::size_t n = 0;
        std::optional<MessageBody::Reader::FileRange> range;
        if (const std::error_code ec = co_await write_queued_frames()) co_return ec;
        if (!co_await await_data(*reader)) co_return asio::error::operation_aborted;
        try {
            // A file goes from the page cache to the socket (sendfile) unless the link is
            // emulated: pacing needs each chunk in hand.
            if (shape_.bandwidth <= 0 && shape_.shared.empty()) range = reader->next_range(s.chunk);
            if (range) {
                n = range->length;
            } else {
                buf.resize(s.chunk);
                n = reader->read(buf);
            }
        } catch (const std::exception& e) {
            abandon(e.what());
        }
        if (!abandoned.empty()) co_return co_await write_abandon(s, abandoned);
        if (n == 0) break;
        if (closing_) co_return asio::error::operation_aborted;
        sent += n;
        encode_header(FrameHeader{FrameType::data, 0, s.job, s.message, static_cast<std::uint32_t>(n)}, hdr);
        if (range) {
            std::vector<asio::const_buffer> head{asio::buffer(hdr)};
            std::error_code ec = co_await write_socket(std::move(head));
            if (ec) co_return ec;
            ec = co_await send_file(*range);
            if (ec) co_return ec;
            reader->skip(n);
            continue;
        }
        std::vector<asio::const_buffer> bufs{asio::buffer(hdr), asio::buffer(buf.data(), n)};
        const std::error_code ec = co_await write_paced(std::move(bufs), hdr.size() + n, item.queued);
        if (ec) co_return ec;
    }
    if (sent != s.body->size()) {
        abandon("the message ended after " + std::to_string(sent) + " of " + std::to_string(s.body->size()) + " bytes");
        co_return co_await write_abandon(s, abandoned);
    }
    const Digest sha = s.body->sha256();
    encode_header(FrameHeader{FrameType::data_end, 0, s.job, s.message, static_cast<std::uint32_t>(sha.size())}, hdr);
    std::vector<asio::const_buffer> bufs{asio::buffer(hdr), asio::buffer(sha)};
    const std::error_code ec = co_await write_paced(std::move(bufs), hdr.size() + sha.size(), item.queued);
    co_return ec;
}

asio::awaitable<std::error_code> TcpConnection::write_queued_frames() {
    while (!closing_) {
        const auto it = std::find_if(queue_.begin(), queue_.end(),
                                     [](const Item& i) { return std::holds_alternative<Frame>(i.what); });
        if (it == queue_.end()) break;
        Item item = std::move(*it);
        queue_.erase(it);
        const std::error_code ec = co_await write_item(item);
        if (item.done) item.done(ec);
        if (ec) co_return ec;
    }
    co_return std::error_code{};
}

asio::awaitable<std::error_code> TcpConnection::write_abandon(const Stream& s, const std::string& why) {
    std::array<std::byte, header_size> hdr;
    encode_header(FrameHeader{FrameType::job_cancel, 0, s.job, s.message, static_cast<std::uint32_t>(why.size())}, hdr);
    std::vector<asio::const_buffer> bufs{asio::buffer(hdr), asio::buffer(why)};
    if (const std::error_code ec = co_await write_socket(std::move(bufs))) co_return ec;
    abandoned_ = true;
    co_return std::make_error_code(std::errc::io_error);
}

asio::awaitable<std::error_code> TcpConnection::send_file(MessageBody::Reader::FileRange range) {
    std::error_code ec;
    socket_.native_non_blocking(true, ec);
    if (ec) co_return ec;
    auto offset = static_cast<off_t>(range.offset);
    std::size_t left = range.length;
    begin_write();
    while (left > 0) {
        const ssize_t n = ::sendfile(socket_.native_handle(), range.fd, &offset, left);
        if (n > 0) {
            progress_ = Clock::now();
            left -= static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            co_await socket_.async_wait(tcp::socket::wait_write, asio::redirect_error(asio::use_awaitable, ec));
            if (ec) break;
            continue;
        }
        // 0: the file ended before the range did (it shrank since it was described).
        ec = n == 0 ? std::make_error_code(std::errc::io_error) : std::error_code(errno, std::system_category());
        break;
    }
    end_write();
    co_return ec;
}

asio::awaitable<bool> TcpConnection::await_data(MessageBody::Reader& reader) {
    while (!closed_ && !closing_) {
        // Armed before asking: a wake from another thread is posted here, so it runs only
        // once this coroutine waits, and cannot be lost.
        data_.expires_after(std::chrono::seconds(1));
        const bool now = reader.ready([w = weak_from_this()] {
            if (auto self = w.lock()) asio::post(self->socket_.get_executor(), [self] { self->data_.cancel(); });
        });
        if (now) co_return true;
        std::error_code ignore;
        co_await data_.async_wait(asio::redirect_error(asio::use_awaitable, ignore));
    }
    co_return false;
}

asio::awaitable<void> TcpConnection::write_loop() {
    auto self = shared_from_this();
    while (!closed_) {
        if (queue_.empty()) {
            wake_.expires_at(Clock::time_point::max());
            std::error_code ignore;
            co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ignore));
            continue;
        }
        Item item = std::move(queue_.front());
        queue_.pop_front();
        const std::error_code ec = co_await write_item(item);
        if (item.done) item.done(ec);
        if (ec && !closing_ && !std::exchange(abandoned_, false)) {
            // TCP_USER_TIMEOUT (= stall): the peer acknowledged nothing for that long.
            shutdown(ec == asio::error::timed_out ? stall_reason() + " (" + ec.message() + ")"
                                                  : "write failed: " + ec.message());
            co_return;
        }
    }
}

void TcpConnection::shutdown(const std::string& why) {
    if (closed_) return;
    closed_ = true;
    std::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    wake_.cancel();
    pace_.cancel();
    data_.cancel();
    stall_.cancel();
    for (auto& item : queue_) {
        if (item.done) item.done(asio::error::not_connected);
    }
    queue_.clear();
    owner_.closed(shared_from_this(), why);
}

void TcpConnection::close(const std::string& reason) {
    asio::post(socket_.get_executor(), [self = shared_from_this(), reason] {
        if (self->closed_ || self->closing_) return;
        if (reason.empty()) {
            self->shutdown("closed");
            return;
        }
        // The error frame goes out after the item being written (a stream stops at its next
        // chunk); what is still queued is dropped.
        self->closing_ = true;
        for (auto& item : self->queue_) {
            if (item.done) item.done(asio::error::operation_aborted);
        }
        self->queue_.clear();
        Frame f{FrameHeader{FrameType::error, 0, 0, 0, 0}, {}};
        const auto b = bytes_of(reason);
        f.payload.assign(b.begin(), b.end());
        self->queue_.push_back(Item{std::move(f), [self, reason](std::error_code) { self->shutdown(reason); },
                                    Clock::time_point{}});
        self->shape_ = {};
        self->pace_.cancel();
        self->wake_.cancel();
        self->data_.cancel();
    });
}

}  // namespace

std::unique_ptr<Transport> make_tcp_transport(TransportConfig config, TransportCallbacks callbacks) {
    return std::make_unique<TcpTransport>(std::move(config), std::move(callbacks));
}

}  // namespace hetcast::net
