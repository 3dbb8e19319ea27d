#include "lanes.hpp"

namespace hetcast::detail {

void LaneTable::note(const net::Connection* c, std::uint64_t job, bool in) {
    std::lock_guard lock(mu_);
    of_[c] = Lane{job, in};
}

std::optional<Lane> LaneTable::closed(const net::Connection* c) {
    std::lock_guard lock(mu_);
    const auto it = of_.find(c);
    if (it == of_.end()) return std::nullopt;
    const Lane lane = it->second;
    of_.erase(it);
    return lane;
}

bool LaneTable::carries(const net::Connection* c) const {
    std::lock_guard lock(mu_);
    return of_.count(c) > 0;
}

std::size_t LaneTable::size() const {
    std::lock_guard lock(mu_);
    return of_.size();
}

}  // namespace hetcast::detail
