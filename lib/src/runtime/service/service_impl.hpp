#pragma once
// Service's insides: the assembly of the daemon's parts, each a class with its state behind
// it (service_core.hpp: what they all share; service_probes.hpp, service_members.hpp,
// service_push_log.hpp, service_pushes.hpp, service_metrics.hpp). requests.cpp's table
// hands each request to one of them. Not installed: nothing outside
// lib/src/runtime/service includes it.
#include <nlohmann/json.hpp>

#include "service_core.hpp"
#include "service_members.hpp"
#include "service_metrics.hpp"
#include "service_probes.hpp"
#include "service_push_log.hpp"
#include "service_pushes.hpp"

namespace hetcast {

struct Service::Impl {
    /// Declared first: the parts below hold references to it.
    detail::ServiceCore core;
    detail::Probes probes{core};
    detail::MemberList member_list{core, probes};
    detail::PushLog push_log{core};
    detail::Pushes pushes{core, push_log};
    detail::Metrics metrics{core, pushes};

    // service.cpp: the short answers that ask the other members too
    /// The members (name, host, port) and, unless `hellos` is false, whether each answers.
    nlohmann::json status(bool hellos = true);
    /// The jobs this daemon takes part in; `everywhere`: every member's, each row naming it.
    nlohmann::json list_jobs(bool everywhere);
    /// {"job": ID, "all": bool}: cancels a job this daemon (or, with all, any member) coordinates.
    nlohmann::json cancel(const nlohmann::json& req, bool from_operator);
};

}  // namespace hetcast
