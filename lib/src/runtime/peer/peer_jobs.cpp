// A participant's jobs as a whole: reaping those that ended, aborting one, what a
// connection that closes ends, and what they tell others (flows, job lists, idleness).
#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "peer_participant.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::ConnectionPtr;

void Participant::start_runner(const std::shared_ptr<Job>& job) {
    std::lock_guard lock(job->mu);
    if (job->runner.joinable() || job->finished || job->aborted) return;
    job->started = now_s();
    job->runner = std::thread([this, job] { runner_.run(job); });
}


void Participant::cancel_receive(Job& job, MessageId m, const std::string& why) {
    std::lock_guard lock(job.mu);
    if (auto it = job.recv.find(m); it != job.recv.end() && !it->second.done) {
        it->second.from_failed = true;
        if (it->second.error.empty()) it->second.error = why;
        if (it->second.pieces) it->second.pieces->fail(why);
    }
    job.cv.notify_all();
}


void Participant::reap() {
    const double now = now_s();
    // A job that never starts (its coordinator gone or cancelled before the start) is
    // dropped with its temporary files once its start is overdue.
    const double overdue = 2 * std::chrono::duration<double>(core_.cfg.connect_timeout).count() +
                           std::chrono::duration<double>(core_.cfg.stall_timeout).count();
    const std::vector<std::shared_ptr<Job>> all = jobs_.all();
    (void)parked_.expire(now);  // their temporaries go
    std::vector<std::shared_ptr<Job>> done;
    for (const auto& j : all) {
        std::lock_guard jl(j->mu);  // never under mu: a job's lock may be held while taking mu
        if (!j->finished && !j->runner.joinable() && (j->aborted || now - j->planned > overdue)) {
            j->finished = true;
            if (!j->aborted) core_.log(LogLevel::warn, "job " + std::to_string(j->plan.job) + " never started; dropped");
        }
        if (j->finished) done.push_back(j);
    }
    // Plans arriving at once reap at once: only the thread that removed a job joins its
    // runner (a second join of the same thread threw "No such process" into a set-up).
    std::vector<std::shared_ptr<Job>> mine;
    for (const auto& j : done) {
        if (jobs_.remove(j)) mine.push_back(j);
    }
    for (auto& j : mine) {
        if (j->runner.joinable()) j->runner.join();
    }
}

void Participant::abort(Job& job, const std::string& why) {
    std::lock_guard lock(job.mu);
    job.aborted = true;
    job.abort_reason = why;
    Connections::end_lanes(job, true, why);
    for (auto& [m, r] : job.recv) {
        if (r.pieces) r.pieces->fail(why);
    }
    job.cv.notify_all();
}

json Participant::flows_answer(const std::string& asker) const {
    json out = json::array();
    std::size_t running = 0;
    std::map<std::string, double> set_up;  // per coordinator, its latest job set up here
    for (const auto& j : jobs_.all()) {
        std::lock_guard lock(j->mu);
        double& up = set_up[j->plan.coordinator];
        up = std::max(up, j->planned);
        // What JobSetup::make counts once it has reaped (never on this I/O thread: reaping joins).
        if (!j->finished && !(j->aborted && !j->runner.joinable())) ++running;
        // A job set up but not started may be a try that another member refuses.
        if (j->finished || j->aborted || j->started == 0) continue;
        for (const auto& [m, r] : j->recv) {
            if (r.done || !r.error.empty() || m >= j->plan.messages.size()) continue;
            const std::uint64_t size = j->plan.messages[m].size;
            if (r.got >= size) continue;
            out.push_back({{"job", std::to_string(j->plan.job)},
                           {"from", r.from},
                           {"to", core_.cfg.name},
                           {"left", size - r.got},
                           {"rate", j->plan.bwlimit}});
        }
    }
    json a{{"ok", true}, {"flows", std::move(out)}, {"running", running}, {"max_jobs", core_.cfg.max_jobs}};
    core_.board.answer(a, core_.cfg.name, now_s(), set_up, asker);
    return a;
}

void Participant::closed(const ConnectionPtr& c, const std::optional<Lane>& lane, const std::string& why) {
    const std::string& who = c->peer();
    std::vector<std::shared_ptr<Job>> js;
    std::vector<Parked> unparked;  // their temporaries go when this goes, outside the locks
    for (auto& j : jobs_.all()) {
        if (!lane || j->plan.job == lane->job) js.push_back(j);
    }
    if (!lane) {
        // What this member parked for a next try of a push coordinated over this
        // connection: that try cannot come now. Also when the job was already reaped (its feeder's lane
        // closed first and the job ended before this connection did): it is no longer
        // in `jobs` below, and its temporary file would stay for ParkedStore::keep_for.
        unparked = parked_.drop_control(c.get());
    }
    if (core_.stopping || who.empty()) return;
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
            for (auto& p : parked_.drop_job(j->plan.job)) unparked.push_back(std::move(p));
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
}

void Participant::info(std::vector<JobInfo>& out, double now) const {
    for (const auto& j : jobs_.all()) {
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
}

bool Participant::busy_with(const ConnectionPtr& c) const {
    for (const auto& job : jobs_.all()) {
        if (job->finished) continue;
        if (job->coordinator == c) return true;
        for (const auto& m : job->plan.participants) {
            if (m.name == c->peer()) return true;
        }
    }
    return false;
}

}  // namespace hetcast::detail
