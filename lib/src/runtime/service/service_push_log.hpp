#pragma once
// Pushes as others follow them: the callers re-attached to a running push (`hetcast wait`),
// its end (the audit line, the history entry, the answer to those callers) and the history
// of the pushes this daemon coordinated. Methods in service_jobs.cpp.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "service_core.hpp"

namespace hetcast::detail {

class PushLog {
public:
    /// The core outlives this (Service::Impl holds both).
    explicit PushLog(ServiceCore& core) : core_(core) {}

    /// Where finished pushes are kept; none until set.
    void set_history(std::unique_ptr<JobHistory> h) { history = std::move(h); }
    /// Job `job` started here: callers may re-attach to it from now on.
    void open(std::uint64_t job);
    /// The callers watching job `job` (re-attached), besides the one that pushed it.
    std::vector<Peer::Responder> watching(std::uint64_t job);
    /// Job `job` ended without a report: its watchers get `answer` and are forgotten.
    void end(std::uint64_t job, const nlohmann::json& answer);
    /// Ends a push that got a job id: its audit line, its history entry, the answer to the
    /// callers re-attached to it.
    void finish_push(const JobReport& r, const nlohmann::json& answer, const std::string& who, const std::string& what,
                     const std::string& started);
    /// {"job": ID}: the push's final answer once it ends (responded later when it runs),
    /// from the history when it ended. Unknown here: with "all", the member that knows it
    /// ({"ok": false, "coordinator": NAME}); "peek": whether it is known here, at once.
    void wait(const nlohmann::json& req, const Peer::Responder& respond, bool from_operator);
    /// The pushes this daemon coordinated (`everywhere`: every member's), oldest first, each
    /// naming its member; without their answers.
    nlohmann::json history_answer(bool everywhere);

private:
    ServiceCore& core_;
    std::unique_ptr<JobHistory> history;
    /// Callers re-attached to a push this daemon coordinates (`hetcast wait`), by job;
    /// each gets the push's progress and its final answer. Under watch_mu.
    std::mutex watch_mu;
    std::map<std::uint64_t, std::vector<Peer::Responder>> watchers;
};

}  // namespace hetcast::detail
