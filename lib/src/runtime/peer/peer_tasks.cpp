// A participant's task list (sends, receives, deliveries, bundles landing as trees), run
// on the job's own thread, and the events it reports. Taking the plan: peer_setup.cpp;
// receiving data: peer_arrivals.cpp.
#include <unistd.h>

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
#include "../transfer/pacing.hpp"
#include "../wire/frames.hpp"
#include "peer_tasks.hpp"

namespace hetcast::detail {
using net::ConnectionPtr;
using net::FrameType;

std::shared_ptr<const net::MessageBody> TaskRunner::wait_recv(Job& job, MessageId m) {
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
                   Clock::now() - std::max(last.second, job.heard_from(r.from)) > receive_stall(job.plan, core_.cfg.stall_timeout)) {
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

void TaskRunner::deliver(const Job& job, MessageId m, const std::shared_ptr<const net::MessageBody>& body) {
    const auto* buffer = dynamic_cast<const BufferBody*>(body.get());
    if (!buffer) return;
    inbox_.deliver(Delivery{job.plan.messages[m].source, job.plan.job, m, buffer->bytes()});
}

void TaskRunner::run(const std::shared_ptr<Job>& job) {
    const JobPlan& plan = job->plan;
    std::size_t i = 0;
    std::string failure;
    // A verified copy is forwarded at once; landing it (fsync, rename) runs alongside,
    // and it counts as delivered only when it has landed.
    std::vector<std::future<void>> landings;
    std::vector<MessageId> pending;  ///< cut-through messages whose sends started
    const auto take_whole = [&](MessageId m) {
        auto body = wait_recv(*job, m);
        emulation_.recv(static_cast<double>(plan.messages[m].size));
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
                core_.log(LogLevel::info, "job " + std::to_string(job->plan.job) + ": landed " + (core_.cfg.dest_root / lm.name).string() +
                    (lm.tree.empty() ? "" : " (" + std::to_string(lm.tree.size()) + " entries)") + ", " +
                    std::to_string(lm.size) + " bytes, sha256 " + net::to_hex(lm.sha) + ", from '" + lm.source + "'");
                inbox_.landed(Landed{lm.source, job->plan.job, m, core_.cfg.dest_root / lm.name, lm.size, lm.tree.size()});
                emit(*job, JobEvent{JobEvent::Kind::delivered, now_s(), m, 0, {}});
            }));
        } else if (r.keep) {
            emit(*job, JobEvent{JobEvent::Kind::delivered, now_s(), m, 0, {}});
            deliver(*job, m, body);
        }
    };
    const bool paced = std::any_of(plan.tasks.begin(), plan.tasks.end(), [](const JobTask& t) { return t.pace > 0; });
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
                body = counted(std::move(body), core_.stats, msg.source != core_.cfg.name);
                if (job->pace) body = detail::paced(std::move(body), job->pace);
                emulation_.send(t.peer, static_cast<double>(msg.size));
                ConnectionPtr c = connections_.lane_to(*job, t.peer);
                // A lane carries the job's messages to one peer: each send sets its own
                // pace, the coordinator's latest when it sent one.
                // A planned pace is for the lane's first send: a later one was planned for a
                // moment that the run has rarely kept, and the coordinator's latest for the
                // lane (or for this send) holds until it says otherwise.
                double pace = t.pace;
                bool set = paced;
                {
                    std::lock_guard lock(job->mu);
                    if (auto it = job->paces.find({t.message, t.peer}); it != job->paces.end()) {
                        pace = it->second;
                        set = true;
                    } else if (!job->lanes_sent.insert(t.peer).second) {
                        set = false;
                    }
                    job->lanes_sent.insert(t.peer);
                }
                if (set) (void)c->set_max_pacing(pace);
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
                                       core_.log(LogLevel::warn, "job " + std::to_string(job->plan.job) + ": sending " + message_label(m) +
                                           " to '" + peer + "' failed: " + ec.message());
                                   }
                                   job->cv.notify_all();
                               });
            } else if (plan.relay == Relay::cut_through) {
                // Sends of this message start once its first piece is in; the message is
                // taken whole (verified, landed) after the task list.
                pieces_.wait_first(*job, t.message);
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
                connections_.conn_to(t.peer, &plan.participants)
                    ->send(make_frame(FrameType::job_cancel, plan.job, t.message,
                                      "'" + core_.cfg.name + "' failed: " + failure));
            } catch (const std::exception&) {
                // That peer is unreachable too; its own connection loss tells it.
            }
        }
        core_.log(LogLevel::warn, "job " + std::to_string(plan.job) + " failed here: " + failure);
    }
    {
        std::lock_guard lock(job->mu);
        connections_.end_lanes(*job, !failure.empty(), failure);
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
                    parked_.park(key, Parked{std::move(r.sink), v, msg.sha, msg.size, plan.piece, now_s(), plan.job,
                                            plan.coordinator, job->coordinator.get()});
                    core_.log(LogLevel::info, "job " + std::to_string(plan.job) + ": keeping " + std::to_string(v) + " verified bytes of " +
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

void TaskRunner::land_bundle(const Job& job, MessageId m, const FileSink& bundle) const {
    const JobMessage& msg = job.plan.messages[m];
    const bool root = ::geteuid() == 0;
    // As rsync: only root can give files away; others keep their own and say so.
    if (msg.owner && !root) {
        core_.log(LogLevel::warn,
            "job " + std::to_string(job.plan.job) + ": owners not applied ('" + core_.cfg.name + "' does not run as root)");
    }
    const auto failed = land_tree(core_.cfg.dest_root, msg.name, msg.tree, *bundle.descriptor(),
                                  LandOptions{msg.preserve, core_.cfg.umask, msg.owner && root});
    if (!failed.empty()) throw Error(land_failures_text(failed, msg.tree.size()));
}

void TaskRunner::emit(Job& job, const JobEvent& e) {
    if (job.coordinator) {
        job.coordinator->send(json_frame(FrameType::job_report, job.plan.job, 0, to_json(e)));
    } else {
        local_(job.plan.job, core_.cfg.name, e);
    }
}

}  // namespace hetcast::detail
