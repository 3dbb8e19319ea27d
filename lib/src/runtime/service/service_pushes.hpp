#pragma once
// Pushes this daemon coordinates: planning one from its request, running it with its
// progress streamed to the caller (and, through the PushLog, to callers re-attached with
// `hetcast wait`). Methods in service_push.cpp; what needs none of its state in
// service_push_input.cpp (the request's input) and service_push_plan.cpp.
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

    /// Members left out of a push: each one's name and why it does not answer.
    using Down = std::vector<std::pair<std::string, std::string>>;
    /// The wanted destinations that answer, and those that do not.
    struct Answering {
        std::vector<NodeId> dests;
        Down down;
    };

    Answering answering(const Network& net, const std::vector<NodeId>& wanted);
    /// Whether members answer: per name, empty or why not.
    std::vector<std::string> ask(const std::vector<std::string>& names);
    nlohmann::json nobody_answers(const nlohmann::json& req, const std::vector<std::string>& files, const Down& down,
                                  bool everyone, const std::string& algo, const std::string& who);
    std::vector<std::string> unmapped_members(const Network& net) const;
    JobSpec plan(const Network& net, NodeId root, const std::vector<NodeId>& dests, double size, ExecModel model,
                 const std::string& algo, std::uint64_t piece, std::uint64_t bwlimit);
    /// `label` names what moves in the progress frames (a file; a bundle: the file in flight).
    JobReport run_job(JobSpec spec, const Peer::Responder& respond, const std::string& label, bool members);
    nlohmann::json push_pattern(const nlohmann::json& req, const Network& net, const Peer::Responder& respond,
                                const std::string& who);

    ServiceCore& core_;
    PushLog& log_;
    std::atomic<std::size_t> running{0};
};

}  // namespace hetcast::detail
