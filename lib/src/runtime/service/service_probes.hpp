#pragma once
// Measuring the cluster from this daemon (`hetcast probe`, `probe --refresh`) and storing
// the map on every member: the daemon's side of cluster_probe.hpp. Methods in service_probe.cpp.
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "service_core.hpp"

namespace hetcast::detail {

class Probes {
public:
    /// The core outlives this (Service::Impl holds both).
    explicit Probes(ServiceCore& core) : core_(core) {}

    /// The calls a measurement makes, through this daemon's peer.
    ProbeLink probe_link();
    nlohmann::json probe(const nlohmann::json& req, const Peer::Responder& respond);
    nlohmann::json probe_refresh(const nlohmann::json& req, const std::vector<std::string>& refresh,
                                 const std::vector<std::string>& uplinks);
    /// Stores the map here and on each of `members`; who could not store it.
    std::vector<std::string> store_map(const std::vector<Member>& members, const std::string& text,
                                       const nlohmann::json& req);
    /// Of `all`, the members that answer a hello (this one always), and the others with why.
    std::pair<std::vector<Member>, std::vector<std::pair<std::string, std::string>>> answering_members(
        const std::vector<Member>& all);

private:
    ServiceCore& core_;
};

}  // namespace hetcast::detail
