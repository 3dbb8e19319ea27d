// Pushes: files from this member to others by a broadcast algorithm, or a pattern of
// messages from several sources (Wu's multi-node multicast), each run as a job whose
// progress streams back to the caller.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
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
#include "hetcast/runtime/push_plan.hpp"
#include "hetcast/runtime/tree.hpp"
#include "hetcast/report/plan_report.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sched/wu.hpp"
#include "hetcast/sim/wu_bound.hpp"
#include "service_impl.hpp"

namespace hetcast {
namespace fs = std::filesystem;
using namespace detail;

namespace {

/// Where a pushed file lands under every destination's root. A path leaving the root is
/// refused here, before any participant is sent a plan or creates a file.
std::string landing_name(const std::string& dest_dir, const std::string& file_name) {
    const std::string name = (fs::path(dest_dir) / file_name).lexically_normal().string();
    (void)confine("/", name);
    return name;
}

/// The members a push sends to. "to" is a node set (hetcast/runtime/nodeset.hpp: `ws[01-40]`,
/// `@subnet:2`, `@*`, ...) or, from older callers, a list of names; none or an empty list
/// means every other member (`--all`). "exclude", a node set, leaves members out of either.
/// The pushing member holds the files: a node set that names it leaves it out (a list
/// that names it is refused when planning, as before).
struct Destinations {
    std::vector<NodeId> ids;
    bool everyone = false;  // --all: unreachable members are also listed as skipped
};

Destinations push_destinations(const json& req, const Network& net, NodeId root, const GroupWarning& warn) {
    const auto exclude = get_or<std::string>(req, "exclude", "");
    const auto groups = get_or<NodeGroups>(req, "groups", {});  // the caller's cluster file's
    const auto to = req.find("to");
    Destinations d;
    auto& out = d.ids;
    if (to != req.end() && to->is_string()) {
        const std::string text = to->get<std::string>();
        for (const NodeId v : select_members(net, text, exclude, groups, warn)) {
            if (v != root) out.push_back(v);
        }
        if (out.empty()) {
            throw InputError("node set '" + text + "'" + (exclude.empty() ? "" : " less '" + exclude + "'") +
                             " leaves no destination (the member pushing, '" + net.name(root) + "', is never one)");
        }
        return d;
    }
    const auto names = get_or<std::vector<std::string>>(req, "to", {});
    d.everyone = names.empty();
    for (const auto& name : names) out.push_back(net.id(name));
    if (d.everyone) {
        for (NodeId v = 0; v < net.size(); ++v) {
            if (v != root) out.push_back(v);
        }
    }
    if (!exclude.empty()) {
        const auto left_out = select_members(net, exclude, {}, groups, warn);
        std::erase_if(out, [&](NodeId v) { return std::find(left_out.begin(), left_out.end(), v) != left_out.end(); });
        if (out.empty()) throw InputError("node set '" + exclude + "' excludes every destination");
    }
    return d;
}

/// A push's --bwlimit (bytes/s; 0: none).
std::uint64_t bwlimit_of(const json& req) {
    const auto rate = get_or<std::uint64_t>(req, "bwlimit", 0);
    if (rate != 0 && rate < min_bwlimit) throw InputError("--bwlimit must be at least 1 KiB/s");
    return rate;
}

/// The map a push plans on: with a --bwlimit, no member sends faster than it, so that the
/// plan and its prediction account for the limit.
std::optional<Network> map_for_push(std::optional<Network> net, std::uint64_t bwlimit) {
    if (!net) throw InputError("no map yet: run 'hetcast probe' first");
    if (bwlimit > 0) return net->with_rate_limit(static_cast<double>(bwlimit));
    return net;
}

}  // namespace

/// Runs one job and streams its progress to the caller: which file is in flight (of a
/// bundle: the first not yet everywhere), the bytes every destination holds of what each
/// is owed, and (as before) the bytes delivered over the bytes owed, summed over them.
/// When the caller asked for `members` (push --verbose), each participant's state too.
JobReport Service::Impl::run_job(JobSpec spec, const Peer::Responder& respond, const std::string& label,
                                 bool members) {
    const std::vector<TreeEntry> tree = spec.inputs.size() == 1 ? spec.inputs[0].tree : std::vector<TreeEntry>{};
    spec.progress = [&respond, label, tree, members](const JobProgress& p) {
        InFlight f{0, 1, label};
        if (!tree.empty()) f = in_flight(tree, p.everywhere);
        json progress{{"file", f.index}, {"files", f.files}, {"name", f.path}, {"bytes", p.delivered},
                      {"of", p.owed},    {"everywhere", p.everywhere}, {"size", p.size}};
        if (members) {
            json list = json::array();
            for (const auto& m : p.members) {
                list.push_back({{"name", m.name}, {"state", m.state}, {"bytes", m.bytes}, {"owed", m.owed}});
            }
            progress["members"] = std::move(list);
        }
        respond({{"progress", std::move(progress)}});
    };
    // The caller learns the id at once: what it cancels with (Ctrl-C, `hetcast cancel`).
    spec.started = [&respond](std::uint64_t job) {
        respond({{"progress", {{"file", 0}, {"job", std::to_string(job)}}}});
    };
    return peer->run(std::move(spec));
}

/// Wu's multi-node multicast, executed: each entry's source serves its own file (or a
/// generated payload); sizes come from the sources before planning.
json Service::Impl::push_pattern(const json& req, const Network& net, const Peer::Responder& respond) {
    const auto algo = get_or<std::string>(req, "algo", "wrp");
    const auto dest_dir = get_or<std::string>(req, "dest", "");
    PatternRequest pr = parse_pattern(get_or<std::string>(req, "pattern", ""),
                                      get_or<std::string>(req, "pattern_name", "pattern"), net);
    pr.model = parse_exec_model(get_or<std::string>(req, "model", "nonblocking"));
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
        const auto d = peer->describe(source, origin, 0, req.dump());
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
    spec.lower_bound = wu_lower_bound(net, pr);
    spec.inputs = std::move(inputs);
    spec.order = req.dump();  // the sources that are not this daemon check it
    spec.bwlimit = bwlimit_of(req);
    say(LogLevel::info, "push a pattern of " + std::to_string(pr.messages.size()) + " messages with " + spec.schedule.algorithm);
    const JobReport r = run_job(std::move(spec), respond, "pattern " + get_or<std::string>(req, "pattern_name", "pattern"),
                                get_or<bool>(req, "verbose", false));
    json out{{"ok", r.ok()}, {"reports", json::array({to_json(r)})}};
    if (!r.ok()) out["error"] = "some destinations failed";
    return out;
}

json Service::Impl::push(const json& req, const Peer::Responder& respond) {
    const std::uint64_t bwlimit = bwlimit_of(req);
    if (req.contains("pattern")) {
        const auto net = map_for_push(current_map(), bwlimit);
        const Busy busy(*this);
        return push_pattern(req, *net, respond);
    }
    std::vector<std::string> files;
    if (const auto it = req.find("files"); it != req.end()) {
        if (!it->is_array()) throw InputError("push: 'files' must be a list");
        for (const json& f : *it) files.push_back(bytes_from_json(f, "push: a file name"));
    }
    const auto algo_name = get_or<std::string>(req, "algo", "auto");
    const auto dest_dir = get_or<std::string>(req, "dest", "");
    const auto model = parse_exec_model(get_or<std::string>(req, "model", "nonblocking"));
    if (files.empty()) throw InputError("push: no files");
    const Algorithm& algo = find_algorithm(algo_name);
    const auto net = map_for_push(current_map(), bwlimit);
    const NodeId root = net->id(cfg.name);
    std::vector<std::string> warnings;
    const auto [wanted, everyone] = push_destinations(req, *net, root, [&](const std::string& line) {
        say(LogLevel::warn, "push: " + line);
        warnings.push_back(line);
    });
    // Members that do not answer are left out of the plan and reported failed (with --all
    // also listed as skipped); the others get the files either way. Never a silent skip.
    // All asked at once, each given the connect timeout at least: a member that is only
    // busy must not be left out (down_after is for `status`).
    const auto patience = std::max<std::chrono::milliseconds>(cfg.down_after, std::chrono::seconds(5));
    std::vector<std::future<std::string>> answers;
    for (NodeId v : wanted) {
        answers.push_back(std::async(std::launch::async, [this, name = net->name(v), patience]() -> std::string {
            try {
                (void)peer->call(name, {{"cmd", "hello"}}, patience);
                return {};
            } catch (const std::exception& e) {
                return e.what();
            }
        }));
    }
    std::vector<NodeId> dests;
    std::vector<std::pair<std::string, std::string>> down;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        const std::string why = answers[i].get();
        if (why.empty()) {
            dests.push_back(wanted[i]);
        } else {
            say(LogLevel::warn, "leaving out '" + net->name(wanted[i]) + "': " + why);
            down.emplace_back(net->name(wanted[i]), why);
        }
    }
    if (dests.empty()) throw Error(everyone ? "no other member answers" : "no destination answers");
    // A member the last probe could not reach is not in the map: --all names it as skipped.
    std::vector<std::string> unmapped;
    if (everyone) {
        for (const auto& m : current_members()) {
            if (m.name == cfg.name || net->find(m.name)) continue;
            say(LogLevel::warn, "leaving out '" + m.name + "': not in the map (probe again to include it)");
            unmapped.push_back(m.name);
        }
    }

    // Everything is checked before the first byte moves. One file stays a plain message;
    // several files, or any -r, are one bundle (runtime/tree.hpp): one plan, one job.
    const bool recursive = get_or<bool>(req, "recursive", false);
    const bool preserve = get_or<bool>(req, "preserve", true);
    const bool owner = get_or<bool>(req, "preserve_owner", false);
    JobInput input;
    std::string what;
    if (files.size() == 1 && !recursive) {
        const std::string& f = files[0];
        if (!fs::path(f).is_absolute()) throw InputError("push: '" + f + "' is not an absolute path");
        std::error_code ec;
        if (fs::is_directory(f, ec)) throw InputError("push: '" + f + "' is a directory (use -r)");
        if (!fs::is_regular_file(f, ec)) throw InputError("push: '" + f + "' is not a readable file");
        (void)served(f, cfg.serve_roots);  // said before anything is read; FileBody checks what it opened
        if (fs::file_size(f, ec) > cfg.max_message) {
            throw InputError("push: '" + f + "' is over the limit of " + std::to_string(cfg.max_message) + " bytes");
        }
        auto body = std::make_shared<FileBody>(f, &cfg.serve_roots);
        input = JobInput(body, landing_name(dest_dir, fs::path(f).filename().string()));
        input.preserve = preserve;
        if (preserve) input.mtime = body->mtime();
        what = f;
    } else {
        for (const auto& f : files) (void)served(f, cfg.serve_roots);  // each source itself, said first
        auto tree = std::make_shared<TreeBody>(build_tree(files, TreeOptions{recursive, owner}), &cfg.serve_roots);
        if (tree->size() > cfg.max_message) {
            throw InputError("push: the files add up to " + std::to_string(tree->size()) + " bytes, over the limit of " +
                             std::to_string(cfg.max_message));
        }
        std::string landing = dest_dir.empty() ? std::string(".") : fs::path(dest_dir).lexically_normal().string();
        while (landing.size() > 1 && landing.back() == '/') landing.pop_back();
        if (landing != ".") (void)confine("/", landing);
        input = JobInput(tree, landing);
        input.tree = tree->entries();
        if (const std::size_t text = tree_to_json(input.tree).dump().size(); text > max_manifest_bytes) {
            throw InputError("push: the list of " + std::to_string(input.tree.size()) + " entries takes " +
                             std::to_string(text >> 20) + " MiB, over the " + std::to_string(max_manifest_bytes >> 20) +
                             " MiB one job carries: push the tree in parts");
        }
        input.preserve = preserve;
        input.owner = owner;
        const TreeCounts n = count_tree(input.tree);
        what = std::to_string(n.files) + " files, " + std::to_string(n.dirs) + " directories, " +
               std::to_string(n.links) + " links";
    }
    // A push may ask for its own piece size; else the daemon's (0: by size).
    const std::uint64_t piece = get_or<std::uint64_t>(req, "piece", cfg.piece);
    const Busy busy(*this);

    const double size = static_cast<double>(input.body->size());
    const PlanRequest pr = make_request(*net, root, dests, size, model);
    JobSpec spec = plan_push(*net, pr, algo.name, piece);
    spec.bwlimit = bwlimit;
    const std::vector<TreeEntry> tree = input.tree;
    spec.inputs.push_back(std::move(input));
    say(LogLevel::info, "push " + what + " (" + std::to_string(static_cast<std::uint64_t>(size)) + " bytes) with " +
        spec.schedule.algorithm);
    JobReport r = run_job(std::move(spec), respond, tree.empty() ? files[0] : std::string(),
                          get_or<bool>(req, "verbose", false));
    for (const auto& [name, why] : down) {
        if (everyone) r.skipped.push_back(name);
        r.outcomes.push_back({0, cfg.name, name, 0, 0, false, "unreachable: " + why});
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
    return out;
}

}  // namespace hetcast
