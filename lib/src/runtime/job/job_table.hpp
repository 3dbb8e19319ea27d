#pragma once
// The jobs this member takes part in, by id (a participant's side; the coordinator's own
// part of a job it runs is one of them). The peer's Participant holds one.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "job_state.hpp"

namespace hetcast::detail {

/// Thread safe; never takes a job's lock.
class JobTable {
public:
    [[nodiscard]] std::shared_ptr<Job> find(std::uint64_t id) const;
    /// Registers `job` under its plan's id. Throws InputError when that id is taken, Error
    /// once the table is closed (the peer stops).
    void add(const std::shared_ptr<Job>& job);
    /// Forgets `job` (not another job registered under its id since): whether it was here,
    /// so that of two threads reaping it only one joins its runner.
    bool remove(const std::shared_ptr<Job>& job);
    void remove(std::uint64_t id);
    /// Those whose task lists have not finished.
    [[nodiscard]] std::size_t running() const;
    [[nodiscard]] std::vector<std::shared_ptr<Job>> all() const;
    /// Takes no job from now on; returns those it holds, to be aborted.
    [[nodiscard]] std::vector<std::shared_ptr<Job>> close();

private:
    mutable std::mutex mu_;
    bool closed_ = false;
    std::map<std::uint64_t, std::shared_ptr<Job>> by_id_;
};

}  // namespace hetcast::detail
