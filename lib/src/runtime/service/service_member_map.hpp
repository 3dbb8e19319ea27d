#pragma once
// The map as the member list changes (MemberList, service_members.cpp): restricted to the
// members that stay, or extended by a joiner measured against the subnets or pinged by
// every member. Plain functions of the map, the peer and the request: no state of their own.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/runtime/cluster_probe.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/wire.hpp"

namespace hetcast::detail {

/// `old` restricted to (or extended to) `names`, in that order; `fill(i, j)` gives the
/// latency and bandwidth of a pair `old` does not have. Subnets are recomputed (ECO).
Network remap(const Network& old, const std::vector<std::string>& names, double tolerance,
              const std::function<std::pair<double, double>(std::size_t, std::size_t)>& fill,
              const std::vector<std::pair<Overhead, Overhead>>& new_overheads);

/// `old` restricted to the members of `ms` it has (a member left).
Network restricted(const Network& old, const std::vector<Member>& ms, double tolerance);

/// `joiner` (the last of `names`, the new member list) measured on a probed map `old`
/// against a representative of each subnet, not every member: the map keeps its subnets
/// and capacities. Nothing when `old` is no such map, or (said through `warn`) the
/// measuring failed.
std::optional<MeasuredJoin> subnet_join(const ProbeLink& link, const std::optional<Network>& old,
                                        const std::vector<std::string>& names, const std::string& joiner,
                                        const nlohmann::json& req, double tolerance,
                                        const std::function<void(const std::string&)>& warn);

/// The map with `joiner` when it is not measured against the subnets: every other member pings it (through `link`, as `req` asks), its
/// overheads come from its hello, and ECO 4.1 runs again. `self` names this member, the
/// map's one member when there is none yet (`old`).
Network pinged_join(const ProbeLink& link, Peer& peer, const std::optional<Network>& old,
                    const std::vector<std::string>& names, const std::string& joiner, const nlohmann::json& req,
                    const std::string& self, double tolerance);

}  // namespace hetcast::detail
