// A try of a job as data: its plan and report made from the spec, the flows of other jobs
// it runs beside, and the tally of how it ended (peer_coordinate.cpp runs it).
#include "peer_try.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast::detail {
using json = nlohmann::json;

JobReport report_of(const JobSpec& spec, const Timeline& predicted, std::size_t beside) {
    const Network& net = *spec.network;
    const Schedule& s = spec.schedule;
    JobReport report;
    report.algorithm = s.algorithm;
    report.model = std::string(to_string(spec.model));
    report.predicted = predicted.completion;
    report.predicted_one_per_link = spec.model == ExecModel::nonblocking
                                        ? simulate(net, s, spec.model, LinkUse::one_at_a_time).completion
                                        : predicted.completion;
    report.beside = beside;
    report.lower_bound = spec.lower_bound;
    report.throughput_bound = spec.throughput_bound;
    report.candidates = spec.candidates;
    if (s.relay == Relay::cut_through) {
        report.relay = "cut-through";
        report.piece = s.piece;
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
    return report;
}

JobPlan plan_of(const JobSpec& spec, NodeId self, const std::string& name, std::uint64_t chunk, JobReport& report) {
    const Network& net = *spec.network;
    const Schedule& s = spec.schedule;
    JobPlan common;
    common.algorithm = s.algorithm;
    common.coordinator = name;
    common.chunk = chunk;
    common.relay = s.relay;
    common.piece = s.piece;
    common.retry = static_cast<bool>(spec.replan);
    common.bwlimit = spec.bwlimit;
    common.order = spec.order;
    if (s.relay == Relay::cut_through && (s.piece < min_piece || s.piece > max_piece)) {
        throw InputError("a cut-through schedule's pieces must be 4 KiB to 8 MiB");
    }
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
        if (msg.source == self && in.body) {
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
    return common;
}

void tally(Coord& k, const JobSpec& spec, const std::string& stop_reason, const std::set<std::string>& ended_before,
           double t0, Try& result, JobReport& report) {
    const std::uint64_t owed = k.owed;
    std::lock_guard lock(k.mu);
    for (auto& [name, n] : k.nodes) {
        // A lane reset by the stop may reach a receiver before the cancel does.
        if (!n.finished || (!stop_reason.empty() && !n.error.empty() && !ended_before.count(name))) n.error = stop_reason;
    }
    // Who failed on their own account: a failed member not orphaned by a failed feeder.
    // Feeders come first in the plan's order of receives, so one pass over the participants
    // in the schedule's order would do; iterate to a fixed point for any order.
    std::set<std::string> orphaned;
    for (const auto& [name, n] : k.nodes) {
        if (n.cut_off) orphaned.insert(name);
    }
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [key, from] : k.feeder) {
            const auto& to = key.second;
            if (orphaned.count(to) || k.have.count(key)) continue;
            const auto& f = k.nodes[from];
            if ((f.finished && !f.error.empty()) || orphaned.count(from)) {
                orphaned.insert(to);
                grew = true;
            }
        }
    }
    for (const auto& [name, n] : k.nodes) {
        if (!n.error.empty() && !orphaned.count(name) && stop_reason.empty()) result.failed[name] = n.error;
    }

    for (auto& o : report.outcomes) {
        if (auto it = k.delivered.find({o.message, o.dest}); it != k.delivered.end()) {
            // Whatever error the offset has left, a delivery lies between the start and its event's arrival.
            const double at = std::clamp(it->second.node_clock - k.nodes[o.dest].bounded_offset(), t0, it->second.arrived);
            o.ok = true;
            o.achieved = at - t0;
            report.achieved = std::max(report.achieved, o.achieved);
        } else {
            const auto& n = k.nodes[o.dest];
            o.error = n.error.empty() ? "not delivered" : n.error;
        }
    }
    for (const auto& h : k.hops) {
        const double off = k.nodes[h.to].bounded_offset();
        const double end = std::clamp(h.last - off, t0, h.arrived) - t0;
        report.hops.push_back({h.message, h.from, h.to, h.bytes, std::clamp(h.first - off, t0, h.arrived) - t0, end});
        report.hops.back().start = std::min(report.hops.back().start, end);
    }
    if (spec.progress) {
        JobProgress p = k.progress();
        std::uint64_t missing = 0;
        for (const auto& o : report.outcomes) {
            if (!o.ok) missing += k.sizes[o.message];
        }
        p.delivered = owed - std::min(owed, missing);
        spec.progress(p);
    }
}

Beside beside_of(const Network& net, std::map<std::string, json> answers, const std::string& own,
                 const std::string& planning) {
    std::set<std::string> planned_seen;
    std::vector<json> lists;
    for (auto& [member, a] : answers) {
        json list = json::array();
        std::set<std::string> here;
        for (json& f : a.value("flows", json::array())) {
            if (!f.is_object()) continue;
            const std::string job = f.value("job", ""), coordinator = f.value("coordinator", "");
            if (!own.empty() && job == own) continue;
            if (!planning.empty() && job == planning) continue;
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
    Beside out;
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

bool repredict(const JobSpec& spec, const Beside& planned, const Beside& at_start, JobReport& report) {
    const auto left = [](const Beside& b) {
        double sum = 0;
        for (const auto& f : b.flows) sum += f.bytes;
        return sum;
    };
    if (at_start.jobs == planned.jobs && left(at_start) <= left(planned) * 1.01) return false;
    const JobReport now = report_of(spec, simulate_beside(*spec.network, spec.schedule, spec.model, at_start.flows), at_start.jobs);
    report.predicted_at_plan = report.predicted;
    report.beside_at_plan = report.beside;
    report.predicted = now.predicted;
    report.beside = now.beside;
    for (std::size_t i = 0; i < report.outcomes.size() && i < now.outcomes.size(); ++i) {
        report.outcomes[i].predicted = now.outcomes[i].predicted;
    }
    return true;
}

bool has_room(const std::vector<json>& answers) {
    for (const json& a : answers) {
        try {
            const auto most = a.at("max_jobs").get<std::uint64_t>();
            if (most > 0 && a.at("running").get<std::uint64_t>() >= most) return false;
        } catch (const json::exception&) {
            // An older member: the try finds out.
        }
    }
    return true;
}

}  // namespace hetcast::detail
