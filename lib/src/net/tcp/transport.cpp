// The TCP backend of the transport: Asio, one I/O thread, C++20 coroutines, TLS 1.3. This
// file: the TLS context, connections made and accepted, the handshake, the read loop. The write path is in
// transport_write.cpp; what both share is in connection.hpp.
#include "connection.hpp"

#include "../identity_x509.hpp"

namespace hetcast::net {
namespace tcp_detail {

asio::ssl::context make_tls_context(const TransportConfig& config) {
    const Identity& id = config.identity;
    if (id.key_pem.empty() || id.cert_pem.empty() || id.ca_pem.empty()) {
        throw Error("no identity: a key, a certificate and the cluster CA are needed (hetcast keys issue)");
    }
    asio::ssl::context ctx(asio::ssl::context::tls);
    SSL_CTX* native = ctx.native_handle();
    std::error_code ec;
    if (SSL_CTX_set_min_proto_version(native, TLS1_3_VERSION) != 1 ||
        SSL_CTX_set_ciphersuites(native, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256") != 1) {
        throw Error("this OpenSSL cannot do TLS 1.3");
    }
    // No resumption: every connection proves its certificate again (and a revoked one
    // cannot come back on a ticket).
    SSL_CTX_set_num_tickets(native, 0);
    SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
    ctx.set_options(asio::ssl::context::no_compression | SSL_OP_NO_TICKET, ec);
    if (!ec) ctx.use_certificate(asio::buffer(id.cert_pem), asio::ssl::context::pem, ec);
    if (!ec) ctx.use_private_key(asio::buffer(id.key_pem), asio::ssl::context::pem, ec);
    if (!ec) ctx.add_certificate_authority(asio::buffer(id.ca_pem), ec);
    if (!ec) ctx.set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert, ec);
    if (ec) throw Error("cannot use this identity for TLS: " + ec.message());
    if (SSL_CTX_check_private_key(native) != 1) throw Error("the identity's key does not match its certificate");
    return ctx;
}

TcpConnection::TcpConnection(TcpTransport& owner, tcp::socket socket, asio::ssl::context& tls)
    : owner_(owner), stream_(std::move(socket), tls), wake_(stream_.get_executor()), pace_(stream_.get_executor()),
      data_(stream_.get_executor()), stall_(stream_.get_executor()), idle_(stream_.get_executor()) {
    std::error_code ec;
    sock().set_option(tcp::no_delay(true), ec);
    set_liveness_options(sock().native_handle(), owner_.config().stall);
    // Best effort: start() found the kernel accepts it.
    if (const auto& cc = owner_.config().congestion; !cc.empty()) (void)set_congestion(sock().native_handle(), cc);
}

void TcpConnection::begin_write() {
    writing_ = true;
    progress_ = Clock::now();
    outq_ = unacked();
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
        if (const int q = self->unacked(); q >= 0 && q != self->outq_) {
            self->outq_ = q;
            self->progress_ = Clock::now();
        }
        if (Clock::now() - self->progress_ >= stall) {
            self->shutdown(self->stall_reason());
        } else {
            self->arm_stall();
        }
    });
}

void TcpConnection::arm_idle(Clock::time_point at) {
    idle_.expires_at(at);
    idle_.async_wait([w = weak_from_this()](std::error_code ec) {
        const auto self = w.lock();
        if (!self || ec || self->closed_ || self->closing_) return;
        const auto idle = self->owner_.config().idle;
        const auto now = Clock::now();
        const auto last = std::max({self->received_at(), self->sent_at_, self->progress_});
        if (now - last < idle) return self->arm_idle(last + idle);
        const auto& busy = self->owner_.callbacks().busy;
        if (self->writing_ || !self->queue_.empty() || (busy && busy(self))) return self->arm_idle(now + idle);
        const std::string why = "nothing for " + duration_text(std::chrono::duration_cast<std::chrono::milliseconds>(idle));
        self->owner_.log(LogLevel::info, "closing an idle connection with '" + self->peer() + "': " + why);
        self->close(why);
    });
}

std::string TcpConnection::stall_reason() const {
    return "no progress sending for " + duration_text(owner_.config().stall) + ": the peer takes no data";
}

asio::awaitable<std::error_code> TcpConnection::write_socket(std::vector<asio::const_buffer> buffers) {
    if (buffers.size() > 1) {
        joined_.resize(asio::buffer_size(buffers));
        asio::buffer_copy(asio::buffer(joined_), buffers);
        buffers = {asio::buffer(joined_)};
    }
    begin_write();
    // Called after every partial write: each one is progress.
    const auto progress = [this](const std::error_code& e, std::size_t n) -> std::size_t {
        progress_ = Clock::now();
        return asio::transfer_all()(e, n);
    };
    std::error_code ec;
    co_await asio::async_write(stream_, buffers, progress, asio::redirect_error(asio::use_awaitable, ec));
    end_write();
    sent_at_ = Clock::now();
    co_return ec;
}

/// The server's verdict after TLS is one short frame.
constexpr std::size_t max_verdict_frame = 4096;

asio::awaitable<std::pair<std::error_code, Frame>> TcpConnection::read_frame(std::size_t max_payload) {
    std::array<std::byte, header_size> hdr;
    std::error_code ec = co_await read_all(asio::buffer(hdr));
    if (ec) co_return std::pair{ec, Frame{}};
    const Decoded d = decode_header(hdr, max_payload);
    if (d.status != Decoded::Status::complete) {
        owner_.log(LogLevel::warn, "closing the connection with " + (peer().empty() ? std::string("a peer") : "'" + peer() + "'") + ": " +
                   d.error);
        shutdown(d.error);
        co_return std::pair{std::make_error_code(std::errc::protocol_error), Frame{}};
    }
    Frame f{d.header, std::vector<std::byte>(d.header.length), Clock::now()};
    if (!f.payload.empty()) {
        ec = co_await read_all(asio::buffer(f.payload));
    }
    co_return std::pair{ec, std::move(f)};
}

asio::awaitable<std::error_code> TcpConnection::read_all(asio::mutable_buffer buffers) {
    const auto progress = [this](const std::error_code& e, std::size_t n) -> std::size_t {
        if (n > 0) received_ = Clock::now().time_since_epoch().count();
        return asio::transfer_all()(e, n);
    };
    std::error_code ec;
    co_await asio::async_read(stream_, buffers, progress, asio::redirect_error(asio::use_awaitable, ec));
    co_return ec;
}

std::string TcpConnection::refuse(bool server, const std::string& why) {
    owner_.log(LogLevel::warn, (server ? "refused connection from " : "handshake with ") +
               (peer().empty() ? std::string("a peer") : "'" + peer() + "'") + ": " + why);
    shutdown(why);
    return why;
}

/// An OpenSSL error in words a user can act on.
std::string tls_error(const std::error_code& ec) {
    std::string m = ec.message();
    if (ec.category() == asio::error::get_ssl_category()) {
        if (m.find("certificate verify failed") != std::string::npos) {
            return "the peer's certificate was not issued by this cluster's CA (" + m + ")";
        }
        if (m.find("alert") != std::string::npos) return "the peer refused this side's identity (" + m + ")";
        if (m.find("wrong version number") != std::string::npos || m.find("packet length too long") != std::string::npos) {
            return "the peer does not speak TLS (an older hetcast?) (" + m + ")";
        }
    }
    return m;
}

asio::awaitable<std::string> TcpConnection::handshake(bool server, std::string expect) {
    // The socket is closed if the exchange takes longer than the timeout; the pending
    // operation then fails and the handshake is refused.
    auto timer = std::make_shared<asio::steady_timer>(stream_.get_executor());
    auto expired = std::make_shared<bool>(false);
    timer->expires_after(owner_.config().timeout);
    timer->async_wait([self = shared_from_this(), expired](std::error_code ec) {
        if (!ec) {
            *expired = true;
            std::error_code ignore;
            self->close_socket(ignore);
        }
    });
    std::error_code ec;
    const auto side = server ? asio::ssl::stream_base::server : asio::ssl::stream_base::client;
    co_await stream_.async_handshake(side, asio::redirect_error(asio::use_awaitable, ec));
    std::string why;
    if (ec) {
        // The first error OpenSSL queued is often not the reason; a failed verification is.
        const long verify = SSL_get_verify_result(stream_.native_handle());
        const bool dated = verify == X509_V_ERR_CERT_HAS_EXPIRED || verify == X509_V_ERR_CERT_NOT_YET_VALID;
        why = verify == X509_V_OK ? "TLS handshake failed: " + tls_error(ec)
              : dated ? std::string("TLS handshake failed: the peer's certificate is not valid now (") +
                            X509_verify_cert_error_string(verify) + "; the operator issues a new one: hetcast keys issue)"
                      : std::string("TLS handshake failed: the peer's certificate was not issued by this cluster's CA (") +
                            X509_verify_cert_error_string(verify) + ")";
    } else {
        why = check_peer(server, expect);
        // The client's certificate is checked only after its side of TLS is done: the
        // server says its verdict in a frame, so a refused client hears why.
        if (server) {
            why = co_await tell_verdict(why);
        } else if (why.empty()) {
            why = co_await await_verdict();
        }
    }
    timer->cancel();
    if (*expired) why = "no handshake within " + std::to_string(owner_.config().timeout.count()) + " ms";
    co_return why.empty() ? why : refuse(server, why);
}

std::string TcpConnection::check_peer(bool server, const std::string& expect) {
    X509* cert = SSL_get0_peer_certificate(stream_.native_handle());
    if (!cert) return "the peer showed no certificate";
    try {
        identity_ = describe_x509(cert, "a certificate");
    } catch (const std::exception& e) {
        return e.what();
    }
    if (!expect.empty() && identity_.name != expect) {
        return "expected '" + expect + "' but the certificate there names '" + identity_.name + "'";
    }
    if (const auto& admit = owner_.callbacks().admit) {
        if (std::string why = admit(identity_); !why.empty()) return why;
    }
    if (!server) return {};
    inbound_ = true;
    if (const std::size_t most = owner_.config().connections_per_peer; most > 0) {
        if (const std::size_t n = owner_.inbound_from(identity_.name); n >= most) {
            return "'" + identity_.name + "' has " + std::to_string(n) + " connections open here, the most one peer may have";
        }
    }
    if (const auto& inbound = owner_.callbacks().admit_inbound) return inbound(identity_);
    return {};
}

asio::awaitable<std::string> TcpConnection::tell_verdict(const std::string& why) {
    const auto wire = why.empty() ? encode(FrameType::auth_ok, 0, 0, "") : encode(FrameType::error, 0, 0, why);
    std::error_code ec;
    co_await asio::async_write(stream_, asio::buffer(wire), asio::redirect_error(asio::use_awaitable, ec));
    if (why.empty() && ec) co_return "handshake write failed: " + tls_error(ec);
    co_return why;
}

asio::awaitable<std::string> TcpConnection::await_verdict() {
    auto got = co_await read_frame(max_verdict_frame);
    if (got.first) co_return "no answer after TLS: " + tls_error(got.first);
    const Frame& reply = got.second;
    if (reply.header.type == FrameType::error) co_return "refused: " + std::string(as_text(reply.payload));
    if (reply.header.type != FrameType::auth_ok) co_return std::string("expected the server's verdict");
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
            } else if (ec.category() == asio::error::get_ssl_category()) {
                // A record that fails its authentication tag: bytes changed or written in on
                // the way. Nothing of it was delivered.
                const std::string why = "a TLS record failed its check (" + ec.message() + "): tampered with on the way?";
                owner_.log(LogLevel::warn, "closing the connection with '" + peer() + "': " + why);
                shutdown(why);
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
