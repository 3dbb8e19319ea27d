#pragma once
// Pushes this daemon coordinates: planning one from its request, running it with its
// progress streamed to the caller (and, through the PushLog, to callers re-attached with
// `hetcast wait`). Methods in service_push.cpp.
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstddef>
#include <string>

#include "service_core.hpp"
#include "service_push_log.hpp"

namespace hetcast::detail {

class Pushes {
public:
    /// The core and the log outlive this (Service::Impl holds them all).
    Pushes(ServiceCore& core, PushLog& log) : core_(core), log_(log) {}

    /// `who`: the operator whose identity asked (the audit line and history name it).
    nlohmann::json push(const nlohmann::json& req, const Peer::Responder& respond, const std::string& who);
    /// Pushes running now.
    [[nodiscard]] std::size_t jobs_running() const { return running.load(); }

private:
    /// Holds one of the max_jobs places while a push runs.
    struct Busy {
        explicit Busy(Pushes& p) : pushes(p) {
            if (pushes.running.fetch_add(1) >= pushes.core_.cfg.max_jobs) {
                --pushes.running;
                throw Error("busy: " + std::to_string(pushes.core_.cfg.max_jobs) + " jobs are running");
            }
        }
        ~Busy() { --pushes.running; }
        Busy(const Busy&) = delete;
        Busy& operator=(const Busy&) = delete;
        Pushes& pushes;
    };

    /// `label` names what moves in the progress frames (a file; a bundle: the file in flight).
    JobReport run_job(JobSpec spec, const Peer::Responder& respond, const std::string& label, bool members);
    nlohmann::json push_pattern(const nlohmann::json& req, const Network& net, const Peer::Responder& respond,
                                const std::string& who);

    ServiceCore& core_;
    PushLog& log_;
    std::atomic<std::size_t> running{0};
};

}  // namespace hetcast::detail
