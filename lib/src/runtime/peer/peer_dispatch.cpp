// The assembly's own work: what the transport calls (a connection opens or closes, a
// frame arrives, is a connection idle) handed to the parts that hold the state.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "peer_impl.hpp"

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
    std::vector<std::shared_ptr<Job>> js;
    std::vector<std::shared_ptr<Coord>> cs;
    std::vector<Parked> unparked;  // their temporaries go when this goes, outside the locks
    {
        std::lock_guard lock(mu);
        connections.directory().closed(who, c);
        for (auto& j : jobs.all()) {
            if (!lane || j->plan.job == lane->job) js.push_back(j);
        }
        if (!lane) {
            for (auto& [id, k] : coords.all()) cs.push_back(k);
            // What this member parked for a next try of a push coordinated over this
            // connection: that try cannot come now. Also when the job was already reaped (its feeder's lane
            // closed first and the job ended before this connection did): it is no longer
            // in `jobs` below, and its temporary file would stay for ParkedStore::keep_for.
            unparked = parked.drop_control(c.get());
        }
    }
    if (stopping || who.empty()) return;
    log(LogLevel::debug, std::string(lane ? "data lane of job " + std::to_string(lane->job) : std::string("connection")) +
                             " with '" + who + "' closed: " + why);
    for (auto& j : js) {
        std::lock_guard lock(j->mu);
        if (!lane && j->coordinator == c && !j->finished) {
            j->aborted = true;
            j->abort_reason = "lost the coordinator '" + who + "': " + why;
            Connections::end_lanes(*j, true, j->abort_reason);
        }
        if (!lane && j->coordinator == c) {
            // Its lane from a dead coordinator may have closed first and parked what this
            // member holds for a next try that cannot come now.
            for (auto& p : parked.drop_job(j->plan.job)) unparked.push_back(std::move(p));
        }
        for (auto& [m, r] : j->recv) {
            // Data comes on lanes only: a lane that closes ends what it was bringing; a
            // control connection that closes is the coordinator's business.
            const bool in = r.ended && (!r.pieces || r.pieces->complete());
            if (lane && r.from == who && !r.done && r.error.empty() && !in) {
                r.error = "lost the connection with '" + who + "' before " + message_label(m) + " was in: " + why;
                r.from_failed = true;
            }
            if (r.pieces && (j->aborted || !r.error.empty())) r.pieces->fail(j->aborted ? j->abort_reason : r.error);
        }
        j->cv.notify_all();
    }
    for (auto& k : cs) {
        std::lock_guard lock(k->mu);
        auto it = k->nodes.find(who);
        if (it != k->nodes.end() && it->second.conn == c && !it->second.finished) {
            it->second.finished = true;
            it->second.error = "lost the connection with '" + who + "': " + why;
        }
        k->cv.notify_all();
    }
}

void Peer::Impl::on_frame(const ConnectionPtr& c, Frame&& f) {
    connections.hear(c->peer());
    if (f.header.type == FrameType::data) stats.bytes_received.fetch_add(f.payload.size(), std::memory_order_relaxed);
    try {
        if ((f.header.type == FrameType::data || f.header.type == FrameType::data_end) && streams.route(c, f)) return;
        switch (f.header.type) {
            case FrameType::job_plan:
                // Preparing a job resolves its origins (hashing a file, making a payload).
                if (!spawn(slow, [this, c, f] {
                        try {
                            on_plan(c, f);
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
            case FrameType::job_start: return on_start(c, f);
            case FrameType::data: return on_data(c, std::move(f));
            case FrameType::data_end: return on_data_end(c, f);
            case FrameType::job_report: return on_event(c, f);
            case FrameType::job_cancel: return on_cancel(c, f);
            case FrameType::ping: return Requests::on_ping(c, f);
            case FrameType::pong: return requests.on_pong(f);
            case FrameType::request: return requests.on_request(c, f);
            case FrameType::response: return requests.on_response(f);
            case FrameType::bulk: return bulk.on_frame(c, f);
            case FrameType::piece_request: return on_piece_request(c, f);
            case FrameType::piece_data: return on_piece_data(c, f);
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
    if (connections.carries(c.get()) || requests.waiting()) return true;
    for (const auto& job : jobs.all()) {
        if (job->finished) continue;
        if (job->coordinator == c) return true;
        for (const auto& m : job->plan.participants) {
            if (m.name == c->peer()) return true;
        }
    }
    const auto ks = coords.all();
    return std::any_of(ks.begin(), ks.end(), [&](const auto& id_k) {
        const auto& k = id_k.second;
        std::unique_lock lock(k->mu, std::try_to_lock);
        return !lock || k->nodes.count(c->peer()) > 0;
    });
}


}  // namespace hetcast
