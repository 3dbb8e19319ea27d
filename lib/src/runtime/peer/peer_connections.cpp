// A peer's connections and the frames on them: the control connection with each member,
// a job's data lanes, and frame dispatch (pings, requests, responses; job frames go to
// job/, pieces to transfer/, bulk transfers to cluster/). The public Peer API is in
// ../peer.cpp.
#include "hetcast/runtime/peer.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "peer_impl.hpp"

namespace hetcast {
using namespace detail;

// --- connections ------------------------------------------------------------------
std::optional<Member> Peer::Impl::address(const std::string& name, const std::vector<Member>* hint) const {
    if (hint) {
        for (const auto& m : *hint) {
            if (m.name == name) return m;
        }
    }
    return directory.find(name);
}

ConnectionPtr Peer::Impl::conn_to(const std::string& name, const std::vector<Member>* hint) {
    if (auto c = directory.connection(name)) return c;
    const auto m = address(name, hint);
    if (!m) throw Error("'" + name + "' is not a known member");
    const std::shared_ptr<std::mutex> member_mu = directory.dial_lock(name);
    std::lock_guard serial(*member_mu);
    if (auto c = directory.connection(name)) return c;
    ConnectionPtr c = transport->connect(m->host, m->port, name);
    directory.keep(name, c);
    return c;
}

void Peer::Impl::on_open(const ConnectionPtr& c) const {
    log(LogLevel::debug, "connected with '" + c->peer() + "'");
    if (auto j = profile_id(c->peer())) {
        const Network& p = *cfg.link_profile;
        c->set_shape({p.wire(*profile_self, *j, 0), p.bandwidth().empty() ? 0.0 : p.bandwidth()[*profile_self][*j],
                      link_state ? link_state->rates(*profile_self, *j) : std::vector<std::shared_ptr<net::SharedRate>>{}});
    }
}

ConnectionPtr Peer::Impl::lane_to(Job& job, const std::string& name) {
    {
        std::lock_guard lock(job.mu);
        if (job.aborted) throw Error(job.abort_reason);
        if (auto it = job.lanes_out.find(name); it != job.lanes_out.end()) return it->second;
    }
    const auto m = address(name, &job.plan.participants);
    if (!m) throw Error("'" + name + "' is not a known member");
    ConnectionPtr c = transport->connect(m->host, m->port, name);
    lanes.note(c.get(), job.plan.job, false);
    std::lock_guard lock(job.mu);
    if (job.aborted) {
        c->abort(job.abort_reason);
        throw Error(job.abort_reason);
    }
    job.lanes_out[name] = c;
    return c;
}

void Peer::Impl::dial_lanes(Job& job) {
    std::set<std::string> to;
    for (const JobTask& t : job.plan.tasks) {
        if (t.op == Op::send) to.insert(t.peer);
    }
    for (const std::string& name : to) {
        try {
            (void)lane_to(job, name);
        } catch (const std::exception&) {
            // Dialled again by the send itself, which then fails the way a send fails.
        }
    }
}

void Peer::Impl::end_lanes(Job& job, bool reset, const std::string& why) {
    for (auto& [name, c] : job.lanes_out) {
        if (reset) c->abort(why);
        // A receiver closes its end once it holds what it was sent; a sender that closed
        // first could reset data still in flight.
    }
    if (reset) job.lanes_out.clear();
    for (auto& c : job.lanes_in) {
        if (reset) {
            c->abort(why);
        } else {
            c->close();
        }
    }
    job.lanes_in.clear();
}

void Peer::Impl::note_lane(Job& job, const ConnectionPtr& c) {
    if (c == job.coordinator || std::find(job.lanes_in.begin(), job.lanes_in.end(), c) != job.lanes_in.end()) return;
    if (job.finished || job.aborted) {
        c->abort("job " + std::to_string(job.plan.job) + " is over here");
        return;
    }
    job.lanes_in.push_back(c);
    lanes.note(c.get(), job.plan.job, true);
}

void Peer::Impl::on_close(const ConnectionPtr& c, const std::string& why) {
    streams.closed(c.get(), why);
    if (bulk.forget(c.get())) return;
    const std::string& who = c->peer();
    const std::optional<Lane> lane = lanes.closed(c.get());
    if (lane && !lane->in) return;  // the sends on it fail on their own
    std::vector<std::shared_ptr<Job>> js;
    std::vector<std::shared_ptr<Coord>> cs;
    std::vector<Parked> unparked;  // their temporaries go when this goes, outside the locks
    {
        std::lock_guard lock(mu);
        directory.closed(who, c);
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
            end_lanes(*j, true, j->abort_reason);
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

// --- frames ----------------------------------------------------------------------
void Peer::Impl::on_frame(const ConnectionPtr& c, Frame&& f) {
    hear(c->peer());
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
            case FrameType::ping: return on_ping(c, f);
            case FrameType::pong: return on_pong(f);
            case FrameType::request: return on_request(c, f);
            case FrameType::response: return on_response(f);
            case FrameType::bulk: return on_bulk(c, f);
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

void Peer::Impl::on_ping(const ConnectionPtr& c, const Frame& f) {
    Frame pong{FrameHeader{FrameType::pong, 0, 0, f.header.message, 0}, f.payload};
    if (pong.payload.size() < sizeof(double)) pong.payload.resize(sizeof(double));
    const double t = now_s();
    std::memcpy(pong.payload.data(), &t, sizeof t);
    c->send(std::move(pong));
}

void Peer::Impl::on_pong(const Frame& f) {
    if (f.payload.size() < sizeof(double)) throw InputError("a pong without a time stamp");
    double t = 0;
    std::memcpy(&t, f.payload.data(), sizeof t);
    pings.answer(f.header.message, {t, now_s()});
}

void Peer::Impl::on_request(const ConnectionPtr& c, const Frame& f) {
    // Held by the request's work until it ends: what requests_per_peer counts.
    const auto held = take_request(c);
    json req = json::parse(net::as_text(f.payload), nullptr, false);
    Responder respond = [c, seq = f.header.message, held](const json& j) {
        // An answer may quote what a peer sent, cut anywhere: bytes that are not UTF-8
        // become U+FFFD rather than an exception on a worker thread.
        c->send(make_frame(FrameType::response, 0, seq, j.dump(-1, ' ', false, json::error_handler_t::replace)));
    };
    if (!held) {
        const std::string why = "busy: '" + c->peer() + "' has " + std::to_string(cfg.requests_per_peer) +
                                " requests waiting or running on '" + cfg.name + "', the most one peer may have";
        log(LogLevel::warn, "refused a request from '" + c->peer() + "': " + why);
        respond({{"ok", false}, {"error", why}});
        return;
    }
    if (req.is_discarded() || !req.is_object()) {
        respond({{"error", "a request must be a JSON object"}});
        return;
    }
    if (req.value("cmd", "") == "flows") {
        board.note(req, c->peer(), now_s());
        respond(flows_answer());
        return;
    }
    if (req.value("cmd", "") == "describe") {
        // Hashing a large origin takes seconds: never on the I/O thread. An origin this
        // peer does not have is an answer, not a reason to drop the caller.
        const bool queued = spawn(slow, [this, req, respond, who = c->peer()] {
            try {
                authorize_read(req.value("origin", ""), req.contains("order") ? req["order"].dump() : std::string(), who);
                const auto body = resolve(req.value("origin", ""));
                json a{{"ok", true}, {"size", body->size()}, {"sha256", net::to_hex(body->sha256())}, {"mode", mode_of(*body)}};
                if (const std::uint64_t piece = req.value("piece", std::uint64_t{0}); piece > 0) {
                    if (piece < min_piece || piece > max_piece) throw InputError("piece must be 4 KiB to 8 MiB");
                    json pieces = json::array();
                    for (const auto& d : piece_digests(*body, piece)) pieces.push_back(net::to_hex(d));
                    a["pieces"] = std::move(pieces);
                }
                respond(a);
            } catch (const std::exception& e) {
                respond({{"ok", false}, {"error", e.what()}});
            }
        });
        if (!queued) respond({{"ok", false}, {"error", "busy: '" + cfg.name + "' has too many requests waiting"}});
        return;
    }
    std::function<void(const net::PeerIdentity&, const json&, Responder)> handler;
    {
        std::lock_guard lock(mu);
        handler = request_handler;
    }
    if (!handler || stopping) {
        respond({{"error", "this peer takes no requests"}});
        return;
    }
    // Quick requests answer from what the peer holds; the rest may run for minutes.
    static const std::set<std::string> quick_cmds{"status", "map", "ping", "jobs", "set_map", "set_members"};
    const std::string cmd = req.value("cmd", "");
    auto& pool = cmd == "hello" ? live : quick_cmds.count(cmd) ? quick : slow;
    const bool queued = spawn(pool, [this, handler, from = c->identity(), req, respond] {
        try {
            handler(from, req, respond);
        } catch (const std::exception& e) {
            respond({{"error", e.what()}});
            log(LogLevel::warn, std::string("request failed: ") + e.what());
        }
    });
    if (!queued) respond({{"ok", false}, {"error", "busy: '" + cfg.name + "' has too many requests waiting"}});
}

bool Peer::Impl::spawn(detail::WorkerPool& pool, std::function<void()> work) {
    if (stopping) return false;
    return pool.submit(std::move(work));
}

void Peer::Impl::on_response(const Frame& f) {
    json j = json::parse(net::as_text(f.payload));
    calls.answer(f.header.message, std::move(j));
}

}  // namespace hetcast
