#include "hetcast/runtime/client.hpp"

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <unistd.h>

#include "hetcast/error.hpp"
#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/order.hpp"

#include <ctime>

namespace hetcast {
using json = nlohmann::json;

namespace {
/// Heartbeats in a row a daemon may miss before a client takes it for gone.
constexpr int missed_heartbeats = 6;
}  // namespace

struct Client::Impl {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<json> responses;
    std::string closed;
    std::unique_ptr<net::Transport> transport;
    net::ConnectionPtr conn;
    std::string where;
    net::Identity identity;
    std::string expect;
};

Client::Client(const std::string& host, std::uint16_t port, const net::Identity& identity,
               std::chrono::milliseconds timeout, const std::string& expect)
    : impl_(std::make_unique<Impl>()) {
    Impl& d = *impl_;
    d.where = host + ":" + std::to_string(port);
    d.identity = identity;
    d.expect = expect;
    net::TransportConfig tc;
    tc.identity = identity;
    tc.host = "127.0.0.1";
    tc.port = 0;
    tc.timeout = timeout;
    net::TransportCallbacks cb;
    cb.on_frame = [&d](const net::ConnectionPtr&, net::Frame&& f) {
        if (f.header.type != net::FrameType::response) return;
        json j = json::parse(net::as_text(f.payload), nullptr, false);
        std::lock_guard lock(d.mu);
        d.responses.push_back(j.is_discarded() ? json{{"ok", false}, {"error", "a malformed response"}} : std::move(j));
        d.cv.notify_all();
    };
    cb.on_close = [&d](const net::ConnectionPtr&, const std::string& why) {
        std::lock_guard lock(d.mu);
        d.closed = why.empty() ? "closed" : why;
        d.cv.notify_all();
    };
    d.transport = net::make_tcp_transport(tc, cb);
    d.transport->start();
    try {
        d.conn = d.transport->connect(host, port, expect);
    } catch (const Unreachable&) {
        throw;
    } catch (const Error& e) {
        throw Unreachable(e.what());
    }
    // Reached by address alone (--from HOST:PORT): orders are given to the member its
    // certificate names.
    if (d.expect.empty()) d.expect = d.conn->peer();
}

const std::string& Client::name() const { return impl_->expect; }

void Client::limit_rate(std::uint64_t bytes_per_second) {
    impl_->conn->set_shape({0, static_cast<double>(bytes_per_second), {}});
}

const std::string& Client::address() const { return impl_->where; }

void Client::upload(std::uint64_t id, std::shared_ptr<const net::MessageBody> body, std::size_t chunk,
                    std::function<void(std::error_code)> done) {
    impl_->conn->send_stream(id, 0, std::move(body), chunk, std::move(done));
}

Client::~Client() {
    if (impl_->transport) impl_->transport->stop();
}

json Client::call(const json& request, const std::function<void(const json&)>& progress,
                  std::chrono::milliseconds idle) {
    Impl& d = *impl_;
    // An operator signs what it asks, so that the daemon can show it to the members it
    // passes the request on to (runtime/order.hpp).
    // Arguments from the command line may be any bytes: those that are not UTF-8 go as U+FFFD.
    const json sent = net::describe(d.identity).role == net::Role::operator_ && !d.expect.empty()
                          ? sign_order(d.identity, request, d.expect, static_cast<std::int64_t>(std::time(nullptr)))
                          : request;
    const std::string text = sent.dump(-1, ' ', false, json::error_handler_t::replace);
    d.conn->send(net::Frame{net::FrameHeader{net::FrameType::request, 0, 0, 1, 0},
                            {reinterpret_cast<const std::byte*>(text.data()),
                             reinterpret_cast<const std::byte*>(text.data()) + text.size()}});
    std::unique_lock lock(d.mu);
    while (true) {
        if (!d.cv.wait_for(lock, idle, [&] { return !d.responses.empty() || !d.closed.empty(); })) {
            const auto ms = idle.count();
            throw Unreachable("the daemon at " + d.where + " sent nothing for " +
                              (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms"));
        }
        if (d.responses.empty()) throw Unreachable("lost the daemon at " + d.where + ": " + d.closed);
        json r = std::move(d.responses.front());
        d.responses.pop_front();
        if (const auto p = r.find("progress"); p != r.end() && p->is_object() && p->contains("heartbeat")) {
            // A daemon that says how often it beats is given up on after missing several.
            const double every = p->value("heartbeat", 0.0);
            if (every > 0 && every < 3600) {
                idle = std::chrono::milliseconds(static_cast<std::int64_t>(every * 1000 * missed_heartbeats));
            }
            continue;
        }
        if (r.contains("progress")) {
            if (progress) {
                lock.unlock();
                progress(r["progress"]);
                lock.lock();
            }
            continue;
        }
        return r;
    }
}

}  // namespace hetcast
