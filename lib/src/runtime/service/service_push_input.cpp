// A push's input from its request: an upload from the operator's disk, a file on this
// member, a bundle of files and trees, a pattern's messages; and an upload's end.
#include "service_push_input.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/tree.hpp"
#include "service_push_request.hpp"
#include "../wire/json_field.hpp"

namespace hetcast::detail {
namespace fs = std::filesystem;

namespace {

/// What every kind of input reads of the request.
struct InputOptions {
    bool recursive = false;
    bool preserve = true;
    bool owner = false;
};

/// A file, or a bundle, on the operator's disk: this member lands a copy too when `self`.
PushInput upload_input(const json& req, const std::vector<std::string>& files, const std::string& dest_dir, bool self,
                       const std::string& who, const InputOptions& o, const DaemonConfig& cfg, Peer& peer,
                       const Peer::Responder& respond) {
    PushInput in;
    UploadSpec u = upload_from_json(req.at("upload"));
    if (u.size > cfg.max_message) {
        throw InputError("push: the upload's " + std::to_string(u.size) + " bytes are over the limit of " +
                         std::to_string(cfg.max_message));
    }
    // Several files or -r: a bundle whose manifest comes with the request (checked as a
    // receiver checks one from a plan).
    const auto tree_it = req.find("tree");
    std::vector<TreeEntry> entries;
    if (tree_it != req.end()) entries = tree_from_json(*tree_it, u.size);
    if (entries.empty() && (files.size() != 1 || o.recursive)) throw InputError("push: an upload of several files needs its 'tree'");
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
    if (self) landing = Upload::Landing{cfg.dest_root, name, o.preserve, cfg.umask, entries, o.owner};
    in.upload_piece = u.piece;
    std::vector<net::Digest> pieces = u.pieces;
    const std::int64_t mtime = u.mtime;
    try {
        in.up = std::make_unique<Upload>(peer, u, who, cfg.stall_timeout, cfg.state_dir, landing);
    } catch (const InputError&) {
        throw;
    } catch (const Error& e) {
        // Its own copy cannot be written (a destination root it cannot use): this member
        // still forwards to the others, and fails as a destination.
        if (!landing) throw;
        in.self_error = e.what();
        in.up = std::make_unique<Upload>(peer, std::move(u), who, cfg.stall_timeout, cfg.state_dir, std::nullopt);
    }
    in.input = JobInput(in.up->body(), name);
    in.input.pieces = std::move(pieces);
    in.input.preserve = o.preserve;
    if (entries.empty()) {
        if (o.preserve) in.input.mtime = mtime;
        in.what = files[0] + " from the disk of '" + who + "'";
    } else {
        const TreeCounts n = count_tree(entries);
        in.input.tree = std::move(entries);
        in.input.owner = o.owner;
        in.what = std::to_string(n.files) + " files, " + std::to_string(n.dirs) + " directories, " +
                  std::to_string(n.links) + " links from the disk of '" + who + "'";
    }
    respond({{"progress", {{"file", 0}, {"upload", std::to_string(in.up->id())}}}});
    return in;
}

PushInput file_input(const std::string& f, const std::string& dest_dir, const InputOptions& o, const DaemonConfig& cfg) {
    if (!fs::path(f).is_absolute()) throw InputError("push: '" + f + "' is not an absolute path");
    std::error_code ec;
    if (fs::is_directory(f, ec)) throw InputError("push: '" + f + "' is a directory (use -r)");
    if (!fs::is_regular_file(f, ec)) throw InputError("push: '" + f + "' is not a readable file");
    (void)served(f, cfg.serve_roots);  // said before anything is read; FileBody checks what it opened
    if (fs::file_size(f, ec) > cfg.max_message) {
        throw InputError("push: '" + f + "' is over the limit of " + std::to_string(cfg.max_message) + " bytes");
    }
    auto body = std::make_shared<FileBody>(f, &cfg.serve_roots);
    PushInput in;
    in.input = JobInput(body, landing_name(dest_dir, fs::path(f).filename().string()));
    in.input.preserve = o.preserve;
    if (o.preserve) in.input.mtime = body->mtime();
    in.what = f;
    return in;
}

PushInput tree_input(const std::vector<std::string>& files, const std::string& dest_dir, const InputOptions& o,
                     const DaemonConfig& cfg) {
    for (const auto& f : files) (void)served(f, cfg.serve_roots);  // each source itself, said first
    auto tree = std::make_shared<TreeBody>(build_tree(files, TreeOptions{o.recursive, o.owner}), &cfg.serve_roots);
    if (tree->size() > cfg.max_message) {
        throw InputError("push: the files add up to " + std::to_string(tree->size()) + " bytes, over the limit of " +
                         std::to_string(cfg.max_message));
    }
    const std::string landing = landing_dir(dest_dir);
    check_landing("/", landing, tree->entries());
    PushInput in;
    in.input = JobInput(tree, landing);
    in.input.tree = tree->entries();
    if (const std::size_t text = tree_to_json(in.input.tree).dump().size(); text > max_manifest_bytes) {
        throw InputError("push: the list of " + std::to_string(in.input.tree.size()) + " entries takes " +
                         std::to_string(text >> 10) + " KiB, over the " + std::to_string(max_manifest_bytes >> 10) +
                         " KiB one job carries: push the tree in parts");
    }
    in.input.preserve = o.preserve;
    in.input.owner = o.owner;
    const TreeCounts n = count_tree(in.input.tree);
    in.what = std::to_string(n.files) + " files, " + std::to_string(n.dirs) + " directories, " +
              std::to_string(n.links) + " links";
    return in;
}

}  // namespace

PushInput push_input(const json& req, const std::vector<std::string>& files, const std::string& dest_dir, bool self,
                     const std::string& who, const DaemonConfig& cfg, Peer& peer, const Peer::Responder& respond) {
    InputOptions o;
    o.recursive = field<bool>(req, "recursive", false);
    o.preserve = field<bool>(req, "preserve", true);
    o.owner = field<bool>(req, "preserve_owner", false);
    if (req.contains("upload")) return upload_input(req, files, dest_dir, self, who, o, cfg, peer, respond);
    if (files.size() == 1 && !o.recursive) return file_input(files[0], dest_dir, o, cfg);
    return tree_input(files, dest_dir, o, cfg);
}

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

std::vector<JobInput> pattern_inputs(PatternRequest& pr, const Network& net, const std::string& dest_dir, Peer& peer,
                                     const json& req) {
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
        const auto d = peer.describe(source, origin, 0, req.dump());
        m.size = static_cast<double>(d.size);
        inputs.emplace_back(origin, name, d.size, d.sha);
        inputs.back().mode = d.mode;
    }
    return inputs;
}

}  // namespace hetcast::detail
