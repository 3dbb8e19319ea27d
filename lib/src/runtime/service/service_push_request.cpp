// What a push request asks for: its files, where they land, its destinations; and the
// scope of an operator's push order as a participant reads it (issue 24).
#include "service_push_request.hpp"

#include <algorithm>
#include <filesystem>

#include "hetcast/error.hpp"
#include "hetcast/runtime/byte_text.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/upload.hpp"
#include "hetcast/sched/pattern.hpp"
#include "../wire/json_field.hpp"

namespace hetcast {
namespace fs = std::filesystem;

namespace detail {

/// Where a pushed file lands under every destination's root. A path leaving the root is
/// refused here, before any participant is sent a plan or creates a file.
std::string landing_name(const std::string& dest_dir, const std::string& file_name) {
    const std::string name = (fs::path(dest_dir) / file_name).lexically_normal().string();
    (void)confine("/", name);
    return name;
}

/// Where a push's bundle lands: the landing directory `dest` ("." the root itself).
std::string landing_dir(const std::string& dest_dir) {
    std::string name = dest_dir.empty() ? std::string(".") : fs::path(dest_dir).lexically_normal().string();
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    if (name != ".") (void)confine("/", name);
    return name;
}

/// Whether a push of `files` is one bundle: several files, -r, or an upload with a manifest.
bool push_is_bundle(const json& req, const std::vector<std::string>& files) {
    if (req.contains("upload")) {
        const auto t = req.find("tree");
        return t != req.end() && t->is_array() && !t->empty();
    }
    return files.size() != 1 || field<bool>(req, "recursive", false);
}

std::vector<std::string> push_files(const json& req) {
    std::vector<std::string> files;
    if (const auto it = req.find("files"); it != req.end()) {
        if (!it->is_array()) throw InputError("push: 'files' must be a list");
        for (const json& f : *it) files.push_back(bytes_from_json(f, "push: a file name"));
    }
    return files;
}

/// `upload`: the files come from the operator, so the pushing member may be a destination.
Destinations push_destinations(const json& req, const Network& net, NodeId root, bool upload, const GroupWarning& warn) {
    const auto exclude = field<std::string>(req, "exclude", "");
    const auto groups = field<NodeGroups>(req, "groups", {});  // the caller's cluster file's
    const auto to = req.find("to");
    Destinations d;
    auto& out = d.ids;
    if (to != req.end() && to->is_string()) {
        const std::string text = to->get<std::string>();
        for (const NodeId v : select_members(net, text, exclude, groups, warn)) {
            if (v != root) out.push_back(v);
            d.self = d.self || (upload && v == root);
        }
        if (out.empty() && !d.self) {
            throw InputError("node set '" + text + "'" + (exclude.empty() ? "" : " less '" + exclude + "'") +
                             " leaves no destination (the member pushing, '" + net.name(root) + "', is never one)");
        }
        return d;
    }
    const auto names = field<std::vector<std::string>>(req, "to", {});
    d.everyone = names.empty();
    for (const auto& name : names) {
        if (upload && name == net.name(root)) {
            d.self = true;
        } else {
            out.push_back(net.id(name));
        }
    }
    d.self = d.self || (upload && d.everyone);
    if (d.everyone) {
        for (NodeId v = 0; v < net.size(); ++v) {
            if (v != root) out.push_back(v);
        }
    }
    if (!exclude.empty()) {
        const auto left_out = select_members(net, exclude, {}, groups, warn);
        std::erase_if(out, [&](NodeId v) { return std::find(left_out.begin(), left_out.end(), v) != left_out.end(); });
        if (std::find(left_out.begin(), left_out.end(), root) != left_out.end()) d.self = false;
        if (out.empty() && !d.self) throw InputError("node set '" + exclude + "' excludes every destination");
    }
    return d;
}

OrderScope order_scope(const json& order, const std::optional<Network>& net) {
    if (!net) throw InputError("no map here to read the order's destinations on");
    const std::string coordinator = order.at("order").at("to").get<std::string>();
    const auto dest_dir = field<std::string>(order, "dest", "");
    const auto names = [&](const std::vector<NodeId>& ids) {
        std::vector<std::string> out;
        for (NodeId v : ids) out.push_back(net->name(v));
        return out;
    };
    OrderScope scope;
    if (order.contains("pattern")) {
        // As push_pattern reads it, entry by entry.
        const PatternRequest pr = parse_pattern(field<std::string>(order, "pattern", ""),
                                                field<std::string>(order, "pattern_name", "pattern"), *net);
        for (std::size_t k = 0; k < pr.messages.size(); ++k) {
            const Message& m = pr.messages[k];
            const std::string& file = pr.files[k];
            const std::string source = net->name(m.source);
            ScopedMessage sm;
            sm.source = source;
            if (file.empty()) {
                const auto size = static_cast<std::uint64_t>(m.size);
                sm.origin = "gen:" + std::to_string(size) + ":" + std::to_string(k + 1);
                sm.size = size;
            } else {
                sm.origin = "file:" + file;
            }
            sm.name = landing_name(dest_dir, file.empty() ? source + "-" + std::to_string(k + 1) + ".bin"
                                                          : fs::path(file).filename().string());
            sm.dests = names(m.dests);
            scope.messages.push_back(std::move(sm));
        }
        return scope;
    }
    const std::vector<std::string> files = push_files(order);
    if (files.empty()) throw InputError("the order pushes no files");
    const bool upload = order.contains("upload");
    ScopedMessage sm;
    sm.source = coordinator;
    sm.tree = push_is_bundle(order, files);
    sm.name = sm.tree ? landing_dir(dest_dir) : landing_name(dest_dir, fs::path(files[0]).filename().string());
    if (upload) {
        const UploadSpec u = upload_from_json(order.at("upload"));
        sm.size = u.size;
        sm.sha = u.sha;
    }
    const Destinations d = push_destinations(order, *net, net->id(coordinator), upload, [](const std::string&) {});
    sm.dests = names(d.ids);
    scope.messages.push_back(std::move(sm));
    return scope;
}

}  // namespace detail
}  // namespace hetcast
