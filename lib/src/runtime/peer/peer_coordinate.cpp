// The coordinator's part of one try of a job: it sends every participant its plan, starts
// them together, watches that each still answers, passes a member's failure on to those it
// feeds, and turns the events they report into a JobReport. peer_recover.cpp decides
// whether another try re-serves what failed members orphaned.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/simulate.hpp"
#include "peer_impl.hpp"

namespace hetcast {
using namespace detail;

// --- events, at the coordinator ----------------------------------------------------
void Peer::Impl::emit(Job& job, const JobEvent& e) {
    if (job.coordinator) {
        job.coordinator->send(json_frame(FrameType::job_report, job.plan.job, 0, to_json(e)));
    } else {
        apply_event(job.plan.job, cfg.name, e, nullptr);
    }
}

void Peer::Impl::on_event(const ConnectionPtr& c, const Frame& f) {
    const JobEvent e = job_event_from_json(json::parse(net::as_text(f.payload)));
    apply_event(f.header.job, c->peer(), e, &c);
}

void Peer::Impl::apply_event(std::uint64_t id, const std::string& who, const JobEvent& e, const ConnectionPtr* via) {
    const std::shared_ptr<Coord> k = coords.find(id);
    if (!k) return;  // a late event of a job that has ended
    std::lock_guard lock(k->mu);
    auto it = k->nodes.find(who);
    if (it == k->nodes.end() || (via && it->second.conn != *via)) return;
    Coord::Node& n = it->second;
    const double t = now_s();
    if (via) n.offset_lo = std::max(n.offset_lo, e.clock - t);
    switch (e.kind) {
        case JobEvent::Kind::ready:
            n.ready = true;
            for (const auto& [m, bytes] : e.resume) k->resume[{m, who}] = bytes;
            if (via) {
                n.offset = exchange_offset(n.sent, e.received, e.clock, t);
                n.offset_hi = std::min(n.offset_hi, e.received - n.sent);
            }
            break;
        case JobEvent::Kind::delivered:
            if (k->delivered.insert_or_assign(std::make_pair(e.message, who), Coord::Delivered{e.clock, t}).second &&
                e.message < k->sizes.size()) {
                k->landed[who] += k->sizes[e.message];
            }
            break;
        case JobEvent::Kind::hop:
            k->hops.push_back({e.message, e.peer, who, e.bytes, e.first, e.clock, t});
            k->have.insert({e.message, who});
            break;
        case JobEvent::Kind::progress:
            k->bytes_in += e.bytes;
            k->got[who] += e.bytes;
            // Data arriving is a sign of life of whoever sends it, however slow its link.
            for (const auto& [key, from] : k->feeder) {
                if (key.second == who) hear(from);
            }
            break;
        case JobEvent::Kind::done: n.finished = true; break;
        case JobEvent::Kind::failed:
            if (!n.finished || n.error.empty()) n.error = e.error;
            n.finished = true;
            break;
    }
    k->cv.notify_all();
}

void Peer::Impl::watch(Coord& k, std::uint64_t job, std::vector<ConnectionPtr>& to_close) {
    const double now = now_s();
    const double stall = std::chrono::duration<double>(cfg.stall_timeout).count();
    // A participant's I/O thread answers a ping whatever its jobs do: silence means the
    // process is frozen or the path to it is gone (the kernel answers TCP for a stopped one).
    for (auto& [name, n] : k.nodes) {
        if (n.finished || !n.conn) continue;
        const double heard = std::max(last_heard(name), n.sent);
        if (now - heard > stall) {
            n.finished = true;
            n.error = "'" + name + "' stopped answering (nothing from it for " + std::to_string(static_cast<int>(stall)) +
                      " s)";
            to_close.push_back(n.conn);
            // This member's own sends to it end now, and what its socket holds is dropped.
            if (auto own = find_job(job)) {
                std::lock_guard jl(own->mu);
                if (auto lane = own->lanes_out.find(name); lane != own->lanes_out.end()) lane->second->abort(n.error);
            }
        } else if (now - heard > 1 && now - n.pinged > 1) {
            n.pinged = now;
            n.conn->send(Frame{FrameHeader{FrameType::ping, 0, 0, 0, 0}, std::vector<std::byte>(sizeof(double))});
        }
    }
    // Nobody waits on a failed member: what it feeds is cancelled now, and so on down.
    for (auto& [name, n] : k.nodes) {
        if (!n.finished || n.error.empty() || n.spread) continue;
        n.spread = true;
        for (const auto& [key, from] : k.feeder) {
            const auto& [m, to] = key;
            if (from != name || k.have.count(key)) continue;
            auto child = k.nodes.find(to);
            if (child == k.nodes.end() || child->second.finished) continue;
            const std::string why = "'" + name + "' failed: " + n.error;
            if (child->second.conn) {
                child->second.conn->send(make_frame(FrameType::job_cancel, job, m, why));
            } else if (auto own = find_job(job)) {
                cancel_receive(*own, m, why);
            }
        }
    }
}

JobReport Peer::Impl::run_try(const JobSpec& spec, std::uint64_t push, Clock::time_point deadline, Try& result) {
    const Network& net = *spec.network;
    const Schedule& s = spec.schedule;
    if (s.tasks.size() != net.size()) throw InputError("the schedule was planned on another network");
    const auto self_id = net.find(cfg.name);
    if (!self_id) throw InputError("this peer '" + cfg.name + "' is not in the network");
    // Jobs already running share the capacities with this one: their remaining flows are
    // in its prediction (without capacities nothing is shared, and nobody is asked).
    Beside others;
    if (net.capacities() && spec.model == ExecModel::nonblocking) {
        std::vector<std::string> names;
        for (NodeId n = 0; n < net.size(); ++n) {
            if (!s.tasks[n].empty()) names.push_back(net.name(n));
        }
        others = beside(net, names, nullptr, 0, spec.planning);
    }
    const Timeline predicted = simulate_beside(net, s, spec.model, others.flows);
    // Until it starts, pushes planned after this one count its flows from here.
    const detail::EndPlanning end_planning{board, spec.planning};
    if (!spec.planning.empty()) board.planned(spec.planning, planned_flows(net, s, spec.bwlimit), now_s());
    result.started = now_s();

    JobReport report;
    report.algorithm = s.algorithm;
    report.model = std::string(to_string(spec.model));
    report.predicted = predicted.completion;
    report.predicted_one_per_link = spec.model == ExecModel::nonblocking
                                        ? simulate(net, s, spec.model, LinkUse::one_at_a_time).completion
                                        : predicted.completion;
    report.beside = others.jobs;
    report.lower_bound = spec.lower_bound;
    report.throughput_bound = spec.throughput_bound;
    report.candidates = spec.candidates;
    if (s.relay == Relay::cut_through) {
        report.relay = "cut-through";
        report.piece = s.piece;
    }

    JobPlan common;
    common.algorithm = s.algorithm;
    common.coordinator = cfg.name;
    common.chunk = cfg.chunk;
    common.relay = s.relay;
    common.piece = s.piece;
    common.retry = static_cast<bool>(spec.replan);
    common.bwlimit = spec.bwlimit;
    common.order = spec.order;
    if (s.relay == Relay::cut_through && (s.piece < min_piece || s.piece > max_piece)) {
        throw InputError("a cut-through schedule's pieces must be 4 KiB to 8 MiB");
    }
    {
        std::lock_guard lock(mu);
        common.job = rng() >> 1;
    }
    report.job = push ? push : common.job;
    if (spec.inputs.size() != s.messages.size()) throw InputError("a job needs one input per message");
    for (MessageId m = 0; m < s.messages.size(); ++m) {
        const Message& msg = s.messages[m];
        const JobInput& in = spec.inputs[m];
        JobMessage jm;
        jm.source = net.name(msg.source);
        jm.size = in.size;
        jm.sha = in.sha;
        jm.name = in.name;
        jm.origin = in.origin;
        jm.mode = in.mode;
        jm.preserve = in.preserve;
        jm.mtime = in.mtime;
        jm.tree = in.tree;
        jm.owner = in.owner;
        if (msg.source == *self_id && in.body) {
            jm.size = in.body->size();
            jm.sha = in.body->sha256();
            jm.origin.clear();
            jm.mode = mode_of(*in.body);
        } else if (in.origin.empty()) {
            throw InputError("no body and no origin for " + message_label(m));
        }
        if (s.relay == Relay::cut_through) {
            // The source's digests reach every relay inside its plan, over the control
            // connection; computing them costs the source one read of the message.
            if (jm.origin.empty() && in.pieces.empty()) {
                jm.pieces = piece_digests(*in.body, s.piece);
            } else {
                if (in.pieces.size() != piece_count(jm.size, s.piece)) throw InputError("no piece digests for " + message_label(m));
                jm.pieces = in.pieces;
            }
        }
        for (NodeId d : msg.dests) jm.dests.push_back(net.name(d));
        report.bytes += jm.size;
        common.messages.push_back(std::move(jm));
    }
    std::vector<NodeId> participants;
    for (NodeId n = 0; n < net.size(); ++n) {
        if (!s.tasks[n].empty()) participants.push_back(n);
    }
    for (NodeId n : participants) {
        if (n == *self_id) {
            common.participants.push_back({cfg.name, cfg.host, transport->port()});
            continue;
        }
        const auto m = address(net.name(n), nullptr);
        if (!m) throw InputError("'" + net.name(n) + "' is in the plan but not a member");
        common.participants.push_back(*m);
    }
    for (MessageId m = 0; m < s.messages.size(); ++m) {
        for (NodeId d : s.messages[m].dests) {
            Outcome o{m, net.name(s.messages[m].source), net.name(d), 0, 0, false, {}};
            for (const Transfer& t : predicted.transfers) {
                if (t.message == m && t.to == d) o.predicted = t.complete;
            }
            report.outcomes.push_back(std::move(o));
        }
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
    if (auto why = coords.add(common.job, k)) {
        std::lock_guard lock(k->mu);
        k->cancelled = *why;
    }
    struct Unregister {
        Impl& impl;
        std::uint64_t id;
        ~Unregister() { impl.coords.remove(id); }
    } unregister{*this, common.job};
    if (!push && spec.started) spec.started(common.job);

    // Every participant gets its plan and says it is ready; nothing moves before that, so
    // an unreachable member or a refused path costs only a re-plan without it.
    std::shared_ptr<Job> own;
    std::vector<std::string> remote;
    std::string own_error;
    for (NodeId n : participants) {
        JobPlan p = common;
        p.tasks = tasks_of(s, net.names(), n);
        const std::string& name = net.name(n);
        if (n == *self_id) {
            try {
                own = make_job(std::move(p), nullptr);
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
            continue;
        }
        try {
            ConnectionPtr c = conn_to(name, &common.participants);
            {
                std::lock_guard lock(k->mu);
                k->nodes[name].conn = c;
                k->nodes[name].sent = now_s();
            }
            c->send(json_frame(FrameType::job_plan, common.job, 0, to_json(p)));
            remote.push_back(name);
        } catch (const std::exception& e) {
            std::lock_guard lock(k->mu);
            k->nodes[name].finished = true;
            k->nodes[name].error = "'" + name + "' cannot be reached: " + e.what();
        }
    }
    const auto cancel_all = [&](const std::string& why) {
        for (const auto& name : remote) {
            std::lock_guard lock(k->mu);
            if (auto& c = k->nodes[name].conn) c->send(make_frame(FrameType::job_cancel, common.job, net::all_messages, why));
        }
        if (own) abort_job(*own, why);
    };
    if (own) dial_lanes(*own);  // while the participants set up
    std::string setup_error;
    {
        const auto setup_deadline = std::min(deadline, Clock::now() + 2 * cfg.connect_timeout);
        std::unique_lock lock(k->mu);
        k->cv.wait_until(lock, setup_deadline, [&] {
            return stopping || !k->cancelled.empty() ||
                   std::all_of(k->nodes.begin(), k->nodes.end(),
                               [](const auto& kv) { return kv.second.ready || kv.second.finished; });
        });
        for (auto& [name, n] : k->nodes) {
            if (!n.ready && !n.finished) {
                n.finished = true;
                n.error = "'" + name + "' did not answer the job plan in " +
                          std::to_string(2 * cfg.connect_timeout.count() / 1000) + " s";
            }
            if (!n.ready) {
                if (setup_error.empty()) setup_error = name + ": " + n.error;
                result.failed[name] = n.error;
            }
        }
        if (stopping) setup_error = "the coordinator is stopping";
        if (!k->cancelled.empty()) setup_error = "cancelled: " + k->cancelled;
    }
    if (!setup_error.empty()) {
        // Nothing moved: a next try plans without the members that failed here.
        result.not_started = true;
        cancel_all("job not started: " + setup_error);
        if (own) jobs.remove(common.job);
        result.final = result.final || stopping || !own_error.empty() || !k->cancelled.empty();
        for (auto& o : report.outcomes) {
            const auto f = result.failed.find(o.dest);
            o.error = f != result.failed.end() ? f->second : "not started: " + setup_error;
            if (!k->cancelled.empty()) o.error = "cancelled: " + k->cancelled;
        }
        return report;
    }

    // From here its participants report its flows (counted once: those planned end first).
    board.end(spec.planning);
    const double t0 = now_s();
    result.started = t0;
    {
        std::lock_guard lock(k->mu);
        k->started = t0;
    }
    {
        // A receiver that kept pieces from an earlier try gets only the rest from its feeder.
        std::lock_guard lock(k->mu);
        std::map<std::string, JobStart> starts;
        for (const auto& [key, bytes] : k->resume) {
            const auto f = k->feeder.find(key);
            if (f != k->feeder.end() && bytes > 0) starts[f->second].resume.push_back({key.first, key.second, bytes});
        }
        for (const auto& name : remote) {
            const auto it = starts.find(name);
            k->nodes[name].conn->send(
                make_frame(FrameType::job_start, common.job, 0, it == starts.end() ? std::string() : to_json(it->second).dump()));
        }
        if (own) {
            if (const auto it = starts.find(cfg.name); it != starts.end()) {
                std::lock_guard jl(own->mu);
                for (const auto& r : it->second.resume) own->resume[{r.message, r.to}] = r.offset;
            }
        }
    }
    if (own) start_runner(own);

    const std::uint64_t owed = k->owed;
    // What the caller saw last: (delivered, everywhere) and every member's state.
    std::pair<std::uint64_t, std::uint64_t> shown{~std::uint64_t{0}, 0};
    std::vector<std::string> states;
    bool timed_out = false;
    {
        std::unique_lock lock(k->mu);
        while (true) {
            std::vector<ConnectionPtr> to_close;
            watch(*k, common.job, to_close);
            if (!to_close.empty()) {
                lock.unlock();
                for (const auto& c : to_close) c->close("stopped answering");
                lock.lock();
            }
            const bool all = std::all_of(k->nodes.begin(), k->nodes.end(), [](const auto& kv) { return kv.second.finished; });
            if (all || stopping || !k->cancelled.empty()) break;
            if (Clock::now() > deadline) {
                timed_out = true;
                break;
            }
            k->cv.wait_for(lock, std::chrono::milliseconds(100));
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
    if (stopping) stop_reason = "the coordinator stopped";
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
        k->cv.wait_for(lock, cfg.connect_timeout, [&] {
            return stopping || std::all_of(k->nodes.begin(), k->nodes.end(), [](const auto& kv) { return kv.second.finished; });
        });
    }

    std::lock_guard lock(k->mu);
    for (auto& [name, n] : k->nodes) {
        // A lane reset by the stop may reach a receiver before the cancel does.
        if (!n.finished || (!stop_reason.empty() && !n.error.empty() && !ended_before.count(name))) n.error = stop_reason;
    }
    // Who failed on their own account: a failed member not orphaned by a failed feeder.
    // Feeders come first in the plan's order of receives, so one pass over the participants
    // in the schedule's order would do; iterate to a fixed point for any order.
    std::set<std::string> orphaned;
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [key, from] : k->feeder) {
            const auto& to = key.second;
            if (orphaned.count(to) || k->have.count(key)) continue;
            const auto& f = k->nodes[from];
            if ((f.finished && !f.error.empty()) || orphaned.count(from)) {
                orphaned.insert(to);
                grew = true;
            }
        }
    }
    for (const auto& [name, n] : k->nodes) {
        if (!n.error.empty() && !orphaned.count(name) && stop_reason.empty()) result.failed[name] = n.error;
    }
    if (!own_error.empty() || (own && result.failed.count(cfg.name))) result.final = true;

    for (auto& o : report.outcomes) {
        if (auto it = k->delivered.find({o.message, o.dest}); it != k->delivered.end()) {
            // Whatever error the offset has left, a delivery lies between the start and its event's arrival.
            const double at = std::clamp(it->second.node_clock - k->nodes[o.dest].bounded_offset(), t0, it->second.arrived);
            o.ok = true;
            o.achieved = at - t0;
            report.achieved = std::max(report.achieved, o.achieved);
        } else {
            const auto& n = k->nodes[o.dest];
            o.error = n.error.empty() ? "not delivered" : n.error;
        }
    }
    for (const auto& h : k->hops) {
        const double off = k->nodes[h.to].bounded_offset();
        const double end = std::clamp(h.last - off, t0, h.arrived) - t0;
        report.hops.push_back({h.message, h.from, h.to, h.bytes, std::clamp(h.first - off, t0, h.arrived) - t0, end});
        report.hops.back().start = std::min(report.hops.back().start, end);
    }
    if (spec.progress) {
        JobProgress p = k->progress();
        std::uint64_t missing = 0;
        for (const auto& o : report.outcomes) {
            if (!o.ok) missing += common.messages[o.message].size;
        }
        p.delivered = owed - std::min(owed, missing);
        spec.progress(p);
    }
    return report;
}

}  // namespace hetcast
