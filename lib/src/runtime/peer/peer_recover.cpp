// A push that outlives its members: tries of one job until every live destination has the
// message. After a try in which members failed, the destinations they orphaned (alive,
// not failed themselves) are planned again without them (JobSpec::replan) and served from
// the source; the report keeps the first plan's predictions and names every failed member.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "peer_recover.hpp"

namespace hetcast::detail {

JobReport Recovery::run(JobSpec spec) {
    if (!spec.network) throw InputError("a job needs the network it was planned on");
    const Network& net = *spec.network;
    const auto deadline = spec.timeout > std::chrono::milliseconds::zero() ? Clock::now() + spec.timeout
                                                                           : Clock::time_point::max();
    Try result;
    JobReport report = wait_for_members(spec, deadline, result, coordinator_.run_try(spec, 0, deadline, result));
    const double first_start = result.started;
    std::map<std::string, std::string> failed = result.failed;
    const auto missing = [&] {
        std::vector<NodeId> dests;
        for (const Outcome& o : report.outcomes) {
            if (!o.ok && !failed.count(o.dest)) dests.push_back(net.id(o.dest));
        }
        return dests;
    };
    const auto source_alive = [&] {
        return spec.schedule.messages.size() == 1 && !failed.count(net.name(spec.schedule.messages[0].source));
    };
    for (int attempt = 2; attempt <= max_tries; ++attempt) {
        if (result.final || !spec.replan || !source_alive()) break;
        const auto dests = missing();
        if (dests.empty()) break;
        if (core_.stopping || tries_.cancelled(report.job)) break;
        JobSpec again = spec;
        try {
            std::vector<NodeId> avoid;  // failed members relay nothing in the next try
            for (const auto& [who, why] : failed) {
                if (const auto id = net.find(who)) avoid.push_back(*id);
            }
            again.schedule = spec.replan(dests, avoid);
        } catch (const std::exception& e) {
            core_.log(LogLevel::warn, "job " + std::to_string(report.job) + ": cannot plan the re-serving: " + e.what());
            break;
        }
        if (again.schedule.relay == Relay::cut_through && spec.schedule.relay == Relay::cut_through) {
            again.schedule.piece = spec.schedule.piece;
        }
        std::string names;
        for (NodeId d : dests) names += (names.empty() ? "" : ", ") + net.name(d);
        core_.log(LogLevel::info, "job " + std::to_string(report.job) + ": re-serving " + names + " (try " + std::to_string(attempt) + ", " +
            again.schedule.algorithm + ")");
        Try next;
        const JobReport r = coordinator_.run_try(again, report.job, deadline, next);
        // Times of this try count from the first try's start.
        const double elapsed_before = next.started - first_start;
        for (const auto& [who, why] : next.failed) failed.emplace(who, why);
        result.final = next.final;
        report.attempts = attempt;
        for (const Outcome& o : r.outcomes) {
            for (Outcome& mine : report.outcomes) {
                if (mine.message != o.message || mine.dest != o.dest || mine.ok) continue;
                if (o.ok) {
                    mine.ok = true;
                    mine.error.clear();
                    mine.achieved = elapsed_before + o.achieved;
                    mine.attempt = attempt;
                    report.achieved = std::max(report.achieved, mine.achieved);
                } else {
                    mine.error = o.error;
                }
            }
        }
        for (Hop h : r.hops) {
            h.start += elapsed_before;
            h.end += elapsed_before;
            report.hops.push_back(std::move(h));
        }
    }
    for (const auto& [who, why] : failed) report.failed_members.push_back({who, why});
    tries_.forget_cancel(report.job);
    return report;
}

}  // namespace hetcast::detail
