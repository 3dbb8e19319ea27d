// Pushes that wait for busy members (issue 27): max_jobs limits what runs, not what may
// wait. A try that members refused only because they already take part in max_jobs jobs
// moved nothing; the push queues at its coordinator, in order. The head asks the members
// every 100-200 ms whether they have room ({"cmd": "flows"}, answered at once) and tries
// the same plan again when they do: a blind backoff left the uplinks idle for seconds
// after a job ended, and a try that finds them still full costs a whole set-up.
#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <string>

#include "peer_recover.hpp"

namespace hetcast::detail {

JobReport Recovery::wait_for_members(const JobSpec& spec, Clock::time_point deadline, Try& result, JobReport report) {
    // Whether a try failed to start only because members were busy.
    const auto only_busy = [](const Try& t) {
        return t.not_started && !t.failed.empty() && std::all_of(t.failed.begin(), t.failed.end(), [](const auto& kv) {
                   return kv.second.find("busy: ") != std::string::npos;
               });
    };
    if (!only_busy(result)) return report;
    const std::uint64_t id = report.job;
    std::uint64_t owed = 0;
    for (const Message& m : spec.schedule.messages) owed += static_cast<std::uint64_t>(m.size) * m.dests.size();
    {
        std::lock_guard lock(mu_);
        if (waiting_.size() >= max_waiting) {
            for (Outcome& o : report.outcomes) {
                if (!o.ok) o.error += " (and " + std::to_string(waiting_.size()) + " pushes wait at this coordinator already)";
            }
            return report;
        }
        waiting_.push_back({id, spec.schedule.algorithm, now_s(), owed, {}});
    }
    std::string busy;
    for (const auto& [who, why] : result.failed) busy += (busy.empty() ? "" : ", ") + who;
    core_.log(LogLevel::info, "job " + std::to_string(id) + ": waits for busy members (" + busy + ")");
    if (spec.progress) {
        JobProgress p;
        p.owed = owed;
        for (const std::string& name : spec.network->names()) p.members.push_back({name, "queued", 0, 0});
        spec.progress(p);
    }
    const auto leave = [&] {
        std::lock_guard lock(mu_);
        waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), [&](const Waiting& w) { return w.job == id; }),
                      waiting_.end());
        cv_.notify_all();
    };
    std::mt19937_64 jitter(id);
    // Coordinators polling the same members spread their tries: the first to see room
    // after a job ends takes it, the others see it full.
    const auto poll = [&] { return std::chrono::milliseconds(100 + jitter() % 100); };
    std::chrono::milliseconds backoff = poll();
    std::vector<std::string> members;
    for (NodeId n = 0; n < spec.network->size(); ++n) {
        if (!spec.schedule.tasks[n].empty()) members.push_back(spec.network->name(n));
    }
    for (;;) {
        std::string stop;
        bool turn = false;
        {
            std::unique_lock lock(mu_);
            const auto until = std::min(deadline, Clock::now() + backoff);
            const auto mine = [&] {
                return std::find_if(waiting_.begin(), waiting_.end(), [&](const Waiting& w) { return w.job == id; });
            };
            cv_.wait_until(lock, until, [&] { return core_.stopping.load() || !mine()->cancelled.empty(); });
            if (core_.stopping) {
                stop = "the coordinator is stopping";
            } else if (!mine()->cancelled.empty() || tries_.cancelled(id)) {
                stop = "cancelled: " + (mine()->cancelled.empty() ? std::string("by the coordinator") : mine()->cancelled);
            } else if (Clock::now() >= deadline) {
                stop = "timed out while waiting for busy members";
            }
            turn = !waiting_.empty() && waiting_.front().job == id;
        }
        if (!stop.empty()) {
            leave();
            result.final = true;
            for (Outcome& o : report.outcomes) {
                if (!o.ok) o.error = stop;
            }
            return report;
        }
        if (!turn) continue;
        backoff = poll();
        if (!room(members)) continue;
        Try next;
        JobReport r = coordinator_.run_try(spec, id, deadline, next);
        if (!only_busy(next)) {
            leave();
            result = std::move(next);
            return r;
        }
        report = std::move(r);
    }
}

bool Recovery::cancel(std::uint64_t push, const std::string& why) {
    std::lock_guard lock(mu_);
    const auto w = std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& x) { return x.job == push; });
    if (w == waiting_.end()) return false;
    if (w->cancelled.empty()) w->cancelled = why;
    cv_.notify_all();
    return true;
}

void Recovery::info(std::vector<JobInfo>& out, double now) const {
    std::lock_guard lock(mu_);
    for (const auto& w : waiting_) {
        JobInfo i;
        i.job = w.job;
        i.role = "coordinator";
        i.coordinator = core_.cfg.name;
        i.algorithm = w.algorithm;
        i.seconds = now - w.since;
        i.owed = w.owed;
        i.state = "queued";
        out.push_back(std::move(i));
    }
}

void Recovery::wake_all() {
    std::lock_guard lock(mu_);
    cv_.notify_all();
}

}  // namespace hetcast::detail
