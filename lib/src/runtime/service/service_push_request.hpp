#pragma once
// What a push request asks for, read the same way by the coordinator that plans it and by
// every participant that checks a plan against the operator's order (order_scope).
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/runtime/nodeset.hpp"
#include "hetcast/runtime/order_scope.hpp"

namespace hetcast::detail {
using json = nlohmann::json;

/// Where a pushed file lands under every destination's root. A path leaving the root is
/// refused here, before any participant is sent a plan or creates a file.
std::string landing_name(const std::string& dest_dir, const std::string& file_name);

/// Where a push's bundle lands: the landing directory `dest` ("." the root itself).
std::string landing_dir(const std::string& dest_dir);

/// Whether a push of `files` is one bundle: several files, -r, or an upload with a manifest.
bool push_is_bundle(const json& req, const std::vector<std::string>& files);

std::vector<std::string> push_files(const json& req);

/// The members a push sends to. "to" is a node set (hetcast/runtime/nodeset.hpp: `ws[01-40]`,
/// `@subnet:2`, `@*`, ...) or, from older callers, a list of names; none or an empty list
/// means every other member (`--all`). "exclude", a node set, leaves members out of either.
/// The pushing member holds the files: a node set that names it leaves it out (a list
/// that names it is refused when planning, as before).
struct Destinations {
    std::vector<NodeId> ids;
    bool everyone = false;  // --all: unreachable members are also listed as skipped
    bool self = false;      // an upload: the pushing member named too (it lands a copy)
};

/// `upload`: the files come from the operator, so the pushing member may be a destination.
Destinations push_destinations(const json& req, const Network& net, NodeId root, bool upload, const GroupWarning& warn);

/// What a push order lets a job do, read on this member's map `net` as the push would read
/// it: what every job plan this member takes must stay inside (PeerConfig::order_scope).
/// Throws InputError without a map.
OrderScope order_scope(const json& order, const std::optional<Network>& net);

}  // namespace hetcast::detail
