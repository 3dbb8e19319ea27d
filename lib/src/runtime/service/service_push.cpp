// Pushes: files from this member to others by a broadcast algorithm, or a pattern of
// messages from several sources (Wu's multi-node multicast), each run as a job whose
// progress streams back to the caller.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/nodeset.hpp"
#include "hetcast/runtime/push_options.hpp"
#include "hetcast/runtime/push_plan.hpp"
#include "hetcast/runtime/tree.hpp"
#include "hetcast/runtime/upload.hpp"
#include "hetcast/report/plan_report.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sched/wu.hpp"
#include "hetcast/sim/pattern_bound.hpp"
#include "service_push_input.hpp"
#include "service_push_plan.hpp"
#include "service_push_request.hpp"
#include "service_pushes.hpp"

namespace hetcast {
using namespace detail;

namespace {

/// Members that do not answer, in a push's report: failed (with --all, skipped too).
void add_unreachable(JobReport& r, const std::vector<std::pair<std::string, std::string>>& down, bool everyone,
                     const std::string& here) {
    for (const auto& [name, why] : down) {
        if (everyone) r.skipped.push_back(name);
        r.outcomes.push_back({0, here, name, 0, 0, false, "unreachable: " + why});
        r.failed_members.push_back({name, "unreachable: " + why});
    }
}

/// A push's answer: its report, what it sent (a file, or a bundle's counts and sources).
json push_answer(const JobReport& r, const std::vector<std::string>& files, const std::vector<TreeEntry>& tree,
                 const std::vector<std::string>& warnings) {
    const bool ok = r.ok();
    json rj = to_json(r);
    if (tree.empty()) {
        rj["file"] = files[0];
    } else {
        const TreeCounts n = count_tree(tree);
        rj["tree"] = {{"files", n.files}, {"dirs", n.dirs}, {"links", n.links}, {"bytes", n.bytes}, {"sources", files}};
    }
    json reports = json::array({std::move(rj)});
    json out{{"ok", ok}, {"reports", reports}};
    if (!warnings.empty()) out["warnings"] = warnings;
    if (!ok) out["error"] = "some destinations failed";
    return out;
}

}  // namespace

/// Runs one job and streams its progress to the caller: which file is in flight (of a
/// bundle: the first not yet everywhere), the bytes every destination holds of what each
/// is owed, and (as before) the bytes delivered over the bytes owed, summed over them.
/// When the caller asked for `members` (push --verbose), each participant's state too.
/// Callers re-attached with `hetcast wait` get the same frames (with members) and the
/// heartbeats.
JobReport Pushes::run_job(JobSpec spec, const Peer::Responder& respond, const std::string& label,
                                 bool members) {
    const std::vector<TreeEntry> tree = spec.inputs.size() == 1 ? spec.inputs[0].tree : std::vector<TreeEntry>{};
    auto id = std::make_shared<std::atomic<std::uint64_t>>(0);
    spec.progress = [this, id, &respond, label, tree, members](const JobProgress& p) {
        InFlight f{0, 1, label};
        if (!tree.empty()) f = in_flight(tree, p.everywhere);
        json progress{{"file", f.index}, {"files", f.files}, {"name", f.path}, {"bytes", p.delivered},
                      {"of", p.owed},    {"everywhere", p.everywhere}, {"size", p.size}};
        const auto others = log_.watching(*id);
        if (members || !others.empty()) {
            json list = json::array();
            for (const auto& m : p.members) {
                list.push_back({{"name", m.name}, {"state", m.state}, {"bytes", m.bytes}, {"owed", m.owed}});
            }
            progress["members"] = std::move(list);
        }
        for (const auto& w : others) w({{"progress", progress}});
        if (!members) progress.erase("members");
        respond({{"progress", std::move(progress)}});
    };
    // The caller learns the id at once: what it cancels with (Ctrl-C, `hetcast cancel`)
    // and re-attaches with (`hetcast wait`).
    spec.started = [this, id, &respond](std::uint64_t job) {
        log_.open(job);
        *id = job;
        respond({{"progress", {{"file", 0}, {"job", std::to_string(job)}}}});
    };
    if (spec.timeout == std::chrono::milliseconds::zero()) spec.timeout = core_.cfg.job_timeout;
    const Heartbeat beats({}, core_.cfg.heartbeat, [this, id] { return log_.watching(*id); });
    try {
        return core_.peer->run(std::move(spec));
    } catch (const std::exception& e) {
        log_.end(*id, {{"ok", false}, {"error", e.what()}});
        throw;
    }
}

/// Wu's multi-node multicast, executed: each entry's source serves its own file (or a
/// generated payload); sizes come from the sources before planning.
json Pushes::push_pattern(const json& req, const Network& net, const Peer::Responder& respond,
                                 const std::string& who) {
    const PushOptions options = read_push_options(req, "wrp");
    const std::string& algo = options.algo;
    const auto dest_dir = field<std::string>(req, "dest", "");
    PatternRequest pr = parse_pattern(field<std::string>(req, "pattern", ""),
                                      field<std::string>(req, "pattern_name", "pattern"), net);
    pr.model = parse_exec_model(field<std::string>(req, "model", "nonblocking"));
    if (pr.messages.empty()) throw InputError("the pattern has no messages");
    std::vector<JobInput> inputs = pattern_inputs(pr, net, dest_dir, *core_.peer, req);
    JobSpec spec;
    spec.network = &net;
    spec.model = pr.model;
    if (algo == "auto") {
        spec.schedule = plan_pattern_auto(net, pr).schedule;
    } else {
        spec.schedule = find_pattern_algorithm(algo).plan(net, pr);
    }
    spec.lower_bound = pattern_lower_bound(net, pr);
    spec.inputs = std::move(inputs);
    spec.order = req.dump();  // the sources that are not this daemon check it
    spec.bwlimit = options.bwlimit;
    spec.timeout = options.timeout;
    const std::string label = "pattern " + field<std::string>(req, "pattern_name", "pattern");
    const std::string started = utc_now();
    core_.say(LogLevel::info, "push a pattern of " + std::to_string(pr.messages.size()) + " messages with " + spec.schedule.algorithm);
    const JobReport r = run_job(std::move(spec), respond, label, field<bool>(req, "verbose", false));
    json out{{"ok", r.ok()}, {"reports", json::array({to_json(r)})}};
    if (!r.ok()) out["error"] = "some destinations failed";
    log_.finish_push(r, out, who, label, started);
    return out;
}

json Pushes::push(const json& req, const Peer::Responder& respond, const std::string& who) {
    const PushOptions options = read_push_options(req);  // a pattern's default algorithm: push_pattern's
    const std::uint64_t bwlimit = options.bwlimit;
    if (req.contains("pattern")) {
        const auto net = map_for_push(core_.current_map(), bwlimit);
        const Busy busy(*this);
        return push_pattern(req, *net, respond, who);
    }
    const std::vector<std::string> files = push_files(req);
    const auto dest_dir = field<std::string>(req, "dest", "");
    const auto model = parse_exec_model(field<std::string>(req, "model", "nonblocking"));
    if (files.empty()) throw InputError("push: no files");
    const Algorithm& algo = find_algorithm(options.algo);
    const auto net = map_for_push(core_.current_map(), bwlimit);
    const NodeId root = net->id(core_.cfg.name);
    const auto asked_at = std::chrono::steady_clock::now();
    std::vector<std::string> warnings;
    const auto [wanted, everyone, self] = push_destinations(req, *net, root, req.contains("upload"), [&](const std::string& line) {
        core_.say(LogLevel::warn, "push: " + line);
        warnings.push_back(line);
    });
    const auto [dests, down] = answering(*net, wanted);
    const auto answered_at = std::chrono::steady_clock::now();
    if (dests.empty() && !self) return nobody_answers(req, files, down, everyone, options.algo, who);
    const std::vector<std::string> unmapped = everyone ? unmapped_members(*net) : std::vector<std::string>{};

    // Everything is checked before the first byte moves.
    PushInput in = push_input(req, files, dest_dir, self, who, core_.cfg, *core_.peer, respond);
    // A push may ask for its own piece size; else the daemon's (0: by size).
    const std::uint64_t piece = in.up ? in.upload_piece : options.piece > 0 ? options.piece : core_.cfg.piece;
    const Busy busy(*this);

    const double size = static_cast<double>(in.input.body->size());
    const std::vector<TreeEntry> tree = in.input.tree;
    const auto began = std::chrono::steady_clock::now();
    const std::string started = utc_now();
    JobReport r;
    if (!dests.empty()) {
        // The bounds only the report gives (an LP: a third of a second at 96 hosts) are
        // computed while the push is planned and runs.
        const PlanRequest bounded = make_request(*net, root, dests, size, model);
        std::future<double> throughput = push_throughput_async(*net, bounded);
        JobSpec spec = plan(*net, root, dests, size, model, algo.name, piece, bwlimit);
        const Relay relay = spec.schedule.relay;
        const auto ms = [](auto a, auto b) { return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count()) + " ms"; };
        core_.say(LogLevel::debug, "push: " + std::to_string(wanted.size()) + " members asked whether they are up in " + ms(asked_at, answered_at) +
            ", the input checked in " + ms(answered_at, began) + ", planned (and the running flows asked) in " + ms(began, std::chrono::steady_clock::now()));
        spec.timeout = options.timeout;
        spec.order = req.dump();  // every participant checks the plan against it
        spec.inputs.push_back(std::move(in.input));
        core_.say(LogLevel::info, "push " + in.what + " (" + std::to_string(static_cast<std::uint64_t>(size)) + " bytes) with " +
            spec.schedule.algorithm + ", by '" + who + "'");
        r = run_job(std::move(spec), respond, tree.empty() ? files[0] : std::string(), field<bool>(req, "verbose", false));
        try {
            r.throughput_bound = throughput.get();
        } catch (const std::exception& e) {
            core_.say(LogLevel::warn, std::string("push: no steady-state bound: ") + e.what());
        }
        r.lower_bound = push_lower_bound(*net, bounded, relay, r.throughput_bound);
    } else {
        core_.say(LogLevel::info, "push " + in.what + " (" + std::to_string(static_cast<std::uint64_t>(size)) +
            " bytes) here only, by '" + who + "'");
        r.algorithm = "upload";
        r.model = std::string(to_string(model));
        r.bytes = static_cast<std::uint64_t>(size);
    }
    if (in.up) {
        finish_upload(*in.up, r, self, in.self_error, who, core_.cfg.name, began);
        if (const auto why = in.up->failure()) core_.say(LogLevel::warn, "the upload of " + in.what + " failed: " + *why);
    }
    add_unreachable(r, down, everyone, core_.cfg.name);
    r.skipped.insert(r.skipped.end(), unmapped.begin(), unmapped.end());
    json out = push_answer(r, files, tree, warnings);
    log_.finish_push(r, out, who, in.what, started);
    return out;
}

/// Members that do not answer are left out of the plan and reported failed (with --all
/// also listed as skipped); the others get the files either way. Never a silent skip.
Pushes::Answering Pushes::answering(const Network& net, const std::vector<NodeId>& wanted) {
    std::vector<std::string> names;
    for (NodeId v : wanted) names.push_back(net.name(v));
    const std::vector<std::string> errors = ask(names);
    Answering a;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        const std::string& why = errors[i];
        if (why.empty()) {
            a.dests.push_back(wanted[i]);
        } else {
            core_.say(LogLevel::warn, "leaving out '" + net.name(wanted[i]) + "': " + why);
            a.down.emplace_back(net.name(wanted[i]), why);
        }
    }
    return a;
}

/// All asked at once, each given the connect timeout at least: a member that is only busy
/// must not be left out (down_after is for `status`). Per name, empty or why not.
std::vector<std::string> Pushes::ask(const std::vector<std::string>& names) {
    const auto patience = std::max<std::chrono::milliseconds>(core_.cfg.down_after, std::chrono::seconds(5));
    return core_.peer->hello_all(names, patience).errors;
}

/// Nothing to plan: a report all the same, naming every member and why.
json Pushes::nobody_answers(const json& req, const std::vector<std::string>& files, const Down& down, bool everyone,
                            const std::string& algo, const std::string& who) {
    JobReport none;
    none.algorithm = algo;
    add_unreachable(none, down, everyone, core_.cfg.name);
    json rj = to_json(none);
    if (files.size() == 1 && !field<bool>(req, "recursive", false)) rj["file"] = files[0];
    const std::string why = everyone ? "no other member answers" : "no destination answers";
    core_.say(LogLevel::info, "push by '" + who + "' of " + std::to_string(files.size()) + " file" + (files.size() == 1 ? "" : "s") +
        ": " + why);
    return {{"ok", false}, {"error", why}, {"reports", json::array({std::move(rj)})}};
}

/// A member the last probe could not reach is not in the map: --all names it as skipped.
std::vector<std::string> Pushes::unmapped_members(const Network& net) const {
    std::vector<std::string> unmapped;
    for (const auto& m : core_.current_members()) {
        if (m.name == core_.cfg.name || net.find(m.name)) continue;
        core_.say(LogLevel::warn, "leaving out '" + m.name + "': not in the map (probe again to include it)");
        unmapped.push_back(m.name);
    }
    return unmapped;
}

/// Planned around relays that do not answer. Announced with its plan alone, then planned
/// beside the jobs that run and the pushes announced before it: auto weighs its candidates
/// with their flows (issue 27).
JobSpec Pushes::plan(const Network& net, NodeId root, const std::vector<NodeId>& dests, double size, ExecModel model,
                     const std::string& algo, std::uint64_t piece, std::uint64_t bwlimit) {
    PlanRequest request = make_request(net, root, dests, size, model);
    const auto planned = [&] {
        return plan_around_down(
            net, request, algo, piece, [this](const std::vector<std::string>& names) { return ask(names); },
            [this](const std::string& line) { core_.say(LogLevel::warn, line); });
    };
    JobSpec spec = planned();
    std::string planning;
    if (net.capacities() && model == ExecModel::nonblocking) {
        std::vector<std::string> members{core_.cfg.name};
        for (NodeId v : dests) members.push_back(net.name(v));
        Peer::Beside others = core_.peer->beside(net, members, &spec.schedule, bwlimit);
        planning = std::move(others.planning);
        if (!others.flows.empty() && algo == "auto") {
            request.beside = std::move(others.flows);
            spec = planned();
        }
    }
    spec.bwlimit = bwlimit;
    spec.planning = std::move(planning);
    return spec;
}

}  // namespace hetcast
