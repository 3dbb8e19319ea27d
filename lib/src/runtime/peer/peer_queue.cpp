// Pushes that wait for busy members (issue 27): max_jobs limits what runs, not what may
// wait. A try that members refused only because they already take part in max_jobs jobs
// moved nothing; the push queues at its coordinator, in order, and the head tries the same
// plan again after a backoff until it starts.
#include <algorithm>
#include <random>
#include <string>

#include "peer_impl.hpp"

namespace hetcast {
using namespace detail;

JobReport Peer::Impl::wait_for_members(const JobSpec& spec, Clock::time_point deadline, Try& result, JobReport report) {
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
        std::lock_guard lock(mu);
        if (waiting.size() >= max_waiting) {
            for (Outcome& o : report.outcomes) {
                if (!o.ok) o.error += " (and " + std::to_string(waiting.size()) + " pushes wait at this coordinator already)";
            }
            return report;
        }
        waiting.push_back({id, spec.schedule.algorithm, now_s(), owed, {}});
    }
    std::string busy;
    for (const auto& [who, why] : result.failed) busy += (busy.empty() ? "" : ", ") + who;
    log(LogLevel::info, "job " + std::to_string(id) + ": waits for busy members (" + busy + ")");
    if (spec.progress) {
        JobProgress p;
        p.owed = owed;
        for (const std::string& name : spec.network->names()) p.members.push_back({name, "queued", 0, 0});
        spec.progress(p);
    }
    const auto leave = [&] {
        std::lock_guard lock(mu);
        waiting.erase(std::remove_if(waiting.begin(), waiting.end(), [&](const Waiting& w) { return w.job == id; }),
                      waiting.end());
        waiting_cv.notify_all();
    };
    std::mt19937_64 jitter(id);
    std::chrono::milliseconds backoff(100);
    for (;;) {
        std::string stop;
        bool turn = false;
        {
            std::unique_lock lock(mu);
            const auto until = std::min(deadline, Clock::now() + backoff);
            const auto mine = [&] {
                return std::find_if(waiting.begin(), waiting.end(), [&](const Waiting& w) { return w.job == id; });
            };
            waiting_cv.wait_until(lock, until, [&] { return stopping.load() || !mine()->cancelled.empty(); });
            if (stopping) {
                stop = "the coordinator is stopping";
            } else if (!mine()->cancelled.empty() || coords.cancelled(id)) {
                stop = "cancelled: " + (mine()->cancelled.empty() ? std::string("by the coordinator") : mine()->cancelled);
            } else if (Clock::now() >= deadline) {
                stop = "timed out while waiting for busy members";
            }
            turn = !waiting.empty() && waiting.front().job == id;
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
        Try next;
        JobReport r = run_try(spec, id, deadline, next);
        if (!only_busy(next)) {
            leave();
            result = std::move(next);
            return r;
        }
        report = std::move(r);
        backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(2)) +
                  std::chrono::milliseconds(jitter() % 100);
    }
}

}  // namespace hetcast
