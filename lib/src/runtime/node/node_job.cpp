#include "node_job.hpp"

namespace hetcast {

JobHandle::JobHandle(std::shared_ptr<State> state) : state_(std::move(state)) {}

std::uint64_t JobHandle::id() const {
    std::lock_guard lock(state_->mu);
    return state_->id;
}

JobProgress JobHandle::progress() const {
    std::lock_guard lock(state_->mu);
    return state_->progress;
}

bool JobHandle::done() const {
    std::lock_guard lock(state_->mu);
    return state_->ended();
}

bool JobHandle::cancel(const std::string& why) {
    std::lock_guard hold(state_->cancel_mu);  // the job cannot end and drop cancel_fn meanwhile
    std::uint64_t id = 0;
    {
        std::lock_guard lock(state_->mu);
        if (state_->ended()) return false;
        if (state_->cancel_why.empty()) state_->cancel_why = why;
        id = state_->id;
    }
    // Before it started, started() sees cancel_why and cancels it then.
    return id == 0 || (state_->cancel_fn && state_->cancel_fn(id, why));
}

JobReport JobHandle::wait() const {
    std::unique_lock lock(state_->mu);
    state_->cv.wait(lock, [&] { return state_->ended(); });
    if (state_->error) std::rethrow_exception(state_->error);
    return *state_->report;
}

std::optional<JobReport> JobHandle::wait_for(std::chrono::milliseconds timeout) const {
    std::unique_lock lock(state_->mu);
    if (!state_->cv.wait_for(lock, timeout, [&] { return state_->ended(); })) return std::nullopt;
    if (state_->error) std::rethrow_exception(state_->error);
    return *state_->report;
}

void JobHandle::State::started(std::uint64_t job) {
    std::string why;
    {
        std::lock_guard lock(mu);
        id = job;
        why = cancel_why;
    }
    if (!why.empty() && cancel_fn) (void)cancel_fn(job, why);
}

void JobHandle::State::moved_on(const JobProgress& p) {
    {
        std::lock_guard lock(mu);
        progress = p;
    }
    if (on_progress) on_progress(p);
}

void JobHandle::State::end(std::optional<JobReport> r, std::exception_ptr e) {
    {
        std::lock_guard hold(cancel_mu);
        cancel_fn = nullptr;
    }
    {
        std::lock_guard lock(mu);
        report = std::move(r);
        error = e;
    }
    cv.notify_all();
    if (report && on_done) on_done(*report);
}

}  // namespace hetcast
