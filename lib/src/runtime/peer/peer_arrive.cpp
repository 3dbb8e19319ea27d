// A job arriving at a participant: its plan (checked, and where each message goes
// prepared), its start, its data and its cancellations. The task list that runs it is in
// peer_tasks.cpp.
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
#include "peer_impl.hpp"

namespace hetcast {
namespace fs = std::filesystem;
using namespace detail;

// --- a job arriving: its plan, start, data and cancellations ---------------------
std::shared_ptr<Job> Peer::Impl::find_job(std::uint64_t id) { return jobs.find(id); }

void Peer::Impl::on_plan(const ConnectionPtr& c, const Frame& f) {
    const double received = now_s();
    JobPlan plan = job_plan_from_json(json::parse(net::as_text(f.payload)), cfg.max_message);
    if (plan.coordinator != c->peer()) throw InputError("a job plan from '" + c->peer() + "' names another coordinator");
    const std::uint64_t id = plan.job;
    origins.authorize_plan(plan);
    try {
        auto job = make_job(std::move(plan), c);
        connections.dial_lanes(*job);
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
        const std::size_t running = jobs.running();
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
                if (auto p = parked.take(target.string())) {
                    if (net::same_digest(p->sha, m.sha) && p->size == m.size && p->piece == plan.piece) {
                        r.sink = std::move(p->sink);
                        r.resumed = p->verified;
                    }
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
        if (plan.coordinator != cfg.name) origins.authorize_read(msg.origin, plan.order, plan.coordinator);
        auto body = origins.resolve(msg.origin);
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
    if (stopping) throw Error("the peer is stopping");
    jobs.add(job);
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
        connections.note_lane(*job, c);
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
    connections.note_lane(*job, c);
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
        (void)parked.drop_job(f.header.job, c->peer());
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

}  // namespace hetcast
