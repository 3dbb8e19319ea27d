#include "coord_table.hpp"

namespace hetcast::detail {

std::optional<std::string> CoordTable::add(std::uint64_t id, const std::shared_ptr<Coord>& k) {
    std::lock_guard lock(mu_);
    by_id_[id] = k;
    if (auto c = cancelled_.find(k->push); c != cancelled_.end()) return c->second;
    return std::nullopt;
}

void CoordTable::remove(std::uint64_t id) {
    std::lock_guard lock(mu_);
    by_id_.erase(id);
}

std::shared_ptr<Coord> CoordTable::find(std::uint64_t id) const {
    std::lock_guard lock(mu_);
    const auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
}

std::vector<std::pair<std::uint64_t, std::shared_ptr<Coord>>> CoordTable::all() const {
    std::lock_guard lock(mu_);
    return {by_id_.begin(), by_id_.end()};
}

std::vector<std::shared_ptr<Coord>> CoordTable::cancel(std::uint64_t job, const std::string& why) {
    std::lock_guard lock(mu_);
    std::vector<std::shared_ptr<Coord>> out;
    for (const auto& [id, k] : by_id_) {
        if (id == job || k->push == job) out.push_back(k);
    }
    if (!out.empty()) cancelled_[job] = why;
    return out;
}

bool CoordTable::cancelled(std::uint64_t push) const {
    std::lock_guard lock(mu_);
    return cancelled_.count(push) > 0;
}

void CoordTable::forget_cancel(std::uint64_t push) {
    std::lock_guard lock(mu_);
    cancelled_.erase(push);
}

}  // namespace hetcast::detail
