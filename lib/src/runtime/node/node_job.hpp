#pragma once
// What a JobHandle shares with the Node thread that runs its job.
#include <condition_variable>
#include <exception>
#include <mutex>

#include "hetcast/runtime/node.hpp"

namespace hetcast {

struct JobHandle::State {
    mutable std::mutex mu;
    std::condition_variable cv;
    std::uint64_t id = 0;
    JobProgress progress;
    std::optional<JobReport> report;
    std::exception_ptr error;
    std::string cancel_why;  ///< set by cancel(), also before the job has an id

    /// Held while cancel() calls cancel_fn, and while the job's end drops it: a cancel
    /// never reaches a Peer whose job (or Node) is gone.
    std::mutex cancel_mu;
    std::function<bool(std::uint64_t, const std::string&)> cancel_fn;
    std::function<void(const JobProgress&)> on_progress;
    std::function<void(const JobReport&)> on_done;

    [[nodiscard]] bool ended() const { return report.has_value() || error != nullptr; }
    /// JobSpec::started and JobSpec::progress.
    void started(std::uint64_t job);
    void moved_on(const JobProgress& p);
    /// The job's end: exactly one of a report or an error.
    void end(std::optional<JobReport> report, std::exception_ptr error);
};

}  // namespace hetcast
