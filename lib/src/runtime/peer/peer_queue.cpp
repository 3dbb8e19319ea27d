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
        backoff = poll();
        if (!room(members)) continue;
        Try next;
        JobReport r = run_try(spec, id, deadline, next);
        if (!only_busy(next)) {
            leave();
            result = std::move(next);
            return r;
        }
        report = std::move(r);
    }
}

json Peer::Impl::flows_answer() {
    json out = json::array();
    std::size_t running = 0;
    std::map<std::string, double> set_up;  // per coordinator, its latest job set up here
    for (const auto& j : jobs.all()) {
        std::lock_guard lock(j->mu);
        double& up = set_up[j->plan.coordinator];
        up = std::max(up, j->planned);
        // What make_job counts once it has reaped (never on this I/O thread: reaping joins).
        if (!j->finished && !(j->aborted && !j->runner.joinable())) ++running;
        // A job set up but not started may be a try that another member refuses.
        if (j->finished || j->aborted || j->started == 0) continue;
        for (const auto& [m, r] : j->recv) {
            if (r.done || !r.error.empty() || m >= j->plan.messages.size()) continue;
            const std::uint64_t size = j->plan.messages[m].size;
            if (r.got >= size) continue;
            out.push_back({{"job", std::to_string(j->plan.job)},
                           {"from", r.from},
                           {"to", cfg.name},
                           {"left", size - r.got},
                           {"rate", j->plan.bwlimit}});
        }
    }
    json a{{"ok", true}, {"flows", std::move(out)}, {"running", running}, {"max_jobs", cfg.max_jobs}};
    board.answer(a, cfg.name, now_s(), set_up);
    return a;
}

std::vector<json> Peer::Impl::ask_flows(const std::vector<std::string>& members, const json& request,
                                         std::map<std::string, json>* by_member) {
    std::vector<std::string> others;
    std::vector<json> out;
    for (const std::string& p : members) {
        if (p == cfg.name) {
            out.push_back(flows_answer());
            if (by_member) (*by_member)[p] = out.back();
        } else {
            others.push_back(p);
        }
    }
    if (others.empty() || !owner) return out;
    // Not worth a stall: a member slow to answer counts as running nothing.
    const auto patience = std::min<std::chrono::milliseconds>(cfg.connect_timeout, std::chrono::seconds(1));
    const Peer::Answers a = owner->call_all(others, request, patience);
    for (std::size_t i = 0; i < a.responses.size() && i < others.size(); ++i) {
        const json& r = a.responses[i];
        const bool good = r.is_object() && r.value("ok", false) && r.contains("flows") && r["flows"].is_array();
        if (good) out.push_back(r);
        if (by_member) (*by_member)[others[i]] = good ? r : json::object();
    }
    return out;
}

bool Peer::Impl::room(const std::vector<std::string>& members) {
    for (const json& a : ask_flows(members)) {
        try {
            const auto most = a.at("max_jobs").get<std::uint64_t>();
            if (most > 0 && a.at("running").get<std::uint64_t>() >= most) return false;
        } catch (const json::exception&) {
            // An older member: the try finds out.
        }
    }
    return true;
}

Peer::Impl::Beside Peer::Impl::beside(const Network& net, const std::vector<std::string>& participants,
                                      const Schedule* plan, std::uint64_t rate, const std::string& own) {
    Beside out;
    json request{{"cmd", "flows"}};
    if (plan) {
        // Announced before it is planned beside the others: a push asking after this one
        // sees it, and none waits for another.
        const auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now().time_since_epoch());
        out.planning = board.key(cfg.name, static_cast<std::uint64_t>(wall.count()));
        std::vector<PlannedFlow> flows = planned_flows(net, *plan, rate);
        request["planning"] = out.planning;
        request["planned"] = to_json(flows);
        board.planned(out.planning, std::move(flows), now_s());
    }
    std::map<std::string, json> answers;
    (void)ask_flows(participants, request, &answers);
    // A planned push's flows as its coordinator reports them when it answered (it knows
    // whether its plan changed or started), else as the first member that saw them.
    std::set<std::string> planned_seen;
    std::vector<json> lists;
    for (auto& [member, a] : answers) {
        json list = json::array();
        std::set<std::string> here;
        for (json& f : a.value("flows", json::array())) {
            if (!f.is_object()) continue;
            const std::string job = f.value("job", ""), coordinator = f.value("coordinator", "");
            if (!own.empty() && job == own) continue;
            if (job == out.planning && !out.planning.empty()) continue;
            if (!coordinator.empty()) {
                const bool by_it = coordinator == member;
                if (!by_it && (answers.count(coordinator) || planned_seen.count(job))) continue;
                here.insert(job);
            }
            list.push_back(std::move(f));
        }
        planned_seen.insert(here.begin(), here.end());
        lists.push_back(std::move(list));
    }
    // A started job's flows are named once, by their receivers; a planned one's once, above.
    std::set<std::string> jobs_seen;
    for (const json& list : lists) {
        for (const json& f : list) {
            try {
                const auto from = net.find(f.at("from").get<std::string>()), to = net.find(f.at("to").get<std::string>());
                const auto left = f.at("left").get<std::uint64_t>();
                const auto rate = f.value("rate", std::uint64_t{0});
                const auto job = f.at("job").get<std::string>();
                if (!from || !to || *from == *to || left == 0) continue;
                out.flows.push_back({*from, *to, static_cast<double>(left), static_cast<double>(rate)});
                jobs_seen.insert(job);
            } catch (const json::exception&) {
                // Not a flow as flows_answer() writes it: nothing to share capacity with.
            }
        }
    }
    out.jobs = jobs_seen.size();
    return out;
}

}  // namespace hetcast
