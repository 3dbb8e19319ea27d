// The metrics endpoint's HTTP: read a request head, answer GET PATH with the text, close.
#include "hetcast/net/text_endpoint.hpp"

#include <asio.hpp>

#include <chrono>
#include <string_view>
#include <thread>

#include "hetcast/error.hpp"

namespace hetcast::net {
namespace {

using asio::ip::tcp;
constexpr std::size_t max_head = 8192;
constexpr auto request_time = std::chrono::seconds(5);

std::string response(int code, std::string_view reason, std::string_view type, const std::string& body) {
    return "HTTP/1.1 " + std::to_string(code) + " " + std::string(reason) + "\r\nContent-Type: " + std::string(type) +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace

struct TextEndpoint::Impl {
    std::string host, path, content_type;
    std::uint16_t port = 0;
    std::function<std::string()> text;
    LogFn log;
    asio::io_context io;
    tcp::acceptor acceptor{io};
    std::thread thread;

    /// What the request head asks for, answered.
    std::string answer(std::string_view head) {
        const auto line_end = head.find("\r\n");
        const std::string_view line = head.substr(0, line_end);
        const auto sp1 = line.find(' ');
        const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
        if (sp2 == std::string_view::npos) return response(400, "Bad Request", "text/plain", "bad request\n");
        const std::string_view method = line.substr(0, sp1);
        std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
        if (const auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
        if (method != "GET" && method != "HEAD") return response(405, "Method Not Allowed", "text/plain", "GET only\n");
        if (target != path) return response(404, "Not Found", "text/plain", "try " + path + "\n");
        std::string body;
        try {
            body = text();
        } catch (const std::exception& e) {
            return response(500, "Internal Server Error", "text/plain", std::string(e.what()) + "\n");
        }
        std::string r = response(200, "OK", content_type, body);
        if (method == "HEAD") r.resize(r.size() - body.size());
        return r;
    }

    asio::awaitable<void> serve(tcp::socket socket) {
        asio::steady_timer deadline(io);
        deadline.expires_after(request_time);
        deadline.async_wait([&socket](std::error_code ec) {
            if (!ec) {
                std::error_code ignored;
                socket.close(ignored);
            }
        });
        std::string head;
        std::error_code ec;
        const std::size_t n = co_await asio::async_read_until(socket, asio::dynamic_buffer(head, max_head), "\r\n\r\n",
                                                               asio::redirect_error(asio::use_awaitable, ec));
        std::string out = ec ? response(400, "Bad Request", "text/plain", "bad request\n") : answer(std::string_view(head).substr(0, n));
        if (socket.is_open()) {
            co_await asio::async_write(socket, asio::buffer(out), asio::redirect_error(asio::use_awaitable, ec));
            socket.shutdown(tcp::socket::shutdown_both, ec);
        }
        deadline.cancel();
    }

    asio::awaitable<void> accept_loop() {
        for (;;) {
            std::error_code ec;
            tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
            if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
            if (ec) {
                if (log) log(LogLevel::warn, "metrics: accept failed: " + ec.message());
                continue;
            }
            asio::co_spawn(io, serve(std::move(socket)), asio::detached);
        }
    }
};

TextEndpoint::TextEndpoint(std::string host, std::uint16_t port, std::string path, std::string content_type,
                           std::function<std::string()> text, LogFn log)
    : impl_(std::make_unique<Impl>()) {
    impl_->host = std::move(host);
    impl_->port = port;
    impl_->path = std::move(path);
    impl_->content_type = std::move(content_type);
    impl_->text = std::move(text);
    impl_->log = std::move(log);
}

TextEndpoint::~TextEndpoint() { stop(); }

void TextEndpoint::start() {
    Impl& d = *impl_;
    std::error_code ec;
    const auto addr = asio::ip::make_address(d.host, ec);
    if (ec) throw InputError("metrics: '" + d.host + "' is not an IP address");
    const tcp::endpoint ep(addr, d.port);
    d.acceptor.open(ep.protocol(), ec);
    if (!ec) d.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) d.acceptor.bind(ep, ec);
    if (!ec) d.acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw Error("metrics: cannot listen on " + d.host + ":" + std::to_string(d.port) + ": " + ec.message());
    d.port = d.acceptor.local_endpoint().port();
    asio::co_spawn(d.io, d.accept_loop(), asio::detached);
    d.thread = std::thread([&d] { d.io.run(); });
}

void TextEndpoint::stop() {
    Impl& d = *impl_;
    if (!d.thread.joinable()) return;
    asio::post(d.io, [&d] {
        std::error_code ec;
        d.acceptor.close(ec);
        d.io.stop();
    });
    d.thread.join();
}

std::uint16_t TextEndpoint::port() const { return impl_->port; }

}  // namespace hetcast::net
