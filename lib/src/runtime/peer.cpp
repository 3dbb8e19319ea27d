#include "hetcast/runtime/peer.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {
namespace fs = std::filesystem;
using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameHeader;
using net::FrameType;

namespace {

using Clock = std::chrono::steady_clock;

double now_s() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

std::vector<std::byte> bytes_of(std::string_view s) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    return {p, p + s.size()};
}

Frame make_frame(FrameType type, std::uint64_t job, std::uint32_t message, std::string_view payload) {
    return Frame{FrameHeader{type, 0, job, message, 0}, bytes_of(payload)};
}

std::string message_label(MessageId m) { return "message " + std::to_string(m); }

/// Progress events go out after this many bytes of a message arrive.
constexpr std::uint64_t progress_step = std::uint64_t{4} << 20;

}  // namespace

/// What a participant knows of one message it receives.
struct Recv {
    std::string from;
    bool keep = false;  ///< this node is a destination (else it only relays)
    std::unique_ptr<FileSink> sink;  ///< file messages; lands (destinations) or is removed at the end
    std::vector<std::byte> buf;  ///< buffer messages
    std::unique_ptr<ChunkHasher> buf_hash;
    std::uint64_t got = 0;
    bool ended = false;  ///< data_end arrived
    net::Digest sent_sha{};
    bool done = false;   ///< verified and held
    std::string error;
    std::shared_ptr<const net::MessageBody> body;
};

/// A participant's part of one job.
struct Job {
    JobPlan plan;
    ConnectionPtr coordinator;  ///< null when this peer coordinates the job itself
    std::mutex mu;
    std::condition_variable cv;
    std::map<MessageId, Recv> recv;
    std::map<MessageId, std::shared_ptr<const net::MessageBody>> held;
    int outstanding = 0;
    std::string send_error;
    bool aborted = false;
    std::string abort_reason;
    std::atomic<bool> finished{false};
    std::uint64_t unreported = 0;
    std::thread runner;
};

/// The coordinator's view of one job.
struct Coord {
    struct Node {
        ConnectionPtr conn;
        double sent = 0;    ///< when the plan went out (coordinator clock)
        double offset = 0;  ///< node clock minus coordinator clock, estimated from the plan's round trip
        /// What every frame each way proves about the offset: a frame arrives after it left.
        double offset_lo = -std::numeric_limits<double>::infinity();
        double offset_hi = std::numeric_limits<double>::infinity();
        /// The offset estimate within what the frames proved.
        [[nodiscard]] double bounded_offset() const {
            return offset_lo <= offset_hi ? std::clamp(offset, offset_lo, offset_hi) : offset;
        }
        bool ready = false;
        bool finished = false;
        std::string error;
    };
    std::mutex mu;
    std::condition_variable cv;
    std::map<std::string, Node> nodes;
    struct Delivered {
        double node_clock;
        double arrived;  ///< when the event reached the coordinator
    };
    std::map<std::pair<MessageId, std::string>, Delivered> delivered;
    std::uint64_t bytes_in = 0;
    double started = 0;  ///< when job_start went out
};

struct Peer::Impl {
    PeerConfig cfg;
    std::unique_ptr<net::Transport> transport;
    std::optional<NodeId> profile_self;
    mutable std::mutex host_mu;
    mutable Clock::time_point host_free{};  ///< the emulated host is busy until then

    mutable std::mutex mu;
    std::map<std::string, Member> members;
    std::map<std::string, ConnectionPtr> out;
    std::map<std::uint64_t, std::shared_ptr<Job>> jobs;
    std::map<std::uint64_t, std::shared_ptr<Coord>> coords;
    std::map<std::uint32_t, std::promise<std::pair<double, double>>> pings;
    std::uint32_t ping_seq = 0;
    std::map<std::uint32_t, std::promise<json>> calls;
    std::uint32_t call_seq = 0;
    std::map<std::string, std::shared_ptr<const net::MessageBody>> offers;
    std::deque<Delivery> inbox;
    std::condition_variable inbox_cv;
    std::function<void(Delivery)> delivery_cb;
    std::function<void(const std::string&, const json&, Responder)> request_handler;
    /// Request threads; each marks itself finished, and the next request joins those that are.
    struct Helper {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> finished;
    };
    std::vector<Helper> helpers;
    std::mutex connect_mu;  // one connect at a time: no duplicate connections to a member
    std::atomic<bool> stopping{false};
    std::mt19937_64 rng{std::random_device{}()};

    explicit Impl(PeerConfig c) : cfg(std::move(c)) {
        if (cfg.link_profile) profile_self = cfg.link_profile->find(cfg.name);
    }

    void log(const std::string& line) const {
        if (cfg.log) cfg.log(line);
    }

    // --- link emulation -------------------------------------------------------------
    std::optional<NodeId> profile_id(const std::string& name) const {
        if (!cfg.link_profile || !profile_self) return std::nullopt;
        return cfg.link_profile->find(name);
    }
    /// The emulated host spends `seconds` of its one CPU: send and receive overheads never
    /// overlap (Wu's model), not even across jobs running at once, so concurrent jobs share
    /// the host as they would a real one.
    void busy(double seconds) const {
        if (seconds <= 0) return;
        Clock::time_point until;
        {
            std::lock_guard lock(host_mu);
            host_free = std::max(host_free, Clock::now()) +
                        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
            until = host_free;
        }
        std::this_thread::sleep_until(until);
    }
    void emulate_send(const std::string& to, double bytes) const {
        if (auto j = profile_id(to)) busy(cfg.link_profile->send_busy(*profile_self, *j, bytes));
    }
    void emulate_recv(double bytes) const {
        if (profile_self) busy(cfg.link_profile->recv_busy(*profile_self, bytes));
    }

    // --- connections ------------------------------------------------------------------
    std::optional<Member> address(const std::string& name, const std::vector<Member>* hint) const {
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

    ConnectionPtr conn_to(const std::string& name, const std::vector<Member>* hint = nullptr) {
        {
            std::lock_guard lock(mu);
            if (auto it = out.find(name); it != out.end()) return it->second;
        }
        const auto m = address(name, hint);
        if (!m) throw Error("'" + name + "' is not a known member");
        std::lock_guard serial(connect_mu);
        {
            std::lock_guard lock(mu);
            if (auto it = out.find(name); it != out.end()) return it->second;
        }
        ConnectionPtr c = transport->connect(m->host, m->port);
        if (c->peer() != name) {
            c->close("expected '" + name + "'");
            throw Error("the member at " + m->host + ":" + std::to_string(m->port) + " is '" + c->peer() + "', not '" +
                        name + "'");
        }
        std::lock_guard lock(mu);
        out[name] = c;
        return c;
    }

    /// Every connection, whichever side dialled, paces what this peer sends on it: answers
    /// (pongs, events) cross the emulated link as data does.
    void on_open(const ConnectionPtr& c) const {
        if (auto j = profile_id(c->peer())) {
            const Network& p = *cfg.link_profile;
            c->set_shape({p.wire(*profile_self, *j, 0), p.bandwidth().empty() ? 0.0 : p.bandwidth()[*profile_self][*j]});
        }
    }

    void on_close(const ConnectionPtr& c, const std::string& why) {
        const std::string& who = c->peer();
        std::vector<std::shared_ptr<Job>> js;
        std::vector<std::shared_ptr<Coord>> cs;
        {
            std::lock_guard lock(mu);
            if (auto it = out.find(who); it != out.end() && it->second == c) out.erase(it);
            for (auto& [id, j] : jobs) js.push_back(j);
            for (auto& [id, k] : coords) cs.push_back(k);
        }
        if (stopping || who.empty()) return;
        for (auto& j : js) {
            std::lock_guard lock(j->mu);
            if (j->coordinator == c && !j->finished) {
                j->aborted = true;
                j->abort_reason = "lost the coordinator '" + who + "': " + why;
            }
            for (auto& [m, r] : j->recv) {
                if (r.from == who && !r.done && r.error.empty() && !r.ended) {
                    r.error = "lost the connection with '" + who + "' before " + message_label(m) + " was in: " + why;
                }
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
    void on_frame(const ConnectionPtr& c, Frame&& f) {
        try {
            switch (f.header.type) {
                case FrameType::job_plan: return on_plan(c, f);
                case FrameType::job_start: return on_start(f.header.job, c);
                case FrameType::data: return on_data(c, std::move(f));
                case FrameType::data_end: return on_data_end(c, f);
                case FrameType::job_report: return on_event(c, f);
                case FrameType::job_cancel: return on_cancel(f);
                case FrameType::ping: return on_ping(c, f);
                case FrameType::pong: return on_pong(f);
                case FrameType::request: return on_request(c, f);
                case FrameType::response: return on_response(f);
                default: c->close(std::string("unexpected ") + net::to_string(f.header.type) + " frame");
            }
        } catch (const std::exception& e) {
            // What a peer sent never takes the peer down: the connection goes, the peer stays.
            log("closing the connection with '" + c->peer() + "': " + e.what());
            c->close(e.what());
        }
    }

    /// "gen:SIZE:SEED": a test payload of SIZE pseudo-random bytes, the same for a given
    /// seed, made in memory (at most 1 GiB).
    static std::shared_ptr<const net::MessageBody> generated(const std::string& origin) {
        std::uint64_t size = 0, seed = 0;
        char extra = 0;
        if (std::sscanf(origin.c_str(), "gen:%lu:%lu%c", &size, &seed, &extra) != 2) {
            throw InputError("bad origin '" + origin.substr(0, 40) + "' (gen:SIZE:SEED)");
        }
        if (size > (std::uint64_t{1} << 30)) throw InputError("generated payloads are at most 1 GiB");
        auto bytes = std::make_shared<std::vector<std::byte>>(size);
        std::mt19937_64 rng(seed);
        for (std::uint64_t i = 0; i < size; i += 8) {
            const std::uint64_t v = rng();
            std::memcpy(bytes->data() + i, &v, std::min<std::uint64_t>(8, size - i));
        }
        return std::make_shared<BufferBody>(std::move(bytes));
    }

    /// The body an origin names on this peer. Throws InputError when there is none.
    std::shared_ptr<const net::MessageBody> resolve(const std::string& origin) {
        if (origin.rfind("offer:", 0) == 0) {
            std::lock_guard lock(mu);
            const auto it = offers.find(origin.substr(6));
            if (it == offers.end()) throw InputError("'" + cfg.name + "' offers nothing as '" + origin.substr(6) + "'");
            return it->second;
        }
        if (origin.rfind("file:", 0) == 0) {
            if (!cfg.file_origins) throw InputError("'" + cfg.name + "' does not serve files");
            const fs::path p = origin.substr(5);
            if (!p.is_absolute()) throw InputError("file origin '" + p.string() + "' is not absolute");
            return std::make_shared<FileBody>(p);
        }
        if (origin.rfind("gen:", 0) == 0) return generated(origin);
        throw InputError("unknown origin '" + origin.substr(0, 40) + "'");
    }

    std::shared_ptr<Job> find_job(std::uint64_t id) {
        std::lock_guard lock(mu);
        const auto it = jobs.find(id);
        return it == jobs.end() ? nullptr : it->second;
    }

    void on_plan(const ConnectionPtr& c, const Frame& f) {
        const double received = now_s();
        JobPlan plan = job_plan_from_json(json::parse(net::as_text(f.payload)), cfg.max_message);
        if (plan.coordinator != c->peer()) throw InputError("a job plan from '" + c->peer() + "' names another coordinator");
        const std::uint64_t id = plan.job;
        try {
            auto job = make_job(std::move(plan), c);
            emit(*job, JobEvent{.kind = JobEvent::Kind::ready, .clock = now_s(), .message = 0, .bytes = 0, .error = {}, .received = received});
        } catch (const std::exception& e) {
            c->send(make_frame(FrameType::job_report, id, 0,
                               to_json(JobEvent{JobEvent::Kind::failed, now_s(), 0, 0, e.what()}).dump()));
        }
    }

    /// Registers a job and prepares where each received message goes; throws (and
    /// registers nothing) when a destination path is refused or cannot be created.
    std::shared_ptr<Job> make_job(JobPlan plan, ConnectionPtr coordinator) {
        reap();
        auto job = std::make_shared<Job>();
        job->coordinator = std::move(coordinator);
        for (const JobTask& t : plan.tasks) {
            if (t.op != Op::recv) continue;
            const JobMessage& m = plan.messages.at(t.message);
            Recv r;
            r.from = t.peer;
            r.keep = std::find(m.dests.begin(), m.dests.end(), cfg.name) != m.dests.end();
            if (!m.name.empty()) {
                // A relay's copy never lands: it is read while held and removed with the job.
                const fs::path target = r.keep ? confine(cfg.dest_root, m.name)
                                               : cfg.spool / ("job-" + std::to_string(plan.job) + "-" +
                                                              std::to_string(t.message));
                r.sink = std::make_unique<FileSink>(target, m.size);
            } else {
                r.buf_hash = std::make_unique<ChunkHasher>(m.size >= FileSink::threaded_hash_from);
            }
            if (!job->recv.emplace(t.message, std::move(r)).second) {
                throw InputError("the plan receives " + message_label(t.message) + " twice");
            }
        }
        for (MessageId m = 0; m < plan.messages.size(); ++m) {
            const JobMessage& msg = plan.messages[m];
            if (msg.source != cfg.name || msg.origin.empty()) continue;
            auto body = resolve(msg.origin);
            if (body->size() != msg.size || !net::same_digest(body->sha256(), msg.sha)) {
                throw InputError("'" + msg.origin + "' at '" + cfg.name + "' changed since it was described");
            }
            job->held[m] = std::move(body);
        }
        job->plan = std::move(plan);
        std::lock_guard lock(mu);
        if (stopping) throw Error("the peer is stopping");
        if (!jobs.emplace(job->plan.job, job).second) throw InputError("job " + std::to_string(job->plan.job) + " exists");
        return job;
    }

    void on_start(std::uint64_t id, const ConnectionPtr& c) {
        auto job = find_job(id);
        if (!job || job->coordinator != c) throw InputError("start of an unknown job");
        start_runner(job);
    }

    void start_runner(const std::shared_ptr<Job>& job) {
        std::lock_guard lock(job->mu);
        if (job->runner.joinable()) return;
        job->runner = std::thread([this, job] { run_tasks(job); });
    }

    Recv& expect(Job& job, const ConnectionPtr& c, MessageId m) {
        const auto it = job.recv.find(m);
        if (it == job.recv.end() || it->second.from != c->peer()) {
            throw InputError("'" + c->peer() + "' sent " + message_label(m) + ", which this node does not expect from it");
        }
        return it->second;
    }

    void on_data(const ConnectionPtr& c, Frame&& f) {
        auto job = find_job(f.header.job);
        if (!job) throw InputError("data for an unknown job");
        std::uint64_t report = 0;
        {
            std::lock_guard lock(job->mu);
            Recv& r = expect(*job, c, f.header.message);
            if (r.done || r.ended || !r.error.empty()) return;
            const std::uint64_t size = job->plan.messages[f.header.message].size;
            if (r.got + f.payload.size() > size) {
                r.error = "'" + c->peer() + "' sent more than the " + std::to_string(size) + " bytes of " +
                          message_label(f.header.message);
            } else {
                try {
                    const std::size_t n = f.payload.size();
                    if (r.sink) {
                        r.sink->write(std::move(f.payload));
                    } else {
                        // What the plan claims is reserved only up to 64 MiB; past that it grows as data comes.
                        if (r.buf.empty()) r.buf.reserve(std::min<std::uint64_t>(size, std::uint64_t{64} << 20));
                        r.buf.insert(r.buf.end(), f.payload.begin(), f.payload.end());
                        r.buf_hash->add(std::move(f.payload));
                    }
                    r.got += n;
                    if (r.keep) job->unreported += n;
                    if (job->unreported >= progress_step) report = std::exchange(job->unreported, 0);
                } catch (const std::exception& e) {
                    r.error = e.what();
                }
            }
            job->cv.notify_all();
        }
        if (report) emit(*job, JobEvent{JobEvent::Kind::progress, now_s(), 0, report, {}});
    }

    void on_data_end(const ConnectionPtr& c, const Frame& f) {
        auto job = find_job(f.header.job);
        if (!job) throw InputError("data for an unknown job");
        if (f.payload.size() != 32) throw InputError("a data_end frame without a SHA-256");
        std::lock_guard lock(job->mu);
        Recv& r = expect(*job, c, f.header.message);
        if (r.done || r.ended) return;
        r.ended = true;
        std::copy(f.payload.begin(), f.payload.end(), r.sent_sha.begin());
        job->cv.notify_all();
    }

    void on_cancel(const Frame& f) {
        auto job = find_job(f.header.job);
        if (!job) return;
        const std::string why(net::as_text(f.payload));
        std::lock_guard lock(job->mu);
        if (f.header.message == net::all_messages) {
            job->aborted = true;
            job->abort_reason = why;
        } else if (auto it = job->recv.find(f.header.message); it != job->recv.end() && !it->second.done) {
            if (it->second.error.empty()) it->second.error = why;
        }
        job->cv.notify_all();
    }

    void on_ping(const ConnectionPtr& c, const Frame& f) {
        Frame pong{FrameHeader{FrameType::pong, 0, 0, f.header.message, 0}, f.payload};
        if (pong.payload.size() < sizeof(double)) pong.payload.resize(sizeof(double));
        const double t = now_s();
        std::memcpy(pong.payload.data(), &t, sizeof t);
        c->send(std::move(pong));
    }

    void on_pong(const Frame& f) {
        if (f.payload.size() < sizeof(double)) throw InputError("a pong without a time stamp");
        double t = 0;
        std::memcpy(&t, f.payload.data(), sizeof t);
        std::lock_guard lock(mu);
        if (auto it = pings.find(f.header.message); it != pings.end()) {
            it->second.set_value({t, now_s()});
            pings.erase(it);
        }
    }

    void on_request(const ConnectionPtr& c, const Frame& f) {
        json req = json::parse(net::as_text(f.payload), nullptr, false);
        Responder respond = [c, seq = f.header.message](const json& j) {
            c->send(make_frame(FrameType::response, 0, seq, j.dump()));
        };
        if (req.is_discarded() || !req.is_object()) {
            respond({{"error", "a request must be a JSON object"}});
            return;
        }
        if (req.value("cmd", "") == "describe") {
            // An origin this peer does not have is an answer, not a reason to drop the caller.
            try {
                const auto body = resolve(req.value("origin", ""));
                respond({{"ok", true}, {"size", body->size()}, {"sha256", net::to_hex(body->sha256())}});
            } catch (const std::exception& e) {
                respond({{"ok", false}, {"error", e.what()}});
            }
            return;
        }
        std::function<void(const std::string&, const json&, Responder)> handler;
        {
            std::lock_guard lock(mu);
            handler = request_handler;
            if (!handler || stopping) {
                respond({{"error", "this peer takes no requests"}});
                return;
            }
            reap_helpers();
            auto finished = std::make_shared<std::atomic<bool>>(false);
            helpers.push_back({std::thread([handler, from = c->peer(), req = std::move(req), respond, finished, this] {
                                   try {
                                       handler(from, req, respond);
                                   } catch (const std::exception& e) {
                                       respond({{"error", e.what()}});
                                       log(std::string("request failed: ") + e.what());
                                   }
                                   *finished = true;
                               }),
                               finished});
        }
    }

    /// Joins request threads that have ended (a daemon serves requests for months). Under mu.
    void reap_helpers() {
        for (auto it = helpers.begin(); it != helpers.end();) {
            if (*it->finished) {
                it->thread.join();
                it = helpers.erase(it);
            } else {
                ++it;
            }
        }
    }

    void on_response(const Frame& f) {
        json j = json::parse(net::as_text(f.payload));
        std::lock_guard lock(mu);
        if (auto it = calls.find(f.header.message); it != calls.end()) {
            it->second.set_value(std::move(j));
            calls.erase(it);
        }
    }

    // --- events, at the coordinator ----------------------------------------------------
    void emit(Job& job, const JobEvent& e) {
        if (job.coordinator) {
            job.coordinator->send(make_frame(FrameType::job_report, job.plan.job, 0, to_json(e).dump()));
        } else {
            apply_event(job.plan.job, cfg.name, e, nullptr);
        }
    }

    void on_event(const ConnectionPtr& c, const Frame& f) {
        const JobEvent e = job_event_from_json(json::parse(net::as_text(f.payload)));
        apply_event(f.header.job, c->peer(), e, &c);
    }

    void apply_event(std::uint64_t id, const std::string& who, const JobEvent& e, const ConnectionPtr* via) {
        std::shared_ptr<Coord> k;
        {
            std::lock_guard lock(mu);
            if (auto it = coords.find(id); it != coords.end()) k = it->second;
        }
        if (!k) return;  // a late event of a job that has ended
        std::lock_guard lock(k->mu);
        auto it = k->nodes.find(who);
        if (it == k->nodes.end() || (via && it->second.conn != *via)) return;
        Coord::Node& n = it->second;
        const double t = now_s();
        if (via) n.offset_lo = std::max(n.offset_lo, e.clock - t);
        switch (e.kind) {
            case JobEvent::Kind::ready:
                n.ready = true;
                if (via) {
                    n.offset = exchange_offset(n.sent, e.received, e.clock, t);
                    n.offset_hi = std::min(n.offset_hi, e.received - n.sent);
                }
                break;
            case JobEvent::Kind::delivered: k->delivered[{e.message, who}] = {e.clock, t}; break;
            case JobEvent::Kind::progress: k->bytes_in += e.bytes; break;
            case JobEvent::Kind::done: n.finished = true; break;
            case JobEvent::Kind::failed:
                n.finished = true;
                n.error = e.error;
                break;
        }
        k->cv.notify_all();
    }

    // --- a participant's task list ------------------------------------------------------
    /// Blocks until message m is in and verified (or fails), then returns its body.
    std::shared_ptr<const net::MessageBody> wait_recv(Job& job, MessageId m) {
        std::unique_lock lock(job.mu);
        Recv& r = job.recv.at(m);
        const JobMessage& msg = job.plan.messages.at(m);
        auto last = std::make_pair(r.got, Clock::now());
        while (!r.ended && r.error.empty() && !job.aborted) {
            job.cv.wait_for(lock, std::chrono::milliseconds(200));
            if (r.got != last.first) {
                last = {r.got, Clock::now()};
            } else if (r.got > 0 && Clock::now() - last.second > cfg.stall_timeout) {
                r.error = message_label(m) + " from '" + r.from + "' stalled at " + std::to_string(r.got) + " of " +
                          std::to_string(msg.size) + " bytes";
            }
        }
        if (job.aborted) throw Error(job.abort_reason);
        if (!r.error.empty()) throw Error(r.error);
        if (r.got != msg.size) {
            throw Error(message_label(m) + " from '" + r.from + "' ended after " + std::to_string(r.got) + " of " +
                        std::to_string(msg.size) + " bytes");
        }
        if (!net::same_digest(r.sent_sha, msg.sha)) throw Error("the sender's checksum of " + message_label(m) + " differs from the job's");
        // Verify outside the lock: the last chunks may still be hashing. The sink stays in
        // r (data after data_end is ignored) until its copy lands or the job ends.
        FileSink* sink = r.sink.get();
        std::vector<std::byte> buf = std::move(r.buf);
        std::unique_ptr<ChunkHasher> buf_hash = std::move(r.buf_hash);
        lock.unlock();
        std::shared_ptr<const net::MessageBody> body;
        if (sink) {
            sink->verify(msg.sha);  // throws when the bytes do not match
            body = sink->body();
        } else {
            if (!net::same_digest(buf_hash->finish(), msg.sha)) throw Error("checksum mismatch for " + message_label(m));
            body = std::make_shared<BufferBody>(std::make_shared<const std::vector<std::byte>>(std::move(buf)), msg.sha);
        }
        lock.lock();
        r.done = true;
        r.body = body;
        return body;
    }

    void deliver(const Job& job, MessageId m, const std::shared_ptr<const net::MessageBody>& body) {
        const auto* buffer = dynamic_cast<const BufferBody*>(body.get());
        if (!buffer) return;
        Delivery d{job.plan.messages[m].source, job.plan.job, m, buffer->bytes()};
        std::function<void(Delivery)> cb;
        {
            std::lock_guard lock(mu);
            cb = delivery_cb;
            if (!cb) {
                inbox.push_back(std::move(d));
                inbox_cv.notify_all();
                return;
            }
        }
        cb(std::move(d));
    }

    void run_tasks(const std::shared_ptr<Job>& job) {
        const JobPlan& plan = job->plan;
        std::size_t i = 0;
        std::string failure;
        // A verified copy is forwarded at once; landing it (fsync, rename) runs alongside,
        // and it counts as delivered only when it has landed.
        std::vector<std::future<void>> landings;
        try {
            for (; i < plan.tasks.size(); ++i) {
                const JobTask& t = plan.tasks[i];
                const JobMessage& msg = plan.messages[t.message];
                if (t.op == Op::send) {
                    std::shared_ptr<const net::MessageBody> body;
                    {
                        std::lock_guard lock(job->mu);
                        if (job->aborted) throw Error(job->abort_reason);
                        if (auto it = job->held.find(t.message); it != job->held.end()) body = it->second;
                    }
                    if (!body) throw Error("the plan relays " + message_label(t.message) + " before it is held");
                    emulate_send(t.peer, static_cast<double>(msg.size));
                    ConnectionPtr c = conn_to(t.peer, &plan.participants);
                    {
                        std::lock_guard lock(job->mu);
                        ++job->outstanding;
                    }
                    c->send_stream(plan.job, t.message, body, plan.chunk,
                                   [job, peer = t.peer, m = t.message](std::error_code ec) {
                                       std::lock_guard lock(job->mu);
                                       --job->outstanding;
                                       if (ec && job->send_error.empty()) {
                                           job->send_error = "sending " + message_label(m) + " to '" + peer +
                                                             "' failed: " + ec.message();
                                       }
                                       job->cv.notify_all();
                                   });
                } else {
                    auto body = wait_recv(*job, t.message);
                    emulate_recv(static_cast<double>(msg.size));
                    {
                        std::lock_guard lock(job->mu);
                        job->held[t.message] = body;
                    }
                    Recv& r = job->recv.at(t.message);
                    if (r.keep && r.sink) {
                        landings.push_back(std::async(std::launch::async, [this, job, m = t.message, sink = r.sink.get()] {
                            sink->land();
                            emit(*job, JobEvent{JobEvent::Kind::delivered, now_s(), m, 0, {}});
                        }));
                    } else if (r.keep) {
                        emit(*job, JobEvent{JobEvent::Kind::delivered, now_s(), t.message, 0, {}});
                        deliver(*job, t.message, body);
                    }
                }
            }
            std::unique_lock lock(job->mu);
            job->cv.wait(lock, [&] { return job->outstanding == 0 || job->aborted; });
            if (job->aborted) throw Error(job->abort_reason);
            if (!job->send_error.empty()) throw Error(job->send_error);
        } catch (const std::exception& e) {
            failure = e.what();
        }
        for (auto& l : landings) {
            try {
                l.get();
            } catch (const std::exception& e) {
                if (failure.empty()) failure = e.what();
            }
        }
        if (!failure.empty()) {
            // Whoever waits on this node for a message it will not send now is told so.
            for (std::size_t k = i; k < plan.tasks.size(); ++k) {
                const JobTask& t = plan.tasks[k];
                if (t.op != Op::send) continue;
                try {
                    conn_to(t.peer, &plan.participants)
                        ->send(make_frame(FrameType::job_cancel, plan.job, t.message,
                                          "'" + cfg.name + "' failed: " + failure));
                } catch (const std::exception&) {
                    // That peer is unreachable too; its own connection loss tells it.
                }
            }
            log("job " + std::to_string(plan.job) + " failed here: " + failure);
        }
        {
            std::lock_guard lock(job->mu);
            job->held.clear();
            for (auto& [m, r] : job->recv) r.sink.reset();  // removes temporaries
        }
        if (failure.empty()) {
            emit(*job, JobEvent{JobEvent::Kind::done, now_s(), 0, 0, {}});
        } else {
            emit(*job, JobEvent{JobEvent::Kind::failed, now_s(), 0, 0, failure});
        }
        job->finished = true;
    }

    /// Joins and forgets jobs whose task lists have ended.
    void reap() {
        std::vector<std::shared_ptr<Job>> done;
        {
            std::lock_guard lock(mu);
            for (auto it = jobs.begin(); it != jobs.end();) {
                if (it->second->finished) {
                    done.push_back(it->second);
                    it = jobs.erase(it);
                } else {
                    ++it;
                }
            }
        }
        for (auto& j : done) {
            if (j->runner.joinable()) j->runner.join();
        }
    }

    void abort_job(Job& job, const std::string& why) {
        std::lock_guard lock(job.mu);
        job.aborted = true;
        job.abort_reason = why;
        job.cv.notify_all();
    }

    // --- coordinating -------------------------------------------------------------------
    JobReport run(JobSpec spec);
};

JobReport Peer::Impl::run(JobSpec spec) {
    if (!spec.network) throw InputError("a job needs the network it was planned on");
    const Network& net = *spec.network;
    const Schedule& s = spec.schedule;
    if (s.tasks.size() != net.size()) throw InputError("the schedule was planned on another network");
    const auto self_id = net.find(cfg.name);
    if (!self_id) throw InputError("this peer '" + cfg.name + "' is not in the network");
    const Timeline predicted = simulate(net, s, spec.model);

    JobReport report;
    report.algorithm = s.algorithm;
    report.model = std::string(to_string(spec.model));
    report.predicted = predicted.completion;
    report.predicted_one_per_link = spec.model == ExecModel::nonblocking
                                        ? simulate(net, s, spec.model, LinkUse::one_at_a_time).completion
                                        : predicted.completion;
    report.lower_bound = spec.lower_bound;

    JobPlan common;
    common.algorithm = s.algorithm;
    common.coordinator = cfg.name;
    common.chunk = cfg.chunk;
    {
        std::lock_guard lock(mu);
        common.job = rng() >> 1;
    }
    report.job = common.job;
    if (spec.inputs.size() != s.messages.size()) throw InputError("a job needs one input per message");
    for (MessageId m = 0; m < s.messages.size(); ++m) {
        const Message& msg = s.messages[m];
        const JobInput& in = spec.inputs[m];
        JobMessage jm{net.name(msg.source), in.size, in.sha, in.name, {}, in.origin};
        if (msg.source == *self_id && in.body) {
            jm.size = in.body->size();
            jm.sha = in.body->sha256();
            jm.origin.clear();
        } else if (in.origin.empty()) {
            throw InputError("no body and no origin for " + message_label(m));
        }
        for (NodeId d : msg.dests) jm.dests.push_back(net.name(d));
        report.bytes += jm.size;
        common.messages.push_back(std::move(jm));
    }
    std::vector<NodeId> participants;
    for (NodeId n = 0; n < net.size(); ++n) {
        if (!s.tasks[n].empty()) participants.push_back(n);
    }
    for (NodeId n : participants) {
        if (n == *self_id) {
            common.participants.push_back({cfg.name, cfg.host, transport->port()});
            continue;
        }
        const auto m = address(net.name(n), nullptr);
        if (!m) throw InputError("'" + net.name(n) + "' is in the plan but not a member");
        common.participants.push_back(*m);
    }
    for (MessageId m = 0; m < s.messages.size(); ++m) {
        for (NodeId d : s.messages[m].dests) {
            Outcome o{m, net.name(s.messages[m].source), net.name(d), 0, 0, false, {}};
            for (const Transfer& t : predicted.transfers) {
                if (t.message == m && t.to == d) o.predicted = t.complete;
            }
            report.outcomes.push_back(std::move(o));
        }
    }

    auto k = std::make_shared<Coord>();
    for (NodeId n : participants) k->nodes[net.name(n)];
    {
        std::lock_guard lock(mu);
        coords[common.job] = k;
    }
    struct Unregister {
        Impl& impl;
        std::uint64_t id;
        ~Unregister() {
            std::lock_guard lock(impl.mu);
            impl.coords.erase(id);
        }
    } unregister{*this, common.job};

    // Every participant gets its plan and says it is ready; nothing moves before that, so
    // an unreachable member or a refused path fails the job with nothing written.
    std::shared_ptr<Job> own;
    std::vector<std::string> remote;
    std::string setup_error;
    for (NodeId n : participants) {
        JobPlan p = common;
        p.tasks = tasks_of(s, net.names(), n);
        const std::string& name = net.name(n);
        if (n == *self_id) {
            try {
                own = make_job(std::move(p), nullptr);
                for (MessageId m = 0; m < s.messages.size(); ++m) {
                    if (s.messages[m].source == *self_id && spec.inputs[m].body) own->held[m] = spec.inputs[m].body;
                }
                std::lock_guard lock(k->mu);
                k->nodes[name].ready = true;
            } catch (const std::exception& e) {
                setup_error = e.what();
            }
            continue;
        }
        try {
            ConnectionPtr c = conn_to(name, &common.participants);
            {
                std::lock_guard lock(k->mu);
                k->nodes[name].conn = c;
                k->nodes[name].sent = now_s();
            }
            c->send(make_frame(FrameType::job_plan, common.job, 0, to_json(p).dump()));
            remote.push_back(name);
        } catch (const std::exception& e) {
            std::lock_guard lock(k->mu);
            k->nodes[name].finished = true;
            k->nodes[name].error = e.what();
        }
    }
    const auto setup_deadline = Clock::now() + 2 * cfg.connect_timeout;
    {
        std::unique_lock lock(k->mu);
        k->cv.wait_until(lock, setup_deadline, [&] {
            return stopping || std::all_of(k->nodes.begin(), k->nodes.end(),
                                           [](const auto& kv) { return kv.second.ready || kv.second.finished; });
        });
        for (auto& [name, n] : k->nodes) {
            if (!n.ready && !n.finished) {
                n.finished = true;
                n.error = "'" + name + "' did not answer the job plan in time";
            }
            if (!n.ready && setup_error.empty()) setup_error = name + ": " + n.error;
        }
    }
    const auto cancel_all = [&](const std::string& why) {
        for (const auto& name : remote) {
            std::lock_guard lock(k->mu);
            if (auto& c = k->nodes[name].conn) c->send(make_frame(FrameType::job_cancel, common.job, net::all_messages, why));
        }
        if (own) abort_job(*own, why);
    };
    if (!setup_error.empty()) {
        cancel_all("job not started: " + setup_error);
        if (own) {
            std::lock_guard lock(mu);
            jobs.erase(common.job);
        }
        for (auto& o : report.outcomes) o.error = "not started: " + setup_error;
        return report;
    }

    const double t0 = now_s();
    {
        std::lock_guard lock(k->mu);
        k->started = t0;
    }
    for (const auto& name : remote) {
        std::lock_guard lock(k->mu);
        k->nodes[name].conn->send(make_frame(FrameType::job_start, common.job, 0, {}));
    }
    if (own) start_runner(own);

    const auto deadline = Clock::now() + spec.timeout;
    const std::uint64_t owed = [&] {
        std::uint64_t b = 0;
        for (const auto& m : common.messages) b += m.size * m.dests.size();
        return b;
    }();
    std::uint64_t shown = ~std::uint64_t{0};
    bool timed_out = false;
    {
        std::unique_lock lock(k->mu);
        while (true) {
            const bool all = std::all_of(k->nodes.begin(), k->nodes.end(), [](const auto& kv) { return kv.second.finished; });
            if (all || stopping) break;
            if (Clock::now() > deadline) {
                timed_out = true;
                break;
            }
            k->cv.wait_for(lock, std::chrono::milliseconds(100));
            if (spec.progress && k->bytes_in != shown) {
                shown = k->bytes_in;
                const auto b = std::min(shown, owed);
                lock.unlock();
                spec.progress(b, owed);
                lock.lock();
            }
        }
    }
    if (timed_out || stopping) cancel_all(timed_out ? "the job timed out" : "the coordinator is stopping");

    std::lock_guard lock(k->mu);
    for (auto& [name, n] : k->nodes) {
        if (!n.finished) n.error = timed_out ? "timed out" : "the coordinator stopped";
    }
    for (auto& o : report.outcomes) {
        if (auto it = k->delivered.find({o.message, o.dest}); it != k->delivered.end()) {
            // Whatever error the offset has left, a delivery lies between the start and its event's arrival.
            const double at = std::clamp(it->second.node_clock - k->nodes[o.dest].bounded_offset(), t0, it->second.arrived);
            o.ok = true;
            o.achieved = at - t0;
            report.achieved = std::max(report.achieved, o.achieved);
        } else {
            const auto& n = k->nodes[o.dest];
            o.error = n.error.empty() ? "not delivered" : n.error;
        }
    }
    if (spec.progress) spec.progress(owed - std::min(owed, [&] {
        std::uint64_t missing = 0;
        for (const auto& o : report.outcomes) {
            if (!o.ok) missing += common.messages[o.message].size;
        }
        return missing;
    }()), owed);
    return report;
}

Peer::Peer(PeerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {
    if (impl_->cfg.name.empty()) throw InputError("a peer needs a name");
    if (impl_->cfg.spool.empty()) impl_->cfg.spool = impl_->cfg.dest_root / ".hetcast-spool";
}

Peer::~Peer() { stop(); }

void Peer::start() {
    Impl& d = *impl_;
    net::TransportConfig tc;
    tc.name = d.cfg.name;
    tc.secret = d.cfg.secret;
    tc.host = d.cfg.host;
    tc.port = d.cfg.port;
    if (d.cfg.chunk == 0 || d.cfg.chunk > max_chunk) throw InputError("chunk must be 1 byte to 8 MiB");
    tc.max_frame = max_chunk + 4096;
    tc.timeout = d.cfg.connect_timeout;
    net::TransportCallbacks cb;
    cb.on_frame = [&d](const ConnectionPtr& c, Frame&& f) { d.on_frame(c, std::move(f)); };
    cb.on_close = [&d](const ConnectionPtr& c, const std::string& why) { d.on_close(c, why); };
    cb.on_open = [&d](const ConnectionPtr& c) { d.on_open(c); };
    cb.log = [&d](const std::string& line) { d.log(line); };
    d.transport = net::make_tcp_transport(tc, cb);
    d.transport->start();
}

void Peer::stop() {
    Impl& d = *impl_;
    if (!d.transport || d.stopping.exchange(true)) return;
    std::vector<std::shared_ptr<Job>> js;
    {
        std::lock_guard lock(d.mu);
        for (auto& [id, j] : d.jobs) js.push_back(j);
        for (auto& [id, k] : d.coords) k->cv.notify_all();
        d.inbox_cv.notify_all();
    }
    for (auto& j : js) d.abort_job(*j, "the peer is stopping");
    for (auto& j : js) {
        if (j->runner.joinable()) j->runner.join();
    }
    d.transport->stop();
    std::vector<Impl::Helper> hs;
    {
        std::lock_guard lock(d.mu);
        hs.swap(d.helpers);
        d.pings.clear();
        d.calls.clear();
    }
    for (auto& h : hs) h.thread.join();
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

JobReport Peer::run(JobSpec spec) { return impl_->run(std::move(spec)); }

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

void Peer::on_request(std::function<void(const std::string&, const nlohmann::json&, Responder)> handler) {
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

Peer::Described Peer::describe(const std::string& member, const std::string& origin) {
    if (member == impl_->cfg.name) {
        const auto body = impl_->resolve(origin);
        return {body->size(), body->sha256()};
    }
    const json a = call(member, {{"cmd", "describe"}, {"origin", origin}}, impl_->cfg.connect_timeout);
    if (!a.value("ok", false)) throw InputError(a.value("error", "'" + member + "' cannot describe '" + origin + "'"));
    const auto size = a.find("size");
    const auto sha = a.find("sha256");
    if (size == a.end() || !size->is_number_unsigned() || sha == a.end() || !sha->is_string()) {
        throw Error("'" + member + "' described '" + origin + "' without a size and a sha256");
    }
    if (size->get<std::uint64_t>() > impl_->cfg.max_message) throw InputError("'" + origin + "' is over the size limit");
    return {size->get<std::uint64_t>(), digest_from_hex(sha->get<std::string>())};
}

namespace {

json await_answer(std::future<json>& answer, std::chrono::milliseconds timeout, const std::string& who,
                  const std::function<void()>& forget) {
    if (answer.wait_for(timeout) != std::future_status::ready) {
        forget();
        throw Error(who + " did not answer in " + std::to_string(timeout.count()) + " ms");
    }
    try {
        return answer.get();
    } catch (const std::future_error&) {
        throw Error("the peer stopped before " + who + " answered");
    }
}

}  // namespace

json Peer::call(const std::string& member, const json& request, std::chrono::milliseconds timeout) {
    return call_on(impl_->conn_to(member), "'" + member + "'", request, timeout);
}

std::pair<json, std::string> Peer::call_at(const std::string& host, std::uint16_t port, const json& request,
                                           std::chrono::milliseconds timeout) {
    ConnectionPtr c = impl_->transport->connect(host, port);
    json answer = call_on(c, host + ":" + std::to_string(port), request, timeout);
    const std::string name = c->peer();
    c->close();
    return {std::move(answer), name};
}

json Peer::call_on(const ConnectionPtr& c, const std::string& who, const json& request,
                   std::chrono::milliseconds timeout) {
    Impl& d = *impl_;
    std::future<json> answer;
    std::uint32_t seq = 0;
    {
        std::lock_guard lock(d.mu);
        seq = ++d.call_seq;
        answer = d.calls[seq].get_future();
    }
    c->send(make_frame(FrameType::request, 0, seq, request.dump()));
    return await_answer(answer, timeout, who, [&] {
        std::lock_guard lock(d.mu);
        d.calls.erase(seq);
    });
}

std::vector<PingSample> Peer::ping(const std::string& member, const std::vector<std::size_t>& sizes, int reps) {
    Impl& d = *impl_;
    ConnectionPtr c = d.conn_to(member);
    std::vector<PingSample> out;
    for (std::size_t size : sizes) {
        for (int r = 0; r < reps; ++r) {
            std::future<std::pair<double, double>> answer;
            std::uint32_t seq = 0;
            {
                std::lock_guard lock(d.mu);
                seq = ++d.ping_seq;
                answer = d.pings[seq].get_future();
            }
            const double sent = now_s();
            c->send(Frame{FrameHeader{FrameType::ping, 0, 0, seq, 0},
                          std::vector<std::byte>(std::max(size, sizeof(double)))});
            if (answer.wait_for(d.cfg.connect_timeout) != std::future_status::ready) {
                std::lock_guard lock(d.mu);
                d.pings.erase(seq);
                throw Error("no answer from '" + member + "' to a ping of " + std::to_string(size) + " bytes");
            }
            const auto [peer_time, received] = answer.get();
            out.push_back(PingSample{static_cast<double>(size), sent, peer_time, received});
        }
    }
    return out;
}

std::optional<std::string> Peer::unreachable(const std::string& member) {
    try {
        (void)impl_->conn_to(member);
        return std::nullopt;
    } catch (const std::exception& e) {
        return e.what();
    }
}

}  // namespace hetcast
