// One try of a job, run by its coordinator: plans out and a start for all (what it sends
// them is peer_try_control.cpp's), then its events (peer_tries.cpp) until every participant
// finished or failed. peer_recover.cpp decides whether another try re-serves what failed
// members orphaned.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/simulate.hpp"
#include "peer_coordinator.hpp"
#include "peer_pace.hpp"
#include "peer_try_control.hpp"
#include "../wire/frames.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::ConnectionPtr;

JobReport Coordinator::run_try(const JobSpec& spec, std::uint64_t push, Clock::time_point deadline, Try& result) {
    const Network& net = *spec.network;
    const Schedule& s = spec.schedule;
    if (s.tasks.size() != net.size()) throw InputError("the schedule was planned on another network");
    const auto self_id = net.find(core_.cfg.name);
    if (!self_id) throw InputError("this peer '" + core_.cfg.name + "' is not in the network");
    // Jobs already running share the capacities with this one: their remaining flows are
    // in its prediction (without capacities nothing is shared, and nobody is asked).
    Beside others;
    const bool shared = net.capacities() && spec.model == ExecModel::nonblocking;
    std::vector<std::string> names;
    if (shared) {
        for (NodeId n = 0; n < net.size(); ++n) {
            if (!s.tasks[n].empty()) names.push_back(net.name(n));
        }
        others = requests_.beside(net, names, nullptr, 0, spec.planning);
    }
    const Timeline predicted = [&] {
        try {
            return simulate_beside(net, s, spec.model, others.flows);
        } catch (const Error& e) {
            // The model could not take what runs beside: predicted alone, the rest as planned.
            core_.log(LogLevel::warn, std::string("predicting beside the running jobs failed: ") + e.what() + "; predicted alone");
            others = Beside{};
            return simulate_beside(net, s, spec.model, {});
        }
    }();
    // Crossings of FIFO uplinks that the other jobs use too keep to their part of them.
    const std::vector<Pace> paces = shared ? crossing_paces(net, predicted, others.flows) : std::vector<Pace>{};
    // Until it starts, pushes planned after this one count its flows from here.
    const EndPlanning end_planning{core_.board, spec.planning};
    if (!spec.planning.empty()) core_.board.planned(spec.planning, planned_flows(net, s, spec.bwlimit), now_s());
    result.started = now_s();
    JobReport report = report_of(spec, predicted, others.jobs);
    JobPlan common = plan_of(spec, *self_id, core_.cfg.name, core_.cfg.chunk, report);
    {
        std::lock_guard lock(mu_);
        common.job = rng_() >> 1;
    }
    report.job = push ? push : common.job;
    std::vector<NodeId> participants;
    for (NodeId n = 0; n < net.size(); ++n) {
        if (!s.tasks[n].empty()) participants.push_back(n);
    }
    for (NodeId n : participants) {
        if (n == *self_id) {
            common.participants.push_back({core_.cfg.name, core_.cfg.host, core_.transport->port()});
            continue;
        }
        const auto m = connections_.address(net.name(n), nullptr);
        if (!m) throw InputError("'" + net.name(n) + "' is in the plan but not a member");
        common.participants.push_back(*m);
    }

    auto k = std::make_shared<Coord>();
    k->push = report.job;
    for (NodeId n : participants) {
        k->nodes[net.name(n)];
        for (const Task& t : s.tasks[n]) {
            if (t.op == Op::recv) k->feeder[{t.message, net.name(n)}] = net.name(t.peer);
        }
    }
    k->algorithm = s.algorithm;
    for (const auto& m : common.messages) {
        k->owed += m.size * m.dests.size();
        k->sizes.push_back(m.size);
        for (const auto& d : m.dests) k->owed_to[d] += m.size;
    }
    if (auto why = tries_.add(common.job, k)) {
        std::lock_guard lock(k->mu);
        k->cancelled = *why;
    }
    struct Unregister {
        Tries& tries;
        std::uint64_t id;
        ~Unregister() { tries.remove(id); }
    } unregister{tries_, common.job};
    if (!push && spec.started) spec.started(common.job);

    // Every participant gets its plan and says it is ready; nothing moves before that, so
    // an unreachable member or a refused path costs only a re-plan without it.
    std::shared_ptr<Job> own;
    std::string own_error;
    // Past control_fanout others, this member talks to its children in the control tree
    // only; the rest get their plans through them (peer_relay.hpp). Children come first.
    std::vector<std::string> members;
    for (NodeId n : participants) {
        if (n != *self_id) members.push_back(net.name(n));
    }
    TryControl control(core_, connections_, common, *k, members);
    // Its own part first: its lanes are dialled (a TLS handshake each, 95 of them when it
    // sends to every member) while the others' plans go out.
    std::future<void> own_lanes;
    if (std::find(participants.begin(), participants.end(), *self_id) != participants.end()) {
        const std::string& name = core_.cfg.name;
        try {
            JobPlan p = common;
            p.tasks = tasks_of(s, net.names(), *self_id, paces);
            own = setup_.make(std::move(p), nullptr);
            for (MessageId m = 0; m < s.messages.size(); ++m) {
                if (s.messages[m].source == *self_id && spec.inputs[m].body) own->held[m] = spec.inputs[m].body;
            }
            std::lock_guard lock(k->mu);
            k->nodes[name].ready = true;
        } catch (const std::exception& e) {
            own_error = e.what();
            std::lock_guard lock(k->mu);
            k->nodes[name].finished = true;
            k->nodes[name].error = own_error;
        }
        if (own) {
            try {
                own_lanes = std::async(std::launch::async, [this, own] { (void)connections_.dial_lanes(*own); });
            } catch (const std::system_error&) {
                // No thread to spare: dialled after the plans went out.
            }
        }
    }
    const auto plans_out = Clock::now();
    for (NodeId n : participants) {
        if (n != *self_id) control.send_plan(net, s, n, paces);
    }
    const auto cancel_all = [&](const std::string& why) {
        control.cancel(why);
        if (own) participant_.abort(*own, why);
    };
    if (own_lanes.valid()) {
        own_lanes.wait();
    } else if (own) {
        (void)connections_.dial_lanes(*own);  // while the participants set up
    }
    std::string setup_error;
    {
        const auto setup_deadline = std::min(deadline, Clock::now() + 2 * core_.cfg.connect_timeout);
        std::unique_lock lock(k->mu);
        k->cv.wait_until(lock, setup_deadline, [&] {
            return core_.stopping || !k->cancelled.empty() ||
                   std::all_of(k->nodes.begin(), k->nodes.end(),
                               [](const auto& kv) { return kv.second.ready || kv.second.finished; });
        });
        for (auto& [name, n] : k->nodes) {
            if (!n.ready && !n.finished) {
                n.finished = true;
                n.error = "'" + name + "' did not answer the job plan in " +
                          std::to_string(2 * core_.cfg.connect_timeout.count() / 1000) + " s";
            }
            // Ready, then lost: as failed as one that never answered.
            if (!n.ready || !n.error.empty()) {
                if (setup_error.empty() && !n.cut_off) setup_error = name + ": " + n.error;
                if (!n.cut_off) result.failed[name] = n.error;
            }
        }
        if (core_.stopping) setup_error = "the coordinator is stopping";
        if (!k->cancelled.empty()) setup_error = "cancelled: " + k->cancelled;
    }
    if (!setup_error.empty()) {
        // Nothing moved: a next try plans without the members that failed here.
        result.not_started = true;
        cancel_all("job not started: " + setup_error);
        if (own) participant_.jobs().remove(common.job);
        result.final = result.final || core_.stopping || !own_error.empty() || !k->cancelled.empty();
        for (auto& o : report.outcomes) {
            const auto f = result.failed.find(o.dest);
            o.error = f != result.failed.end() ? f->second : "not started: " + setup_error;
            if (!k->cancelled.empty()) o.error = "cancelled: " + k->cancelled;
        }
        return report;
    }

    // From here its participants report its flows (counted once: those planned end first).
    core_.board.end(spec.planning);
    const double t0 = now_s();
    result.started = t0;
    {
        std::lock_guard lock(k->mu);
        k->started = t0;
    }
    control.start(own);
    core_.log(LogLevel::debug, "job " + std::to_string(common.job) + ": " + std::to_string(participants.size()) +
                                   " participants had their plans and were ready in " +
                                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - plans_out).count()) + " ms");
    if (own) participant_.start_runner(own);
    // Pushes started at once plan at once, each before it hears of the others: what runs
    // beside it is asked again as it starts, and its prediction made again from that. Its
    // crossings of FIFO uplinks keep to their share as the other jobs come and go.
    std::optional<BesideWatch> watch;
    if (shared) {
        watch.emplace(
            [this, &net, &names, job = std::to_string(common.job), &spec] {
                std::map<std::string, json> answers;
                (void)requests_.ask_flows(names, {{"cmd", "flows"}}, &answers);
                return beside_of(net, std::move(answers), job, spec.planning);
            },
            // Every member is asked: half a second apart up to 16, slower past them.
            std::chrono::milliseconds(500) * std::max<std::size_t>(1, names.size() / 16));
    }
    CrossingPacer pacer(net, spec.schedule, predicted, paces);
    const bool keep_paces = shared && pacer.needed();
    const auto tell_paces = [&](const Beside& b, std::unique_lock<std::mutex>& lock) {
        std::set<std::pair<MessageId, std::string>> done;
        for (const auto& [key, d] : k->delivered) done.insert(key);
        std::vector<std::pair<ConnectionPtr, json>> frames;
        std::vector<SendPace> mine;
        for (auto& [sender, list] : pacer.update(b.flows, now_s() - t0, done)) {
            if (sender == core_.cfg.name) {
                mine = std::move(list);
            } else if (const auto it = k->nodes.find(sender); it != k->nodes.end() && it->second.conn && it->second.hop.empty()) {
                frames.emplace_back(it->second.conn, to_json(list));  // down a control tree: the planned pace stays
            }
        }
        lock.unlock();
        for (const auto& [c, j] : frames) c->send(json_frame(net::FrameType::job_pace, common.job, 0, j));
        if (own && !mine.empty()) apply_paces(*own, mine);
        lock.lock();
    };

    // What the caller saw last: (delivered, everywhere) and every member's state.
    std::pair<std::uint64_t, std::uint64_t> shown{~std::uint64_t{0}, 0};
    std::vector<std::string> states;
    bool timed_out = false;
    {
        std::unique_lock lock(k->mu);
        while (true) {
            std::vector<ConnectionPtr> to_close;
            tries_.watch(*k, common.job, to_close);
            if (!to_close.empty()) {
                lock.unlock();
                for (const auto& c : to_close) c->close("stopped answering");
                lock.lock();
            }
            const bool all = std::all_of(k->nodes.begin(), k->nodes.end(), [](const auto& kv) { return kv.second.finished; });
            if (all || core_.stopping || !k->cancelled.empty()) break;
            if (Clock::now() > deadline) {
                timed_out = true;
                break;
            }
            k->cv.wait_for(lock, std::chrono::milliseconds(100));
            if (watch) {
                if (const auto heard = watch->poll(keep_paces); heard && keep_paces) tell_paces(*heard, lock);
            }
            if (spec.progress) {
                const JobProgress p = k->progress();
                std::vector<std::string> now;
                for (const auto& m : p.members) now.push_back(m.state);
                if (std::make_pair(p.delivered, p.everywhere) != shown || now != states) {
                    shown = {p.delivered, p.everywhere};
                    states = std::move(now);
                    lock.unlock();
                    spec.progress(p);
                    lock.lock();
                }
            }
        }
    }
    std::string stop_reason;
    {
        std::lock_guard lock(k->mu);
        if (!k->cancelled.empty()) stop_reason = "cancelled: " + k->cancelled;
    }
    if (timed_out) stop_reason = "timed out";
    if (core_.stopping) stop_reason = "the coordinator stopped";
    std::set<std::string> ended_before;  ///< participants whose errors are their own, not the stop's
    if (!stop_reason.empty()) {
        {
            std::lock_guard lock(k->mu);
            for (const auto& [name, n] : k->nodes) {
                if (n.finished) ended_before.insert(name);
            }
        }
        cancel_all(stop_reason);
        result.final = true;
        // What landed before the cancel arrived is reported as delivered, not as cancelled.
        std::unique_lock lock(k->mu);
        k->cv.wait_for(lock, core_.cfg.connect_timeout, [&] {
            return core_.stopping || std::all_of(k->nodes.begin(), k->nodes.end(), [](const auto& kv) { return kv.second.finished; });
        });
    }

    try {
        if (watch) {
            if (const auto at_start = watch->at_start()) (void)repredict(spec, others, *at_start, report);
        }
    } catch (const std::exception&) {
        // The model could not take them: as planned.
    }
    tally(*k, spec, stop_reason, ended_before, t0, result, report);
    if (!own_error.empty() || (own && result.failed.count(core_.cfg.name))) result.final = true;
    return report;
}

}  // namespace hetcast::detail
