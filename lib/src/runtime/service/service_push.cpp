// Pushes: files from this member to others by a broadcast algorithm, or a pattern of
// messages from several sources (Wu's multi-node multicast), each run as a job whose
// progress streams back to the caller.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/byte_text.hpp"
#include "hetcast/runtime/files.hpp"
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
#include "service_pushes.hpp"
#include "service_push_request.hpp"

namespace hetcast {
namespace fs = std::filesystem;
using namespace detail;

namespace {

/// After an upload's job: this member's own copy lands once the whole upload is in and
/// verified (an outcome of its own, from the operator). When no destination got the file
/// the job is over (failed, cancelled) and so is the upload.
void finish_upload(Upload& up, JobReport& r, bool self, const std::optional<std::string>& self_error,
                   const std::string& who, const std::string& here, std::chrono::steady_clock::time_point started) {
    const bool delivered = std::any_of(r.outcomes.begin(), r.outcomes.end(), [](const Outcome& o) { return o.ok; });
    if (!r.outcomes.empty() && !delivered) up.fail("the push ended without a delivery");
    if (!self) return;
    const std::optional<std::string> why = self_error ? self_error : up.finish();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    r.outcomes.push_back({0, who, here, 0, secs, !why, why.value_or("")});
    r.achieved = std::max(r.achieved, why ? r.achieved : secs);
}

// Nodes with tasks in `s` that are neither the root, a destination nor in `known`: relays.
std::vector<NodeId> outside_relays(const Schedule& s, NodeId root, const std::vector<NodeId>& dests,
                                   const std::vector<NodeId>& known) {
    const auto in = [](const std::vector<NodeId>& set, NodeId v) { return std::find(set.begin(), set.end(), v) != set.end(); };
    std::vector<NodeId> out;
    for (NodeId v = 0; v < s.tasks.size(); ++v) {
        if (v == root || s.tasks[v].empty() || in(dests, v) || in(known, v)) continue;
        out.push_back(v);
    }
    return out;
}

// A plan may relay through members that are not destinations (ecef-relay, or auto choosing
// it): those must answer too (`ask`: per name, empty or why not), else it is planned again
// without them.
JobSpec plan_around_down(const Network& net, PlanRequest pr, const std::string& algo, std::uint64_t piece,
                         const std::function<std::vector<std::string>(const std::vector<std::string>&)>& ask,
                         const std::function<void(const std::string&)>& warn) {
    JobSpec spec = plan_push(net, pr, algo, piece);
    const auto avoided = [&](NodeId v) { return std::find(pr.options.avoid.begin(), pr.options.avoid.end(), v) != pr.options.avoid.end(); };
    std::vector<NodeId> asked_already;
    for (std::vector<NodeId> relays = outside_relays(spec.schedule, pr.root, pr.dests, {}); !relays.empty();
         relays = outside_relays(spec.schedule, pr.root, pr.dests, asked_already)) {
        std::vector<std::string> names;
        for (NodeId v : relays) names.push_back(net.name(v));
        const std::vector<std::string> errors = ask(names);
        asked_already.insert(asked_already.end(), relays.begin(), relays.end());
        const std::size_t before = pr.options.avoid.size();
        for (std::size_t i = 0; i < relays.size(); ++i) {
            if (errors[i].empty()) continue;
            warn("not relaying through '" + names[i] + "': " + errors[i]);
            pr.options.avoid.push_back(relays[i]);
        }
        if (pr.options.avoid.size() == before) break;
        spec = plan_push(net, pr, algo, piece);
        for (NodeId v : outside_relays(spec.schedule, pr.root, pr.dests, {})) {
            if (avoided(v)) {
                throw Error("push: " + spec.schedule.algorithm + " relays through '" + net.name(v) +
                            "', which does not answer; try another --algo");
            }
        }
    }
    return spec;
}

/// The map a push plans on: with a --bwlimit, no member sends faster than it, so that the
/// plan and its prediction account for the limit.
std::optional<Network> map_for_push(std::optional<Network> net, std::uint64_t bwlimit) {
    if (!net) throw InputError("no map yet: run 'hetcast probe' first");
    return capped_for_push(*net, bwlimit);
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
    std::vector<JobInput> inputs;
    for (std::size_t k = 0; k < pr.messages.size(); ++k) {
        Message& m = pr.messages[k];
        const std::string& file = pr.files[k];
        const std::string source = net.name(m.source);
        if (!file.empty() && !fs::path(file).is_absolute()) {
            throw InputError("pattern entry " + std::to_string(k + 1) + ": file '" + file +
                             "' must be an absolute path on " + source);
        }
        const std::string origin = file.empty() ? "gen:" + std::to_string(static_cast<std::uint64_t>(m.size)) + ":" +
                                                      std::to_string(k + 1)
                                                : "file:" + file;
        const std::string name = landing_name(dest_dir, file.empty() ? source + "-" + std::to_string(k + 1) + ".bin"
                                                                     : fs::path(file).filename().string());
        const auto d = core_.peer->describe(source, origin, 0, req.dump());
        m.size = static_cast<double>(d.size);
        inputs.emplace_back(origin, name, d.size, d.sha);
        inputs.back().mode = d.mode;
    }
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
    const std::string& algo_name = options.algo;
    const auto dest_dir = field<std::string>(req, "dest", "");
    const auto model = parse_exec_model(field<std::string>(req, "model", "nonblocking"));
    if (files.empty()) throw InputError("push: no files");
    const Algorithm& algo = find_algorithm(algo_name);
    const auto net = map_for_push(core_.current_map(), bwlimit);
    const NodeId root = net->id(core_.cfg.name);
    const auto upload_it = req.find("upload");
    const bool upload = upload_it != req.end();
    std::vector<std::string> warnings;
    const auto [wanted, everyone, self] = push_destinations(req, *net, root, upload, [&](const std::string& line) {
        core_.say(LogLevel::warn, "push: " + line);
        warnings.push_back(line);
    });
    // Members that do not answer are left out of the plan and reported failed (with --all
    // also listed as skipped); the others get the files either way. Never a silent skip.
    // All asked at once, each given the connect timeout at least: a member that is only
    // busy must not be left out (down_after is for `status`).
    const auto patience = std::max<std::chrono::milliseconds>(core_.cfg.down_after, std::chrono::seconds(5));
    std::vector<std::string> names;
    for (NodeId v : wanted) names.push_back(net->name(v));
    const auto answers = core_.peer->hello_all(names, patience);
    std::vector<NodeId> dests;
    std::vector<std::pair<std::string, std::string>> down;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        const std::string& why = answers.errors[i];
        if (why.empty()) {
            dests.push_back(wanted[i]);
        } else {
            core_.say(LogLevel::warn, "leaving out '" + net->name(wanted[i]) + "': " + why);
            down.emplace_back(net->name(wanted[i]), why);
        }
    }
    if (dests.empty() && !self) {
        // Nothing to plan: a report all the same, naming every member and why.
        JobReport none;
        none.algorithm = algo_name;
        for (const auto& [name, why] : down) {
            if (everyone) none.skipped.push_back(name);
            none.outcomes.push_back({0, core_.cfg.name, name, 0, 0, false, "unreachable: " + why});
            none.failed_members.push_back({name, "unreachable: " + why});
        }
        json rj = to_json(none);
        if (files.size() == 1 && !field<bool>(req, "recursive", false)) rj["file"] = files[0];
        const std::string why = everyone ? "no other member answers" : "no destination answers";
        core_.say(LogLevel::info, "push by '" + who + "' of " + std::to_string(files.size()) + " file" + (files.size() == 1 ? "" : "s") +
            ": " + why);
        return {{"ok", false}, {"error", why}, {"reports", json::array({std::move(rj)})}};
    }
    // A member the last probe could not reach is not in the map: --all names it as skipped.
    std::vector<std::string> unmapped;
    if (everyone) {
        for (const auto& m : core_.current_members()) {
            if (m.name == core_.cfg.name || net->find(m.name)) continue;
            core_.say(LogLevel::warn, "leaving out '" + m.name + "': not in the map (probe again to include it)");
            unmapped.push_back(m.name);
        }
    }

    // Everything is checked before the first byte moves. One file stays a plain message;
    // several files, or any -r, are one bundle (runtime/tree.hpp): one plan, one job.
    const bool recursive = field<bool>(req, "recursive", false);
    const bool preserve = field<bool>(req, "preserve", true);
    const bool owner = field<bool>(req, "preserve_owner", false);
    JobInput input;
    std::string what;
    // A file on the operator's disk: streamed in by the CLI on this request's connection;
    // this member is the source and forwards each piece once it is in and verified.
    std::unique_ptr<Upload> up;
    std::uint64_t upload_piece = 0;
    std::optional<std::string> self_error;  // this member, a destination, cannot take its copy
    if (upload) {
        UploadSpec u = upload_from_json(*upload_it);
        if (u.size > core_.cfg.max_message) {
            throw InputError("push: the upload's " + std::to_string(u.size) + " bytes are over the limit of " +
                             std::to_string(core_.cfg.max_message));
        }
        // Several files or -r: a bundle whose manifest comes with the request (checked as a
        // receiver checks one from a plan).
        const auto tree_it = req.find("tree");
        std::vector<TreeEntry> entries;
        if (tree_it != req.end()) entries = tree_from_json(*tree_it, u.size);
        if (entries.empty() && (files.size() != 1 || recursive)) throw InputError("push: an upload of several files needs its 'tree'");
        if (const std::size_t text = tree_it == req.end() ? 0 : tree_it->dump().size(); text > max_upload_manifest_bytes) {
            throw InputError("push: the list of " + std::to_string(entries.size()) + " entries takes " +
                             std::to_string(text >> 10) + " KiB, over the " + std::to_string(max_upload_manifest_bytes >> 10) +
                             " KiB one upload carries: push the tree in parts");
        }
        std::string name;
        if (entries.empty()) {
            name = landing_name(dest_dir, fs::path(files[0]).filename().string());
        } else {
            name = landing_dir(dest_dir);
            check_landing("/", name, entries);
        }
        std::optional<Upload::Landing> landing;
        if (self) landing = Upload::Landing{core_.cfg.dest_root, name, preserve, core_.cfg.umask, entries, owner};
        upload_piece = u.piece;
        std::vector<net::Digest> pieces = u.pieces;
        const std::int64_t mtime = u.mtime;
        try {
            up = std::make_unique<Upload>(*core_.peer, u, who, core_.cfg.stall_timeout, core_.cfg.state_dir, landing);
        } catch (const InputError&) {
            throw;
        } catch (const Error& e) {
            // Its own copy cannot be written (a destination root it cannot use): this member
            // still forwards to the others, and fails as a destination.
            if (!landing) throw;
            self_error = e.what();
            up = std::make_unique<Upload>(*core_.peer, std::move(u), who, core_.cfg.stall_timeout, core_.cfg.state_dir, std::nullopt);
        }
        input = JobInput(up->body(), name);
        input.pieces = std::move(pieces);
        input.preserve = preserve;
        if (entries.empty()) {
            if (preserve) input.mtime = mtime;
            what = files[0] + " from the disk of '" + who + "'";
        } else {
            const TreeCounts n = count_tree(entries);
            input.tree = std::move(entries);
            input.owner = owner;
            what = std::to_string(n.files) + " files, " + std::to_string(n.dirs) + " directories, " +
                   std::to_string(n.links) + " links from the disk of '" + who + "'";
        }
        respond({{"progress", {{"file", 0}, {"upload", std::to_string(up->id())}}}});
    } else if (files.size() == 1 && !recursive) {
        const std::string& f = files[0];
        if (!fs::path(f).is_absolute()) throw InputError("push: '" + f + "' is not an absolute path");
        std::error_code ec;
        if (fs::is_directory(f, ec)) throw InputError("push: '" + f + "' is a directory (use -r)");
        if (!fs::is_regular_file(f, ec)) throw InputError("push: '" + f + "' is not a readable file");
        (void)served(f, core_.cfg.serve_roots);  // said before anything is read; FileBody checks what it opened
        if (fs::file_size(f, ec) > core_.cfg.max_message) {
            throw InputError("push: '" + f + "' is over the limit of " + std::to_string(core_.cfg.max_message) + " bytes");
        }
        auto body = std::make_shared<FileBody>(f, &core_.cfg.serve_roots);
        input = JobInput(body, landing_name(dest_dir, fs::path(f).filename().string()));
        input.preserve = preserve;
        if (preserve) input.mtime = body->mtime();
        what = f;
    } else {
        for (const auto& f : files) (void)served(f, core_.cfg.serve_roots);  // each source itself, said first
        auto tree = std::make_shared<TreeBody>(build_tree(files, TreeOptions{recursive, owner}), &core_.cfg.serve_roots);
        if (tree->size() > core_.cfg.max_message) {
            throw InputError("push: the files add up to " + std::to_string(tree->size()) + " bytes, over the limit of " +
                             std::to_string(core_.cfg.max_message));
        }
        const std::string landing = landing_dir(dest_dir);
        check_landing("/", landing, tree->entries());
        input = JobInput(tree, landing);
        input.tree = tree->entries();
        if (const std::size_t text = tree_to_json(input.tree).dump().size(); text > max_manifest_bytes) {
            throw InputError("push: the list of " + std::to_string(input.tree.size()) + " entries takes " +
                             std::to_string(text >> 10) + " KiB, over the " + std::to_string(max_manifest_bytes >> 10) +
                             " KiB one job carries: push the tree in parts");
        }
        input.preserve = preserve;
        input.owner = owner;
        const TreeCounts n = count_tree(input.tree);
        what = std::to_string(n.files) + " files, " + std::to_string(n.dirs) + " directories, " +
               std::to_string(n.links) + " links";
    }
    // A push may ask for its own piece size; else the daemon's (0: by size).
    const std::uint64_t piece = up ? upload_piece : options.piece > 0 ? options.piece : core_.cfg.piece;
    const Busy busy(*this);

    const double size = static_cast<double>(input.body->size());
    const std::vector<TreeEntry> tree = input.tree;
    const auto began = std::chrono::steady_clock::now();
    const std::string started = utc_now();
    JobReport r;
    if (!dests.empty()) {
        PlanRequest request = make_request(*net, root, dests, size, model);
        const auto plan = [&] {
            return plan_around_down(
                *net, request, algo.name, piece,
                [&](const std::vector<std::string>& names) { return core_.peer->hello_all(names, patience).errors; },
                [&](const std::string& line) { core_.say(LogLevel::warn, line); });
        };
        JobSpec spec = plan();
        // Announced with its plan alone, then planned beside the jobs that run and the pushes
        // announced before it: auto weighs its candidates with their flows (issue 27).
        std::string planning;
        if (net->capacities() && model == ExecModel::nonblocking) {
            std::vector<std::string> members{core_.cfg.name};
            for (NodeId v : dests) members.push_back(net->name(v));
            Peer::Beside others = core_.peer->beside(*net, members, &spec.schedule, bwlimit);
            planning = std::move(others.planning);
            if (!others.flows.empty() && algo.name == "auto") {
                request.beside = std::move(others.flows);
                spec = plan();
            }
        }
        spec.bwlimit = bwlimit;
        spec.timeout = options.timeout;
        spec.planning = std::move(planning);
        spec.order = req.dump();  // every participant checks the plan against it
        spec.inputs.push_back(std::move(input));
        core_.say(LogLevel::info, "push " + what + " (" + std::to_string(static_cast<std::uint64_t>(size)) + " bytes) with " +
            spec.schedule.algorithm + ", by '" + who + "'");
        r = run_job(std::move(spec), respond, tree.empty() ? files[0] : std::string(), field<bool>(req, "verbose", false));
    } else {
        core_.say(LogLevel::info, "push " + what + " (" + std::to_string(static_cast<std::uint64_t>(size)) +
            " bytes) here only, by '" + who + "'");
        r.algorithm = "upload";
        r.model = std::string(to_string(model));
        r.bytes = static_cast<std::uint64_t>(size);
    }
    if (up) {
        finish_upload(*up, r, self, self_error, who, core_.cfg.name, began);
        if (const auto why = up->failure()) core_.say(LogLevel::warn, "the upload of " + what + " failed: " + *why);
    }
    for (const auto& [name, why] : down) {
        if (everyone) r.skipped.push_back(name);
        r.outcomes.push_back({0, core_.cfg.name, name, 0, 0, false, "unreachable: " + why});
        r.failed_members.push_back({name, "unreachable: " + why});
    }
    r.skipped.insert(r.skipped.end(), unmapped.begin(), unmapped.end());
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
    log_.finish_push(r, out, who, what, started);
    return out;
}

}  // namespace hetcast
