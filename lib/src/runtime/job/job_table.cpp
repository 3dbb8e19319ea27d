#include "job_table.hpp"

#include <algorithm>
#include <string>

#include "hetcast/error.hpp"

namespace hetcast::detail {

std::shared_ptr<Job> JobTable::find(std::uint64_t id) const {
    std::lock_guard lock(mu_);
    const auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
}

void JobTable::add(const std::shared_ptr<Job>& job) {
    std::lock_guard lock(mu_);
    if (closed_) throw Error("the peer is stopping");
    if (!by_id_.emplace(job->plan.job, job).second) throw InputError("job " + std::to_string(job->plan.job) + " exists");
}

bool JobTable::remove(const std::shared_ptr<Job>& job) {
    std::lock_guard lock(mu_);
    if (auto it = by_id_.find(job->plan.job); it != by_id_.end() && it->second == job) {
        by_id_.erase(it);
        return true;
    }
    return false;
}

void JobTable::remove(std::uint64_t id) {
    std::lock_guard lock(mu_);
    by_id_.erase(id);
}

std::size_t JobTable::running() const {
    std::lock_guard lock(mu_);
    return static_cast<std::size_t>(
        std::count_if(by_id_.begin(), by_id_.end(), [](const auto& kv) { return !kv.second->finished; }));
}

std::vector<std::shared_ptr<Job>> JobTable::all() const {
    std::lock_guard lock(mu_);
    std::vector<std::shared_ptr<Job>> out;
    for (const auto& [id, j] : by_id_) out.push_back(j);
    return out;
}

std::vector<std::shared_ptr<Job>> JobTable::close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    std::vector<std::shared_ptr<Job>> out;
    for (const auto& [id, j] : by_id_) out.push_back(j);
    return out;
}

}  // namespace hetcast::detail
