#pragma once
// Pushes this daemon coordinates: planning one from its request, running it with its
// progress streamed to the caller (and to callers re-attached with `hetcast wait`), its
// end in the history. Methods in service_push.cpp (running) and service_jobs.cpp (after
// the fact: wait, history).
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "service_core.hpp"

namespace hetcast::detail {

class Pushes {
public:
    /// The core outlives this (Service::Impl holds both).
    explicit Pushes(ServiceCore& core) : core_(core) {}

    /// Where finished pushes are kept; none until set.
    void set_history(std::unique_ptr<JobHistory> h) { history = std::move(h); }
    /// `who`: the operator whose identity asked (the audit line and history name it).
    nlohmann::json push(const nlohmann::json& req, const Peer::Responder& respond, const std::string& who);
    /// {"job": ID}: the push's final answer once it ends (responded later when it runs),
    /// from the history when it ended. Unknown here: with "all", the member that knows it
    /// ({"ok": false, "coordinator": NAME}); "peek": whether it is known here, at once.
    void wait(const nlohmann::json& req, const Peer::Responder& respond, bool from_operator);
    /// The pushes this daemon coordinated (`everywhere`: every member's), oldest first, each
    /// naming its member; without their answers.
    nlohmann::json history_answer(bool everywhere);
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
    /// The callers watching job `job` (re-attached), besides the one that pushed it.
    std::vector<Peer::Responder> watching(std::uint64_t job);
    nlohmann::json push_pattern(const nlohmann::json& req, const Network& net, const Peer::Responder& respond,
                                const std::string& who);
    /// Ends a push that got a job id: its audit line, its history entry, the answer to the
    /// callers re-attached to it.
    void finish_push(const JobReport& r, const nlohmann::json& answer, const std::string& who, const std::string& what,
                     const std::string& started);

    ServiceCore& core_;
    std::atomic<std::size_t> running{0};
    std::unique_ptr<JobHistory> history;
    /// Callers re-attached to a push this daemon coordinates (`hetcast wait`), by job;
    /// each gets the push's progress and its final answer. Under watch_mu.
    std::mutex watch_mu;
    std::map<std::uint64_t, std::vector<Peer::Responder>> watchers;
};

}  // namespace hetcast::detail
