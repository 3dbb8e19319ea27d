// Connections, frame dispatch, and the public Peer API. Asking other members (requests,
// describes, pings) is in peer_calls.cpp; a job's participant side in peer_tasks.cpp, its
// coordinator side in peer_coordinate.cpp.
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
    std::lock_guard lock(mu);
    const auto it = members.find(name);
    if (it == members.end()) return std::nullopt;
    return it->second;
}

ConnectionPtr Peer::Impl::conn_to(const std::string& name, const std::vector<Member>* hint) {
    {
        std::lock_guard lock(mu);
        if (auto it = out.find(name); it != out.end()) return it->second;
    }
    const auto m = address(name, hint);
    if (!m) throw Error("'" + name + "' is not a known member");
    std::shared_ptr<std::mutex> member_mu;
    {
        std::lock_guard lock(mu);
        auto& slot = connecting[name];
        if (!slot) slot = std::make_shared<std::mutex>();
        member_mu = slot;
    }
    std::lock_guard serial(*member_mu);
    {
        std::lock_guard lock(mu);
        if (auto it = out.find(name); it != out.end()) return it->second;
    }
    ConnectionPtr c = transport->connect(m->host, m->port, name);
    std::lock_guard lock(mu);
    out[name] = c;
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
    {
        std::lock_guard lock(mu);
        lanes[c.get()] = {job.plan.job, false};
    }
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
    std::lock_guard lock(mu);
    lanes[c.get()] = {job.plan.job, true};
}

void Peer::Impl::on_close(const ConnectionPtr& c, const std::string& why) {
    streams_closed(c.get(), why);
    if (forget_bulk(c.get())) return;
    const std::string& who = c->peer();
    std::optional<LaneOf> lane;
    std::vector<std::shared_ptr<Job>> js;
    std::vector<std::shared_ptr<Coord>> cs;
    std::vector<Parked> unparked;  // their temporaries go when this goes, outside the locks
    {
        std::lock_guard lock(mu);
        if (auto it = lanes.find(c.get()); it != lanes.end()) {
            lane = it->second;
            lanes.erase(it);
        }
        if (lane && !lane->in) return;  // the sends on it fail on their own
        if (auto it = out.find(who); it != out.end() && it->second == c) out.erase(it);
        for (auto& [id, j] : jobs) {
            if (!lane || id == lane->job) js.push_back(j);
        }
        if (!lane) {
            for (auto& [id, k] : coords) cs.push_back(k);
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
            std::lock_guard l(mu);
            for (auto it = parked.begin(); it != parked.end();) {
                if (it->second.job == j->plan.job) {
                    unparked.push_back(std::move(it->second));
                    it = parked.erase(it);
                } else {
                    ++it;
                }
            }
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
        if ((f.header.type == FrameType::data || f.header.type == FrameType::data_end) && route_stream(c, f)) return;
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
    std::lock_guard lock(mu);
    if (auto it = pings.find(f.header.message); it != pings.end()) {
        it->second.set_value({t, now_s()});
        pings.erase(it);
    }
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
    std::lock_guard lock(mu);
    if (auto it = calls.find(f.header.message); it != calls.end()) {
        it->second.set_value(std::move(j));
        calls.erase(it);
    }
}

Peer::Peer(PeerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {
    auto& cfg = impl_->cfg;
    if (cfg.identity.cert_pem.empty()) throw InputError("a peer needs an identity (hetcast keys issue NAME)");
    const net::PeerIdentity me = net::describe(cfg.identity);
    if (me.role != net::Role::member) throw InputError("'" + me.name + "' is an operator's identity, not a member's");
    if (cfg.name.empty()) cfg.name = me.name;
    if (cfg.name != me.name) {
        throw InputError("the identity names '" + me.name + "' but this peer is '" + cfg.name + "'");
    }
    if (impl_->cfg.spool.empty()) impl_->cfg.spool = impl_->cfg.dest_root / ".hetcast-spool";
}

Peer::~Peer() { stop(); }

const PeerStats& Peer::stats() const { return impl_->stats; }

void Peer::start() {
    Impl& d = *impl_;
    net::TransportConfig tc;
    tc.identity = d.cfg.identity;
    tc.host = d.cfg.host;
    tc.port = d.cfg.port;
    if (d.cfg.chunk == 0 || d.cfg.chunk > max_chunk) throw InputError("chunk must be 1 byte to 8 MiB");
    tc.max_frame = max_frame_payload;
    tc.timeout = d.cfg.connect_timeout;
    tc.stall = d.cfg.stall_timeout;
    tc.idle = d.cfg.idle_timeout;
    tc.connections_per_peer = d.cfg.connections_per_peer;
    net::TransportCallbacks cb;
    cb.on_frame = [&d](const ConnectionPtr& c, Frame&& f) { d.on_frame(c, std::move(f)); };
    cb.on_close = [&d](const ConnectionPtr& c, const std::string& why) {
        ++d.stats.connections_closed;
        d.on_close(c, why);
    };
    cb.on_open = [&d](const ConnectionPtr& c) {
        ++d.stats.connections_opened;
        d.on_open(c);
    };
    cb.admit = [&d](const net::PeerIdentity& who) { return d.admit(who); };
    cb.admit_inbound = [&d](const net::PeerIdentity& who) { return d.admit_inbound(who); };
    cb.busy = [&d](const ConnectionPtr& c) { return d.busy(c); };
    cb.log = [&d](LogLevel level, const std::string& line) { d.log(level, line); };
    d.transport = net::make_tcp_transport(tc, cb);
    d.transport->start();
    d.janitor = std::thread([&d] {
        std::unique_lock lock(d.mu);
        while (!d.stopping) {
            d.janitor_cv.wait_for(lock, std::chrono::seconds(1));
            if (d.stopping) break;
            lock.unlock();
            d.reap();
            lock.lock();
        }
    });
}

void Peer::stop() {
    Impl& d = *impl_;
    if (!d.transport || d.stopping.exchange(true)) return;
    {
        std::lock_guard lock(d.mu);
        d.janitor_cv.notify_all();
    }
    if (d.janitor.joinable()) d.janitor.join();
    std::vector<std::shared_ptr<Job>> js;
    {
        std::lock_guard lock(d.mu);
        for (auto& [id, j] : d.jobs) js.push_back(j);
        for (auto& [id, k] : d.coords) k->cv.notify_all();
        d.inbox_cv.notify_all();
    }
    for (auto& j : js) d.abort_job(*j, "the peer is stopping");
    {
        std::lock_guard lock(d.mu);
        d.parked.clear();  // their temporaries go
    }
    for (auto& j : js) {
        if (j->runner.joinable()) j->runner.join();
    }
    d.transport->stop();
    d.live.stop();
    d.quick.stop();
    d.slow.stop();
    {
        std::lock_guard lock(d.mu);
        d.pings.clear();
        d.calls.clear();
    }
}

std::uint16_t Peer::port() const { return impl_->transport ? impl_->transport->port() : 0; }
const std::string& Peer::name() const { return impl_->cfg.name; }

void Peer::set_members(std::vector<Member> members) {
    std::vector<ConnectionPtr> stale;
    {
        std::lock_guard lock(impl_->mu);
        std::map<std::string, Member> next;
        for (auto& m : members) next[m.name] = std::move(m);
        // A member that moved (or left) must not be reached over its old connection.
        for (auto it = impl_->out.begin(); it != impl_->out.end();) {
            const auto was = impl_->members.find(it->first);
            const auto now = next.find(it->first);
            const bool moved = now == next.end() ||
                               (was != impl_->members.end() &&
                                (was->second.host != now->second.host || was->second.port != now->second.port));
            if (moved) {
                stale.push_back(it->second);
                it = impl_->out.erase(it);
            } else {
                ++it;
            }
        }
        impl_->members = std::move(next);
    }
    for (auto& c : stale) c->close();
}

std::vector<Member> Peer::members() const {
    std::lock_guard lock(impl_->mu);
    std::vector<Member> out;
    for (const auto& [n, m] : impl_->members) out.push_back(m);
    return out;
}

bool Peer::cancel(std::uint64_t job, const std::string& why) {
    Impl& d = *impl_;
    std::vector<std::shared_ptr<Coord>> ks;
    {
        std::lock_guard lock(d.mu);
        for (auto& [id, k] : d.coords) {
            if (id == job || k->push == job) ks.push_back(k);
        }
        if (ks.empty()) return false;
        d.cancelled_pushes[job] = why;
    }
    for (auto& k : ks) {
        std::lock_guard lock(k->mu);
        if (k->cancelled.empty()) k->cancelled = why;
        k->cv.notify_all();
    }
    return true;
}

std::vector<JobInfo> Peer::jobs() const {
    const Impl& d = *impl_;
    std::vector<std::pair<std::uint64_t, std::shared_ptr<Coord>>> ks;
    std::vector<std::shared_ptr<Job>> js;
    {
        std::lock_guard lock(d.mu);
        for (const auto& [id, k] : d.coords) ks.emplace_back(id, k);
        for (const auto& [id, j] : d.jobs) js.push_back(j);
    }
    const double now = now_s();
    std::vector<JobInfo> out;
    for (const auto& [id, k] : ks) {
        std::lock_guard lock(k->mu);
        JobInfo i;
        i.job = k->push;
        i.role = "coordinator";
        i.coordinator = d.cfg.name;
        i.algorithm = k->algorithm;
        i.seconds = k->started > 0 ? now - k->started : 0;
        i.bytes = std::min(k->bytes_in, k->owed);
        i.owed = k->owed;
        i.state = k->started > 0 ? "running" : "planned";
        out.push_back(std::move(i));
    }
    for (const auto& j : js) {
        if (j->finished || !j->coordinator) continue;  // its coordinator (this peer) lists it
        std::lock_guard lock(j->mu);
        JobInfo i;
        i.job = j->plan.job;
        i.role = "participant";
        i.coordinator = j->plan.coordinator;
        i.algorithm = j->plan.algorithm;
        i.seconds = j->started > 0 ? now - j->started : now - j->planned;
        for (const auto& [m, r] : j->recv) i.bytes += r.got;
        i.state = j->aborted ? "ending" : (j->runner.joinable() ? "running" : "planned");
        out.push_back(std::move(i));
    }
    return out;
}

JobReport Peer::run(JobSpec spec) {
    const Schedule& s = spec.schedule;
    if (s.relay == Relay::cut_through && spec.network) {
        // Messages sourced elsewhere: their piece digests come from their source.
        for (MessageId m = 0; m < spec.inputs.size() && m < s.messages.size(); ++m) {
            JobInput& in = spec.inputs[m];
            if (in.body || in.origin.empty() || s.messages[m].source >= spec.network->size()) continue;
            const Described d = describe(spec.network->name(s.messages[m].source), in.origin, s.piece);
            if (d.size != in.size || !net::same_digest(d.sha, in.sha)) {
                throw InputError("'" + in.origin + "' changed since it was described");
            }
            in.pieces = d.pieces;
        }
    }
    return impl_->run(std::move(spec));
}

std::optional<Delivery> Peer::receive(std::chrono::milliseconds timeout) {
    std::unique_lock lock(impl_->mu);
    if (!impl_->inbox_cv.wait_for(lock, timeout, [&] { return !impl_->inbox.empty() || impl_->stopping; })) {
        return std::nullopt;
    }
    if (impl_->inbox.empty()) return std::nullopt;
    Delivery d = std::move(impl_->inbox.front());
    impl_->inbox.pop_front();
    return d;
}

void Peer::on_delivery(std::function<void(Delivery)> callback) {
    std::lock_guard lock(impl_->mu);
    impl_->delivery_cb = std::move(callback);
}

void Peer::on_request(std::function<void(const net::PeerIdentity&, const nlohmann::json&, Responder)> handler) {
    std::lock_guard lock(impl_->mu);
    impl_->request_handler = std::move(handler);
}

void Peer::offer(const std::string& key, std::shared_ptr<const net::MessageBody> body) {
    std::lock_guard lock(impl_->mu);
    impl_->offers[key] = std::move(body);
}

void Peer::withdraw(const std::string& key) {
    std::lock_guard lock(impl_->mu);
    impl_->offers.erase(key);
}

std::string Peer::Impl::admit(const net::PeerIdentity& who) const {
    std::lock_guard lock(mu);
    for (const auto& r : revocations) {
        if (net::revokes(r, who)) {
            return "'" + who.name + "' was revoked (" +
                   (who.role == net::Role::operator_ ? "by another operator" : "it left the cluster") +
                   "); its identity is no longer accepted";
        }
    }
    return {};
}

void Peer::revoke(const std::vector<net::Revocation>& revoked) {
    Impl& d = *impl_;
    std::vector<net::Revocation> added;
    {
        std::lock_guard lock(d.mu);
        for (const auto& r : revoked) {
            if (std::find(d.revocations.begin(), d.revocations.end(), r) == d.revocations.end()) {
                d.revocations.push_back(r);
                added.push_back(r);
            }
        }
    }
    if (added.empty() || !d.transport) return;
    d.transport->close_if(
        [added](const net::PeerIdentity& who) {
            return std::any_of(added.begin(), added.end(), [&](const net::Revocation& r) { return net::revokes(r, who); });
        },
        "revoked");
}

const net::Identity& Peer::identity() const { return impl_->cfg.identity; }

std::vector<net::Revocation> Peer::revoked() const {
    std::lock_guard lock(impl_->mu);
    return impl_->revocations;
}

}  // namespace hetcast
