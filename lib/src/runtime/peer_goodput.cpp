// Goodput measurements (the probe, docs/protocol.md "Probing"): a bulk transfer on a
// connection of its own, counted by the receiver, which answers on the same connection.
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
/// A transfer whose frames still come this long after its window is closed.
constexpr double bulk_overrun = 30;

}  // namespace

bool Peer::Impl::forget_bulk(const net::Connection* c) {
    std::lock_guard lock(bulk_mu);
    return bulk_in.erase(c) + bulk_out.erase(c) > 0;
}

void Peer::Impl::on_bulk(const ConnectionPtr& c, const Frame& f) {
    const double now = now_s();
    std::lock_guard lock(bulk_mu);
    if (f.header.flags == net::bulk_start) {
        const json p = json::parse(net::as_text(f.payload), nullptr, false);
        const double seconds = p.is_object() ? p.value("seconds", 0.0) : 0.0;
        const double warmup = p.is_object() ? p.value("warmup", -1.0) : -1.0;
        if (!(seconds > 0 && seconds <= max_goodput_seconds && warmup >= 0 && warmup < seconds)) {
            throw InputError("a bulk transfer needs 0 < warmup < seconds <= " +
                             std::to_string(static_cast<int>(max_goodput_seconds)));
        }
        bulk_in[c.get()] = BulkIn{f.header.message, seconds, warmup, now, 0, now, {}, {}};
        return;
    }
    const auto it = bulk_in.find(c.get());
    if (it == bulk_in.end()) throw InputError("bulk data before a bulk start");
    BulkIn& b = it->second;
    if (f.header.flags == net::bulk_end) {
        // The window's edges when frames arrived inside it; else everything since the start.
        json a{{"ok", true}, {"bytes", b.bytes}};
        if (b.from && b.to && b.to->first > b.from->first) {
            a["seconds"] = b.to->first - b.from->first;
            a["goodput"] = static_cast<double>(b.to->second - b.from->second) / (b.to->first - b.from->first);
        } else if (b.bytes > 0 && b.last > b.start) {
            a["seconds"] = b.last - b.start;
            a["goodput"] = static_cast<double>(b.bytes) / (b.last - b.start);
        } else {
            a = {{"ok", false}, {"error", "no data arrived"}};
        }
        c->send(make_frame(FrameType::response, 0, b.seq, a.dump()));
        return;
    }
    b.bytes += f.payload.size();
    b.last = now;
    const double t = now - b.start;
    if (t <= b.warmup || (t <= b.seconds && !b.from)) {
        b.from = std::pair{now, b.bytes};
    } else if (t <= b.seconds) {
        b.to = std::pair{now, b.bytes};
    } else if (t > b.seconds + bulk_overrun) {
        throw InputError("a bulk transfer still sending " + std::to_string(static_cast<int>(bulk_overrun)) +
                         " s after its window");
    }
}

Peer::Goodput Peer::goodput(const std::string& member, double seconds, double warmup, std::uint64_t max_bytes) {
    Impl& d = *impl_;
    if (!(seconds > 0 && seconds <= max_goodput_seconds && warmup >= 0 && warmup < seconds)) {
        throw InputError("goodput: 0 < warmup < seconds <= " + std::to_string(static_cast<int>(max_goodput_seconds)));
    }
    const auto m = d.address(member, nullptr);
    if (!m) throw Error("'" + member + "' is not a known member");
    ConnectionPtr c = d.transport->connect(m->host, m->port);
    // Closing it forgets it (on_close), so no job takes its closing for a lost member.
    {
        std::lock_guard lock(d.bulk_mu);
        d.bulk_out.insert(c.get());
    }
    struct Closer {
        ConnectionPtr& c;
        ~Closer() { c->close(); }
    } closer{c};
    if (c->peer() != member) {
        throw Error("the member at " + m->host + ":" + std::to_string(m->port) + " is '" + c->peer() + "', not '" +
                    member + "'");
    }
    std::future<json> answer;
    std::uint32_t seq = 0;
    {
        std::lock_guard lock(d.mu);
        seq = ++d.call_seq;
        answer = d.calls[seq].get_future();
    }
    const auto forget = [&] {
        std::lock_guard lock(d.mu);
        d.calls.erase(seq);
    };
    const json start{{"seconds", seconds}, {"warmup", warmup}};
    c->send(Frame{FrameHeader{FrameType::bulk, net::bulk_start, 0, seq, 0}, bytes_of(start.dump())});

    // The sender stops on its own clock; what is still queued in the socket arrives after,
    // so the receiver's window (which starts a little later) is covered to its end.
    struct Flow {
        std::mutex mu;
        std::condition_variable cv;
        int queued = 0;
        bool broken = false;
    };
    auto flow = std::make_shared<Flow>();
    const std::vector<std::byte> filler(bulk_chunk);
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    std::uint64_t sent = 0;
    while (sent < max_bytes && !d.stopping) {
        {
            std::unique_lock lock(flow->mu);
            if (!flow->cv.wait_until(lock, until, [&] { return flow->queued < bulk_in_flight || flow->broken; })) break;
            if (flow->broken) break;
            ++flow->queued;
        }
        if (Clock::now() >= until) break;
        c->send(Frame{FrameHeader{FrameType::bulk, net::bulk_data, 0, seq, 0}, filler}, [flow](std::error_code ec) {
            std::lock_guard lock(flow->mu);
            --flow->queued;
            flow->broken = flow->broken || static_cast<bool>(ec);
            flow->cv.notify_all();
        });
        sent += filler.size();
    }
    {
        std::lock_guard lock(flow->mu);
        if (flow->broken) {
            forget();
            throw Error("the connection to '" + member + "' broke during a bulk transfer");
        }
    }
    c->send(Frame{FrameHeader{FrameType::bulk, net::bulk_end, 0, seq, 0}, {}});
    if (answer.wait_for(d.cfg.connect_timeout) != std::future_status::ready) {
        forget();
        throw Error("'" + member + "' did not answer a bulk transfer within " +
                    std::to_string(d.cfg.connect_timeout.count()) + " ms of its end");
    }
    json a;
    try {
        a = answer.get();
    } catch (const std::future_error&) {
        throw Error("the peer stopped before '" + member + "' answered a bulk transfer");
    }
    if (!a.value("ok", false)) throw Error("'" + member + "': " + a.value("error", std::string("no goodput")));
    Goodput g;
    g.rate = a.value("goodput", 0.0);
    g.bytes = a.value("bytes", std::uint64_t{0});
    g.seconds = a.value("seconds", 0.0);
    if (!(g.rate > 0)) throw Error("'" + member + "' measured no goodput");
    return g;
}

}  // namespace hetcast
