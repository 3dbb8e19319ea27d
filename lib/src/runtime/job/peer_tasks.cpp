// A participant's part of a job: taking a plan, preparing where each message goes,
// receiving data, and running the task list (sends, receives, deliveries) on the job's
// own thread.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/tree.hpp"
#include "../peer_impl.hpp"

namespace hetcast {
namespace fs = std::filesystem;
using namespace detail;

// --- link emulation -------------------------------------------------------------
void Peer::Impl::busy(double seconds) const {
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

void Peer::Impl::emulate_send(const std::string& to, double bytes) const {
    if (auto j = profile_id(to)) busy(cfg.link_profile->send_busy(*profile_self, *j, bytes));
}

void Peer::Impl::emulate_recv(double bytes) const {
    if (profile_self) busy(cfg.link_profile->recv_busy(*profile_self, bytes));
}

// --- a job arriving: its plan, start, data and cancellations ---------------------
std::shared_ptr<const net::MessageBody> Peer::Impl::generated(const std::string& origin) {
    std::uint64_t size = 0, seed = 0;
    char extra = 0;
    if (std::sscanf(origin.c_str(), "gen:%lu:%lu%c", &size, &seed, &extra) != 2) {
        throw InputError("bad origin '" + origin.substr(0, 40) + "' (gen:SIZE:SEED)");
    }
    if (size > (std::uint64_t{1} << 30)) throw InputError("generated payloads are at most 1 GiB");
    return make_generated_body(size, seed);  // made as it is read, never held whole
}

std::shared_ptr<const net::MessageBody> Peer::Impl::resolve(const std::string& origin) {
    if (origin.rfind("offer:", 0) == 0) {
        std::lock_guard lock(mu);
        const auto it = offers.find(origin.substr(6));
        if (it == offers.end()) throw InputError("'" + cfg.name + "' offers nothing as '" + origin.substr(6) + "'");
        return it->second;
    }
    if (origin.rfind("file:", 0) == 0) {
        // Refused at the member that would read it, before anything is sent.
        const fs::path file = origin.substr(5);
        if (!file.is_absolute()) throw InputError("file origin '" + file.string() + "' is not absolute");
        return std::make_shared<FileBody>(file, &cfg.serve_roots);
    }
    if (origin.rfind("gen:", 0) == 0) return generated(origin);
    throw InputError("unknown origin '" + origin.substr(0, 40) + "'");
}

std::shared_ptr<Job> Peer::Impl::find_job(std::uint64_t id) {
    std::lock_guard lock(mu);
    const auto it = jobs.find(id);
    return it == jobs.end() ? nullptr : it->second;
}

void Peer::Impl::on_plan(const ConnectionPtr& c, const Frame& f) {
    const double received = now_s();
    JobPlan plan = job_plan_from_json(json::parse(net::as_text(f.payload)), cfg.max_message);
    if (plan.coordinator != c->peer()) throw InputError("a job plan from '" + c->peer() + "' names another coordinator");
    const std::uint64_t id = plan.job;
    authorize_plan(plan);
    try {
        auto job = make_job(std::move(plan), c);
        dial_lanes(*job);
        JobEvent ready{.kind = JobEvent::Kind::ready, .clock = now_s(), .message = 0, .bytes = 0, .error = {}, .received = received};
        {
            std::lock_guard lock(job->mu);
            for (const auto& [m, r] : job->recv) {
                if (r.resumed > 0) ready.resume.emplace_back(m, r.resumed);
            }
        }
        emit(*job, ready);
    } catch (const std::exception& e) {
        c->send(json_frame(FrameType::job_report, id, 0, to_json(JobEvent{JobEvent::Kind::failed, now_s(), 0, 0, e.what()})));
    }
}

std::shared_ptr<Job> Peer::Impl::make_job(JobPlan plan, ConnectionPtr coordinator) {
    reap();
    if (cfg.max_jobs > 0) {
        std::lock_guard lock(mu);
        const auto running = static_cast<std::size_t>(
            std::count_if(jobs.begin(), jobs.end(), [](const auto& kv) { return !kv.second->finished; }));
        if (running >= cfg.max_jobs) {
            throw Error("busy: '" + cfg.name + "' takes part in " + std::to_string(running) + " jobs (max_jobs " +
                        std::to_string(cfg.max_jobs) + ")");
        }
    }
    auto job = std::make_shared<Job>();
    job->coordinator = std::move(coordinator);
    for (const JobTask& t : plan.tasks) {
        if (t.op != Op::recv) continue;
        const JobMessage& m = plan.messages.at(t.message);
        Recv r;
        r.from = t.peer;
        r.keep = std::find(m.dests.begin(), m.dests.end(), cfg.name) != m.dests.end();
        if (r.keep && m.name.empty() && !cfg.accept_buffers) {
            throw InputError("'" + cfg.name + "' is a daemon: it keeps files, not buffers (send it a named file)");
        }
        if (r.keep && !m.tree.empty()) check_landing(cfg.dest_root, m.name, m.tree);
        if (!m.name.empty()) {
            // A relay's copy never lands: it is read while held and removed with the job.
            const fs::path target = r.keep ? (m.tree.empty() ? confine(cfg.dest_root, m.name)
                                                             : bundle_path(cfg.dest_root, m.name, m.sha))
                                           : cfg.spool / ("job-" + std::to_string(plan.job) + "-" +
                                                          std::to_string(t.message));
            if (r.keep && plan.relay == Relay::cut_through) {
                // The same file of an earlier try whose feeder failed: go on from its pieces.
                std::lock_guard lock(mu);
                if (auto it = parked.find(target.string()); it != parked.end()) {
                    Parked& p = it->second;
                    if (net::same_digest(p.sha, m.sha) && p.size == m.size && p.piece == plan.piece) {
                        r.sink = std::move(p.sink);
                        r.resumed = p.verified;
                    }
                    parked.erase(it);
                }
            }
            if (r.sink) {
                r.sink->resume_at(r.resumed);
            } else {
                // A destination's copy is confined to dest_root (no symlink followed).
                r.sink = std::make_unique<FileSink>(target, m.size, r.keep ? cfg.dest_root : fs::path());
            }
            r.sink->set_mode(m.mode, m.preserve ? 0 : cfg.umask);
            if (m.preserve && m.mtime) r.sink->set_mtime(*m.mtime);
        } else {
            r.buf_hash = std::make_unique<ChunkHasher>(m.size >= FileSink::threaded_hash_from);
        }
        if (plan.relay == Relay::cut_through) {
            r.pieces = std::make_shared<PieceTracker>(m.size, plan.piece, m.pieces,
                                                      r.sink ? r.sink->descriptor() : nullptr);
            if (r.resumed > 0) {
                r.pieces->start_at(r.resumed);
                r.got = r.resumed;
            }
        }
        if (!job->recv.emplace(t.message, std::move(r)).second) {
            throw InputError("the plan receives " + message_label(t.message) + " twice");
        }
    }
    for (MessageId m = 0; m < plan.messages.size(); ++m) {
        const JobMessage& msg = plan.messages[m];
        if (msg.source != cfg.name || msg.origin.empty()) continue;
        if (plan.coordinator != cfg.name) authorize_read(msg.origin, plan.order, plan.coordinator);
        auto body = resolve(msg.origin);
        if (body->size() != msg.size || !net::same_digest(body->sha256(), msg.sha)) {
            throw InputError("'" + msg.origin + "' at '" + cfg.name + "' changed since it was described");
        }
        job->held[m] = std::move(body);
    }
    if (plan.bwlimit > 0) {
        std::shared_ptr<detail::Alarm> wakes;
        {
            std::lock_guard lock(mu);
            if (!alarm) alarm = std::make_shared<detail::Alarm>();
            wakes = alarm;
        }
        const double rate = static_cast<double>(plan.bwlimit);
        job->pace = std::make_shared<detail::TokenBucket>(rate, std::min(static_cast<double>(plan.chunk), rate / 10),
                                                          std::move(wakes));
    }
    job->plan = std::move(plan);
    std::lock_guard lock(mu);
    if (stopping) throw Error("the peer is stopping");
    if (!jobs.emplace(job->plan.job, job).second) throw InputError("job " + std::to_string(job->plan.job) + " exists");
    return job;
}

void Peer::Impl::on_start(const ConnectionPtr& c, const Frame& f) {
    auto job = find_job(f.header.job);
    if (!job) {
        // Dropped meanwhile (cancelled, or its start came too late), or never taken: the
        // connection stays, it may be a coordinator's that carries other jobs.
        log(LogLevel::info, "ignored a start of job " + std::to_string(f.header.job) + " from '" + c->peer() +
                                "': no such job here");
        return;
    }
    if (job->coordinator != c) throw InputError("start of a job from another than its coordinator");
    const JobStart start = job_start_from_json(net::as_text(f.payload));
    {
        std::lock_guard lock(job->mu);
        for (const auto& r : start.resume) {
            if (r.message >= job->plan.messages.size() || r.offset > job->plan.messages[r.message].size) {
                throw InputError("a start resumes a message past its end");
            }
            job->resume[{r.message, r.to}] = r.offset;
        }
    }
    start_runner(job);
}

void Peer::Impl::start_runner(const std::shared_ptr<Job>& job) {
    std::lock_guard lock(job->mu);
    if (job->runner.joinable() || job->finished || job->aborted) return;
    job->started = now_s();
    job->runner = std::thread([this, job] { run_tasks(job); });
}

void Peer::Impl::refuse_lane(const ConnectionPtr& c, const Frame& f) {
    const std::string why = "job " + std::to_string(f.header.job) + " is over here (or was never taken)";
    log(LogLevel::info, "resetting the connection with '" + c->peer() + "': " + net::to_string(f.header.type) + " of " + why);
    c->abort(why);
}

Recv& Peer::Impl::expect(Job& job, const ConnectionPtr& c, MessageId m) {
    const auto it = job.recv.find(m);
    if (it == job.recv.end() || it->second.from != c->peer()) {
        throw InputError("'" + c->peer() + "' sent " + message_label(m) + ", which this node does not expect from it");
    }
    return it->second;
}

void Peer::Impl::on_data(const ConnectionPtr& c, Frame&& f) {
    auto job = find_job(f.header.job);
    // Data comes on a lane of its job only: a lane whose job is over here is reset, so that
    // its sender stops at once.
    if (!job) return refuse_lane(c, f);
    std::uint64_t report = 0;
    {
        std::lock_guard lock(job->mu);
        Recv& r = expect(*job, c, f.header.message);
        note_lane(*job, c);
        if (r.done || r.ended || !r.error.empty() || job->aborted) return;
        const std::uint64_t size = job->plan.messages[f.header.message].size;
        if (r.got + f.payload.size() > size) {
            r.error = "'" + c->peer() + "' sent more than the " + std::to_string(size) + " bytes of " +
                      message_label(f.header.message);
        } else {
            try {
                const std::size_t n = f.payload.size();
                const double t = now_s();
                if (r.got == 0) r.first = t;
                r.last = t;
                if (r.pieces) {
                    if (cfg.tamper) cfg.tamper(job->plan.job, f.header.message, r.got, f.payload);
                    take_pieces(*job, r, c, f.header.message, f.payload);
                } else if (r.sink) {
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
        if (!r.error.empty() && r.pieces) r.pieces->fail(r.error);
        job->cv.notify_all();
    }
    if (report) emit(*job, JobEvent{JobEvent::Kind::progress, now_s(), 0, report, {}});
}

void Peer::Impl::on_data_end(const ConnectionPtr& c, const Frame& f) {
    auto job = find_job(f.header.job);
    if (!job) return refuse_lane(c, f);  // as in on_data
    if (f.payload.size() != 32) throw InputError("a data_end frame without a SHA-256");
    std::lock_guard lock(job->mu);
    Recv& r = expect(*job, c, f.header.message);
    note_lane(*job, c);
    if (r.done || r.ended) return;
    r.ended = true;
    std::copy(f.payload.begin(), f.payload.end(), r.sent_sha.begin());
    job->cv.notify_all();
}

void Peer::Impl::on_cancel(const ConnectionPtr& c, const Frame& f) {
    auto job = find_job(f.header.job);
    if (job) cancel_job(c, f, *job);
    if (f.header.message == net::all_messages) {
        // The coordinator ends the push: no next try comes for what this member parked when
        // its feeder went first (likely with small pieces). After the abort, nothing parks.
        std::vector<Parked> dropped;  // their temporaries go outside the lock
        std::lock_guard lock(mu);
        for (auto it = parked.begin(); it != parked.end();) {
            if (it->second.job == f.header.job && it->second.coordinator == c->peer()) {
                dropped.push_back(std::move(it->second));
                it = parked.erase(it);
            } else {
                ++it;
            }
        }
    }
}

void Peer::Impl::cancel_job(const ConnectionPtr& c, const Frame& f, Job& job) {
    const std::string why(net::as_text(f.payload));
    // Only the job's coordinator cancels it, or a message's feeder that message: a member
    // cannot stop jobs it merely knows the id of.
    const std::string& who = c->peer();
    bool allowed = job.plan.coordinator == who;
    if (!allowed && f.header.message != net::all_messages) {
        std::lock_guard lock(job.mu);
        const auto it = job.recv.find(f.header.message);
        allowed = it != job.recv.end() && it->second.from == who;
    }
    if (!allowed) {
        log(LogLevel::warn, "ignored a cancel of job " + std::to_string(f.header.job) + " from '" + who + "', which neither coordinates it nor feeds that message");
        return;
    }
    if (f.header.message == net::all_messages) {
        abort_job(job, why);
    } else {
        cancel_receive(job, f.header.message, why);
    }
}

void Peer::Impl::cancel_receive(Job& job, MessageId m, const std::string& why) {
    std::lock_guard lock(job.mu);
    if (auto it = job.recv.find(m); it != job.recv.end() && !it->second.done) {
        it->second.from_failed = true;
        if (it->second.error.empty()) it->second.error = why;
        if (it->second.pieces) it->second.pieces->fail(why);
    }
    job.cv.notify_all();
}

// --- a participant's task list ------------------------------------------------------
std::shared_ptr<const net::MessageBody> Peer::Impl::wait_recv(Job& job, MessageId m) {
    std::unique_lock lock(job.mu);
    Recv& r = job.recv.at(m);
    const JobMessage& msg = job.plan.messages.at(m);
    auto last = std::make_pair(r.got, Clock::now());
    // A cut-through message may still wait for pieces asked for again after data_end.
    const auto in = [&] { return r.ended && (!r.pieces || r.pieces->complete()); };
    while (!in() && r.error.empty() && !job.aborted) {
        job.cv.wait_for(lock, std::chrono::milliseconds(200));
        if (r.got != last.first) {
            last = {r.got, Clock::now()};
        } else if (r.got > 0 &&
                   Clock::now() - std::max(last.second, job.heard_from(r.from)) > receive_stall(job.plan, cfg.stall_timeout)) {
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
    const std::shared_ptr<PieceTracker> pieces = r.pieces;
    lock.unlock();
    std::shared_ptr<const net::MessageBody> body;
    if (sink) {
        sink->verify(msg.sha);  // throws when the bytes do not match
        body = sink->body();
    } else if (pieces) {
        // Whole-message check too: the pieces' digests are only as good as the plan's.
        auto bytes = pieces->joined();
        net::Sha256 h;
        h.update(*bytes);
        if (!net::same_digest(h.finish(), msg.sha)) throw Error("checksum mismatch for " + message_label(m));
        body = std::make_shared<BufferBody>(std::move(bytes), msg.sha);
    } else {
        if (!net::same_digest(buf_hash->finish(), msg.sha)) throw Error("checksum mismatch for " + message_label(m));
        body = std::make_shared<BufferBody>(std::make_shared<const std::vector<std::byte>>(std::move(buf)), msg.sha);
    }
    lock.lock();
    r.done = true;
    r.body = body;
    return body;
}

void Peer::Impl::deliver(const Job& job, MessageId m, const std::shared_ptr<const net::MessageBody>& body) {
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

void Peer::Impl::run_tasks(const std::shared_ptr<Job>& job) {
    const JobPlan& plan = job->plan;
    std::size_t i = 0;
    std::string failure;
    // A verified copy is forwarded at once; landing it (fsync, rename) runs alongside,
    // and it counts as delivered only when it has landed.
    std::vector<std::future<void>> landings;
    std::vector<MessageId> pending;  ///< cut-through messages whose sends started
    const auto take_whole = [&](MessageId m) {
        auto body = wait_recv(*job, m);
        emulate_recv(static_cast<double>(plan.messages[m].size));
        Recv& r = job->recv.at(m);
        {
            JobEvent hop{JobEvent::Kind::hop, r.last, m, plan.messages[m].size - r.resumed, {}};  // what this try carried
            hop.peer = r.from;
            hop.first = r.first;
            emit(*job, hop);
        }
        {
            std::lock_guard lock(job->mu);
            if (!r.pieces) job->held[m] = body;
        }
        if (r.keep && r.sink) {
            landings.push_back(std::async(std::launch::async, [this, job, m, sink = r.sink.get()] {
                if (job->plan.messages[m].tree.empty()) {
                    sink->land();
                } else {
                    land_bundle(*job, m, *sink);
                }
                const JobMessage& lm = job->plan.messages[m];
                log(LogLevel::info, "job " + std::to_string(job->plan.job) + ": landed " + (cfg.dest_root / lm.name).string() +
                    (lm.tree.empty() ? "" : " (" + std::to_string(lm.tree.size()) + " entries)") + ", " +
                    std::to_string(lm.size) + " bytes, sha256 " + net::to_hex(lm.sha) + ", from '" + lm.source + "'");
                emit(*job, JobEvent{JobEvent::Kind::delivered, now_s(), m, 0, {}});
            }));
        } else if (r.keep) {
            emit(*job, JobEvent{JobEvent::Kind::delivered, now_s(), m, 0, {}});
            deliver(*job, m, body);
        }
    };
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
                {
                    // The receiver holds a prefix from an earlier try: only the rest goes.
                    std::lock_guard lock(job->mu);
                    if (auto it = job->resume.find({t.message, t.peer}); it != job->resume.end()) {
                        body = suffix_of(std::move(body), it->second);
                    }
                }
                body = counted(std::move(body), stats, msg.source != cfg.name);
                if (job->pace) body = detail::paced(std::move(body), job->pace);
                emulate_send(t.peer, static_cast<double>(msg.size));
                ConnectionPtr c = lane_to(*job, t.peer);
                {
                    std::lock_guard lock(job->mu);
                    ++job->outstanding;
                }
                // A child that cannot be fed (gone, frozen) costs only itself: the
                // coordinator sees it fail and re-serves what it feeds; its siblings go on.
                c->send_stream(plan.job, t.message, body, frame_bytes(plan),
                               [this, job, peer = t.peer, m = t.message](std::error_code ec) {
                                   std::lock_guard lock(job->mu);
                                   --job->outstanding;
                                   if (ec && !job->aborted) {
                                       log(LogLevel::warn, "job " + std::to_string(job->plan.job) + ": sending " + message_label(m) +
                                           " to '" + peer + "' failed: " + ec.message());
                                   }
                                   job->cv.notify_all();
                               });
            } else if (plan.relay == Relay::cut_through) {
                // Sends of this message start once its first piece is in; the message is
                // taken whole (verified, landed) after the task list.
                wait_first_piece(*job, t.message);
                std::lock_guard lock(job->mu);
                Recv& r = job->recv.at(t.message);
                job->held[t.message] = r.pieces->body(msg.sha);
                pending.push_back(t.message);
            } else {
                take_whole(t.message);
            }
        }
        for (MessageId m : pending) take_whole(m);
        std::unique_lock lock(job->mu);
        job->cv.wait(lock, [&] { return job->outstanding == 0 || job->aborted; });
        if (job->aborted) throw Error(job->abort_reason);
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
        log(LogLevel::warn, "job " + std::to_string(plan.job) + " failed here: " + failure);
    }
    {
        std::lock_guard lock(job->mu);
        end_lanes(*job, !failure.empty(), failure);
        // A cut-through child may still ask for a piece again after every byte went out:
        // what was sent stays readable until the job is reaped.
        if (plan.relay != Relay::cut_through || !failure.empty()) job->held.clear();
        for (auto& [m, r] : job->recv) {
            if (r.pieces) r.pieces->fail(failure.empty() ? "the job ended" : failure);  // no send waits on it now
            if (!r.done && r.error.empty()) r.error = failure.empty() ? "the job ended" : failure;  // late data is dropped
            // A destination's verified pieces wait for the next try when its feeder failed
            // (not when the job was cancelled or this node failed on its own).
            const JobMessage& msg = plan.messages[m];
            if (plan.retry && !r.done && r.keep && r.sink && r.pieces && !job->aborted && r.from_failed) {
                const std::uint64_t v = r.pieces->verified();
                if (v > 0 && v < msg.size && v % plan.piece == 0) {
                    const std::string key = r.sink->final_path().string();
                    std::lock_guard lock(mu);
                    parked[key] = Parked{std::move(r.sink), v, msg.sha, msg.size, plan.piece, now_s(), plan.job, plan.coordinator};
                    log(LogLevel::info, "job " + std::to_string(plan.job) + ": keeping " + std::to_string(v) + " verified bytes of " +
                        key + " for the next try");
                }
            }
            r.sink.reset();  // removes temporaries
        }
    }
    if (failure.empty()) {
        emit(*job, JobEvent{JobEvent::Kind::done, now_s(), 0, 0, {}});
    } else {
        emit(*job, JobEvent{JobEvent::Kind::failed, now_s(), 0, 0, failure});
    }
    job->finished = true;
}

void Peer::Impl::reap() {
    const double now = now_s();
    // A job that never starts (its coordinator gone or cancelled before the start) is
    // dropped with its temporary files once its start is overdue.
    const double overdue = 2 * std::chrono::duration<double>(cfg.connect_timeout).count() +
                           std::chrono::duration<double>(cfg.stall_timeout).count();
    std::vector<std::shared_ptr<Job>> all;
    {
        std::lock_guard lock(mu);
        for (const auto& [id, j] : jobs) all.push_back(j);
    }
    std::vector<Parked> expired;  // their temporaries go when this goes, outside the lock
    {
        std::lock_guard lock(mu);
        for (auto it = parked.begin(); it != parked.end();) {
            if (now - it->second.at > parked_for) {
                expired.push_back(std::move(it->second));
                it = parked.erase(it);
            } else {
                ++it;
            }
        }
    }
    std::vector<std::shared_ptr<Job>> done;
    for (const auto& j : all) {
        std::lock_guard jl(j->mu);  // never under mu: a job's lock may be held while taking mu
        if (!j->finished && !j->runner.joinable() && (j->aborted || now - j->planned > overdue)) {
            j->finished = true;
            if (!j->aborted) log(LogLevel::warn, "job " + std::to_string(j->plan.job) + " never started; dropped");
        }
        if (j->finished) done.push_back(j);
    }
    {
        std::lock_guard lock(mu);
        for (const auto& j : done) {
            if (auto it = jobs.find(j->plan.job); it != jobs.end() && it->second == j) jobs.erase(it);
        }
    }
    for (auto& j : done) {
        if (j->runner.joinable()) j->runner.join();
    }
}

void Peer::Impl::abort_job(Job& job, const std::string& why) {
    std::lock_guard lock(job.mu);
    job.aborted = true;
    job.abort_reason = why;
    end_lanes(job, true, why);
    for (auto& [m, r] : job.recv) {
        if (r.pieces) r.pieces->fail(why);
    }
    job.cv.notify_all();
}

}  // namespace hetcast
