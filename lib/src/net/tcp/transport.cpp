// The TCP backend of the transport: Asio, one I/O thread, C++20 coroutines. This file:
// connections made and accepted, the handshake, the read loop. The write path is in
// transport_write.cpp; what both share is in connection.hpp.
#include "connection.hpp"

namespace hetcast::net {
namespace tcp_detail {

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

}  // namespace tcp_detail

std::unique_ptr<Transport> make_tcp_transport(TransportConfig config, TransportCallbacks callbacks) {
    return std::make_unique<tcp_detail::TcpTransport>(std::move(config), std::move(callbacks));
}

}  // namespace hetcast::net
