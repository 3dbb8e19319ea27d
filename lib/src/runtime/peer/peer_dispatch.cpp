// The assembly's own work: what the transport calls (a connection opens or closes, a
// frame arrives, is a connection idle) handed to the parts that hold the state.
#include <algorithm>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "peer_impl.hpp"
#include "peer_relay_frames.hpp"
#include "../wire/frames.hpp"

namespace hetcast {
using namespace detail;

void Peer::Impl::on_open(const ConnectionPtr& c) const {
    log(LogLevel::debug, "connected with '" + c->peer() + "'");
    emulation.shape(c);
}

void Peer::Impl::on_close(const ConnectionPtr& c, const std::string& why) {
    streams.closed(c.get(), why);
    if (bulk.closed(c.get())) return;
    const std::string& who = c->peer();
    const std::optional<Lane> lane = connections.lane_closed(c.get());
    if (lane && !lane->in) return;  // the sends on it fail on their own
    connections.directory().closed(who, c);
    participant.closed(c, lane, why);
    if (!stopping && !who.empty()) {
        log(LogLevel::debug, std::string(lane ? "data lane of job " + std::to_string(lane->job) : std::string("connection")) +
                                 " with '" + who + "' closed: " + why);
    }
    if (!lane) {
        relays.closed(c, why);
        tries.closed(c, why);
    }
}

void Peer::Impl::on_frame(const ConnectionPtr& c, Frame&& f) {
    connections.hear(c->peer());
    if (f.header.type == FrameType::data) stats.bytes_received.fetch_add(f.payload.size(), std::memory_order_relaxed);
    try {
        if ((f.header.type == FrameType::data || f.header.type == FrameType::data_end) && streams.route(c, f)) return;
        switch (f.header.type) {
            case FrameType::job_relay:
                if (!relays.on_relay(c, f)) return;
                [[fallthrough]];
            case FrameType::job_plan:
                // Preparing a job resolves its origins (hashing a file, making a payload).
                if (!spawn(slow, [this, c, f] {
                        try {
                            if (f.header.type == FrameType::job_relay) {
                                const std::string_view text =
                                    check_relayed(f, cfg.name, c->peer(), cfg.identity.ca_pem, admission.revocations().all(),
                                                  static_cast<std::int64_t>(std::time(nullptr)));
                                setup.on_plan(c, f.header.job, text, true);
                            } else {
                                setup.on_plan(c, f.header.job, net::as_text(f.payload), false);
                            }
                        } catch (const std::exception& e) {
                            log(LogLevel::warn, "closing the connection with '" + c->peer() + "': " + e.what());
                            c->close(e.what());
                        }
                    })) {
                    c->send(json_frame(FrameType::job_report, f.header.job, 0,
                                       to_json(JobEvent{JobEvent::Kind::failed, now_s(), 0, 0,
                                                        "busy: '" + cfg.name + "' has too many jobs being set up"})));
                }
                return;
            case FrameType::job_start:
                relays.on_down(c, f);
                return arrivals.on_start(c, f);
            case FrameType::data: return arrivals.on_data(c, std::move(f));
            case FrameType::data_end: return arrivals.on_data_end(c, f);
            case FrameType::job_report:
                if (relays.on_up(c, f)) return;
                return tries.on_event(c, f);
            case FrameType::job_reports:
                if (relays.on_up(c, f)) return;
                return tries.on_events(c, f);
            case FrameType::job_cancel:
                relays.on_down(c, f);
                return arrivals.on_cancel(c, f);
            case FrameType::job_pace: return arrivals.on_pace(c, f);
            case FrameType::ping: return Calls::on_ping(c, f);
            case FrameType::pong: return calls.on_pong(f);
            case FrameType::request: return requests.on_request(c, f);
            case FrameType::response: return calls.on_response(f);
            case FrameType::bulk: return bulk.on_frame(c, f);
            case FrameType::piece_request: return pieces.on_request(c, f, participant.find(f.header.job));
            case FrameType::piece_data: return pieces.on_data(c, f, participant.find(f.header.job));
            default: c->close(std::string("unexpected ") + net::to_string(f.header.type) + " frame");
        }
    } catch (const std::exception& e) {
        // What a peer sent never takes the peer down: the connection goes, the peer stays.
        log(LogLevel::warn, "closing the connection with '" + c->peer() + "': " + e.what());
        c->close(e.what());
    }
}

bool Peer::Impl::busy(const ConnectionPtr& c) {
    if (admission.serving(c.get())) return true;
    // On the I/O thread: never wait for a lock a thread may hold while it waits on I/O; a
    // connection whose state cannot be seen now counts as busy, and is looked at again later.
    if (bulk.busy_or_locked(c.get())) return true;
    if (connections.carries(c.get()) || calls.waiting()) return true;
    if (participant.busy_with(c) || relays.busy_with(c)) return true;
    return tries.busy_with(c);
}


}  // namespace hetcast
