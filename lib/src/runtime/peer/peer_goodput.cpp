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
#include "../job/job_state.hpp"
#include "../wire/frames.hpp"
#include "peer_goodput.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameHeader;
using net::FrameType;

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

void Bulk::on_frame(const ConnectionPtr& c, const Frame& f) {
    if (f.header.flags == net::bulk_start) return start(c, f);
    const auto kernel = c->kernel_received();
    transfers_.on_data(c, f.header.flags, f.payload.size(), now_s(), kernel);
}

void Bulk::start(const ConnectionPtr& c, const Frame& f) {
    const json p = json::parse(net::as_text(f.payload), nullptr, false);
    const double seconds = p.is_object() ? p.value("seconds", 0.0) : 0.0;
    const std::uint64_t bytes = p.is_object() ? p.value("max_bytes", std::uint64_t{0}) : 0;
    if (!(seconds > 0 && seconds <= max_goodput_seconds) || bytes == 0) {
        throw InputError("a bulk transfer needs 0 < seconds <= " + seconds_text(max_goodput_seconds) + " and max_bytes");
    }
    if (core_.stopping) throw Error("this peer is stopping");
    transfers_.sending(c.get());
    if (!core_.spawn(core_.slow, [this, c, seconds, bytes] { pump(c, seconds, std::min(bytes, bulk_max_bytes)); })) {
        throw Error("busy: '" + core_.cfg.name + "' has too many requests waiting");
    }
}

void Bulk::pump(const ConnectionPtr& c, double seconds, std::uint64_t max_bytes) {
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
                       core_.cfg.connect_timeout;
    const auto open = [&] { return transfers_.still_sending(c.get()); };
    const auto wait = [&](auto pred) {
        std::unique_lock lock(flow->mu);
        while (!pred() && !flow->broken && !core_.stopping && Clock::now() < until) {
            flow->cv.wait_for(lock, std::chrono::milliseconds(20));
            if (!open()) return false;
        }
        return !flow->broken && !core_.stopping && Clock::now() < until;
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
    if (core_.stopping) {
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
    if (!(seconds > 0 && seconds <= max_goodput_seconds && warmup >= 0 && warmup < seconds) || max_bytes == 0) {
        throw InputError("goodput: 0 <= warmup < seconds <= " + seconds_text(max_goodput_seconds) +
                         ", and some bytes");
    }
}

/// A connection bulk_connect() made and no measurement took is closed after this.
constexpr double bulk_ready_for = 60;

}  // namespace

std::uint64_t Bulk::connect(const std::string& member) {
    const auto m = members_.find(member);
    if (!m) throw Error("'" + member + "' is not a known member");
    transfers_.close_stale(now_s(), bulk_ready_for);
    ConnectionPtr c = core_.transport->connect(m->host, m->port, member);
    if (c->peer() != member) {
        c->close();
        throw Error("the member at " + m->host + ":" + std::to_string(m->port) + " is '" + c->peer() + "', not '" +
                    member + "'");
    }
    // Known as a bulk connection from now on: its closing concerns no job.
    return transfers_.dialled(c, now_s());
}

Goodput Bulk::measure(const std::string& member, double seconds, double warmup, std::uint64_t max_bytes) {
    check_goodput(seconds, warmup, max_bytes);
    return measure(connect(member), seconds, warmup, max_bytes);
}

Goodput Bulk::measure(std::uint64_t connection, double seconds, double warmup, std::uint64_t max_bytes) {
    check_goodput(seconds, warmup, max_bytes);
    ConnectionPtr c;
    std::future<Goodput> got = transfers_.measure(connection, seconds, warmup, c);
    struct Closer {
        ConnectionPtr& c;
        ~Closer() { c->close(); }
    } closer{c};
    const json start{{"seconds", seconds}, {"max_bytes", max_bytes}};
    c->send(Frame{FrameHeader{FrameType::bulk, net::bulk_start, 0, 0, 0}, bytes_of(start.dump())});
    const auto bound = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(seconds)) +
                       core_.cfg.connect_timeout;
    if (got.wait_for(bound) != std::future_status::ready) {
        throw Error("no goodput from '" + c->peer() + "' within " + std::to_string(bound.count()) + " ms");
    }
    return got.get();
}

}  // namespace hetcast::detail
