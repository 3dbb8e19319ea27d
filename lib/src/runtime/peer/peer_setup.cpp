// A job arriving at a participant: its plan checked, and where each message goes
// prepared. The job then belongs to the Participant (peer_jobs.cpp); what arrives for
// it goes to Arrivals (peer_arrivals.cpp).
#include "peer_setup.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>

#include "hetcast/error.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/tree.hpp"
#include "../wire/frames.hpp"

namespace hetcast::detail {
namespace fs = std::filesystem;
using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameType;

void JobSetup::on_plan(const ConnectionPtr& c, std::uint64_t frame_job, std::string_view text, bool relayed) {
    const double received = now_s();
    JobPlan plan = job_plan_from_json(json::parse(text), core_.cfg.max_message);
    if (!relayed && plan.coordinator != c->peer()) throw InputError("a job plan from '" + c->peer() + "' names another coordinator");
    if (relayed && plan.job != frame_job) throw InputError("a relayed plan of job " + std::to_string(plan.job) + " in a frame of another");
    const std::uint64_t id = plan.job;
    origins_.authorize_plan(plan);
    try {
        auto job = make(std::move(plan), c);
        const double made = now_s();
        const std::size_t dialled = connections_.dial_lanes(*job);
        core_.log(LogLevel::debug, "job " + std::to_string(id) + " set up in " + std::to_string(std::lround((made - received) * 1000)) +
                                       " ms, " + std::to_string(dialled) + " lanes dialled in " +
                                       std::to_string(std::lround((now_s() - made) * 1000)) + " ms");
        JobEvent ready{.kind = JobEvent::Kind::ready, .clock = now_s(), .message = 0, .bytes = 0, .error = {}, .received = received};
        {
            std::lock_guard lock(job->mu);
            for (const auto& [m, r] : job->recv) {
                if (r.resumed > 0) ready.resume.emplace_back(m, r.resumed);
            }
        }
        runner_.emit(*job, ready);
    } catch (const std::exception& e) {
        c->send(json_frame(FrameType::job_report, id, 0, to_json(JobEvent{JobEvent::Kind::failed, now_s(), 0, 0, e.what()})));
    }
}


std::shared_ptr<Job> JobSetup::make(JobPlan plan, ConnectionPtr coordinator) {
    participant_.reap();
    if (core_.cfg.max_jobs > 0) {
        const std::size_t running = participant_.jobs().running();
        if (running >= core_.cfg.max_jobs) {
            throw Error("busy: '" + core_.cfg.name + "' takes part in " + std::to_string(running) + " jobs (max_jobs " +
                        std::to_string(core_.cfg.max_jobs) + ")");
        }
    }
    auto job = std::make_shared<Job>();
    job->coordinator = std::move(coordinator);
    for (const JobTask& t : plan.tasks) {
        if (t.op != Op::recv) continue;
        const JobMessage& m = plan.messages.at(t.message);
        Recv r;
        r.from = t.peer;
        r.keep = std::find(m.dests.begin(), m.dests.end(), core_.cfg.name) != m.dests.end();
        if (r.keep && m.name.empty() && !core_.cfg.accept_buffers) {
            throw InputError("'" + core_.cfg.name + "' is a daemon: it keeps files, not buffers (send it a named file)");
        }
        if (r.keep && !m.tree.empty()) check_landing(core_.cfg.dest_root, m.name, m.tree);
        if (!m.name.empty()) {
            // A relay's copy never lands: it is read while held and removed with the job.
            const fs::path target = r.keep ? (m.tree.empty() ? confine(core_.cfg.dest_root, m.name)
                                                             : bundle_path(core_.cfg.dest_root, m.name, m.sha))
                                           : core_.cfg.spool / ("job-" + std::to_string(plan.job) + "-" +
                                                          std::to_string(t.message));
            if (r.keep && plan.relay == Relay::cut_through) {
                // The same file of an earlier try whose feeder failed: go on from its pieces.
                if (auto p = parked_.take(target.string())) {
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
                r.sink = std::make_unique<FileSink>(target, m.size, r.keep ? core_.cfg.dest_root : fs::path());
            }
            r.sink->set_mode(m.mode, m.preserve ? 0 : core_.cfg.umask);
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
        if (msg.source != core_.cfg.name || msg.origin.empty()) continue;
        if (plan.coordinator != core_.cfg.name) origins_.authorize_read(msg.origin, plan.order, plan.coordinator);
        auto body = origins_.resolve(msg.origin);
        if (body->size() != msg.size || !net::same_digest(body->sha256(), msg.sha)) {
            throw InputError("'" + msg.origin + "' at '" + core_.cfg.name + "' changed since it was described");
        }
        job->held[m] = std::move(body);
    }
    if (plan.bwlimit > 0) {
        std::shared_ptr<detail::Alarm> wakes;
        {
            std::lock_guard lock(mu_);
            if (!alarm_) alarm_ = std::make_shared<Alarm>();
            wakes = alarm_;
        }
        const double rate = static_cast<double>(plan.bwlimit);
        job->pace = std::make_shared<detail::TokenBucket>(rate, std::min(static_cast<double>(plan.chunk), rate / 10),
                                                          std::move(wakes));
    }
    job->plan = std::move(plan);
    if (core_.stopping) throw Error("the peer is stopping");
    participant_.jobs().add(job);
    return job;
}

}  // namespace hetcast::detail
