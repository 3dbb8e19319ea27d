// Goodput measurements (the probe, docs/protocol.md "Probing"): the receiver dials the
// sender on a connection of its own and asks for a bulk transfer; the sender pumps it.
// What arrives is counted by bulk.hpp's BulkTransfers, which closes the connection when
// the window is over.
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "hetcast/error.hpp"
#include "peer_impl.hpp"

namespace hetcast {
using namespace detail;

namespace {

/// Bytes per bulk frame: small enough that a 20 Mbit/s link delivers a dozen in a 0.2 s
/// window, so that the receiver's arrival times bound the window closely.
constexpr std::size_t bulk_chunk = std::size_t{32} << 10;
/// Frames handed to the transport and not yet written: the socket's buffer does the rest.
constexpr int bulk_in_flight = 4;
/// The most a sender sends for one request, whatever it asks (about 10 s at 6 Gbit/s).
constexpr std::uint64_t bulk_max_bytes = std::uint64_t{8} << 30;

std::string seconds_text(double s) { return std::to_string(static_cast<int>(s)); }

}  // namespace

void Peer::Impl::on_bulk(const ConnectionPtr& c, const Frame& f) {
    if (f.header.flags == net::bulk_start) return start_bulk(c, f);
    bulk.on_data(c, f.header.flags, f.payload.size(), now_s());
}

void Peer::Impl::start_bulk(const ConnectionPtr& c, const Frame& f) {
    const json p = json::parse(net::as_text(f.payload), nullptr, false);
    const double seconds = p.is_object() ? p.value("seconds", 0.0) : 0.0;
    const std::uint64_t bytes = p.is_object() ? p.value("max_bytes", std::uint64_t{0}) : 0;
    if (!(seconds > 0 && seconds <= max_goodput_seconds) || bytes == 0) {
        throw InputError("a bulk transfer needs 0 < seconds <= " + seconds_text(max_goodput_seconds) + " and max_bytes");
    }
    std::lock_guard lock(mu);
    if (stopping) throw Error("this peer is stopping");
    bulk.sending(c.get());
    if (!spawn(slow, [this, c, seconds, bytes] { pump(c, seconds, std::min(bytes, bulk_max_bytes)); })) {
        throw Error("busy: '" + cfg.name + "' has too many requests waiting");
    }
}

void Peer::Impl::pump(const ConnectionPtr& c, double seconds, std::uint64_t max_bytes) {
    struct Flow {
        std::mutex mu;
        std::condition_variable cv;
        int queued = 0;
        bool broken = false;
    };
    auto flow = std::make_shared<Flow>();
    // The receiver closes the connection when its window is over; this bounds one that
    // vanished without closing it.
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)) +
                       cfg.connect_timeout;
    const auto open = [&] { return bulk.still_sending(c.get()); };
    const auto wait = [&](auto pred) {
        std::unique_lock lock(flow->mu);
        while (!pred() && !flow->broken && !stopping && Clock::now() < until) {
            flow->cv.wait_for(lock, std::chrono::milliseconds(20));
            if (!open()) return false;
        }
        return !flow->broken && !stopping && Clock::now() < until;
    };
    const std::vector<std::byte> filler(bulk_chunk);
    std::uint64_t sent = 0;
    while (sent < max_bytes && wait([&] { return flow->queued < bulk_in_flight; })) {
        {
            std::lock_guard lock(flow->mu);
            ++flow->queued;
        }
        c->send(Frame{FrameHeader{FrameType::bulk, net::bulk_data, 0, 0, 0}, filler}, [flow](std::error_code ec) {
            std::lock_guard lock(flow->mu);
            --flow->queued;
            flow->broken = flow->broken || static_cast<bool>(ec);
            flow->cv.notify_all();
        });
        sent += filler.size();
    }
    // A member that stops mid-transfer must not look like one that ran out of bytes: the
    // receiver then measures a window that was cut short. It closes, and the receiver fails.
    if (stopping) {
        c->close("the member is stopping");
        return;
    }
    // Out of bytes: say so, and give the receiver until the bound to close.
    c->send(Frame{FrameHeader{FrameType::bulk, net::bulk_end, 0, 0, 0}, {}}, [flow](std::error_code ec) {
        std::lock_guard lock(flow->mu);
        flow->broken = flow->broken || static_cast<bool>(ec);
        flow->cv.notify_all();
    });
    (void)wait([] { return false; });
    c->close();
}

namespace {

void check_goodput(double seconds, double warmup, std::uint64_t max_bytes) {
    if (!(seconds > 0 && seconds <= Peer::max_goodput_seconds && warmup >= 0 && warmup < seconds) || max_bytes == 0) {
        throw InputError("goodput: 0 <= warmup < seconds <= " + seconds_text(Peer::max_goodput_seconds) +
                         ", and some bytes");
    }
}

/// A connection bulk_connect() made and no measurement took is closed after this.
constexpr double bulk_ready_for = 60;

}  // namespace

std::uint64_t Peer::bulk_connect(const std::string& member) {
    Impl& d = *impl_;
    const auto m = d.address(member, nullptr);
    if (!m) throw Error("'" + member + "' is not a known member");
    d.bulk.close_stale(now_s(), bulk_ready_for);
    ConnectionPtr c = d.transport->connect(m->host, m->port, member);
    if (c->peer() != member) {
        c->close();
        throw Error("the member at " + m->host + ":" + std::to_string(m->port) + " is '" + c->peer() + "', not '" +
                    member + "'");
    }
    // Known as a bulk connection from now on: its closing concerns no job.
    return d.bulk.dialled(c, now_s());
}

Peer::Goodput Peer::goodput_from(const std::string& member, double seconds, double warmup, std::uint64_t max_bytes) {
    check_goodput(seconds, warmup, max_bytes);
    return goodput_from(bulk_connect(member), seconds, warmup, max_bytes);
}

Peer::Goodput Peer::goodput_from(std::uint64_t connection, double seconds, double warmup, std::uint64_t max_bytes) {
    Impl& d = *impl_;
    check_goodput(seconds, warmup, max_bytes);
    ConnectionPtr c;
    std::future<Goodput> got = d.bulk.measure(connection, seconds, warmup, c);
    struct Closer {
        ConnectionPtr& c;
        ~Closer() { c->close(); }
    } closer{c};
    const json start{{"seconds", seconds}, {"max_bytes", max_bytes}};
    c->send(Frame{FrameHeader{FrameType::bulk, net::bulk_start, 0, 0, 0}, bytes_of(start.dump())});
    const auto bound = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(seconds)) +
                       d.cfg.connect_timeout;
    if (got.wait_for(bound) != std::future_status::ready) {
        throw Error("no goodput from '" + c->peer() + "' within " + std::to_string(bound.count()) + " ms");
    }
    return got.get();
}

}  // namespace hetcast
