#include "parked.hpp"

#include <utility>

namespace hetcast::detail {

std::optional<Parked> ParkedStore::park(const std::string& path, Parked p) {
    std::lock_guard lock(mu_);
    std::optional<Parked> was;
    if (auto it = by_path_.find(path); it != by_path_.end()) {
        was = std::move(it->second);
        it->second = std::move(p);
    } else {
        by_path_.emplace(path, std::move(p));
    }
    return was;
}

std::optional<Parked> ParkedStore::take(const std::string& path) {
    std::lock_guard lock(mu_);
    const auto it = by_path_.find(path);
    if (it == by_path_.end()) return std::nullopt;
    Parked p = std::move(it->second);
    by_path_.erase(it);
    return p;
}

template <class Pred>
std::vector<Parked> ParkedStore::drop_if(Pred pred) {
    std::vector<Parked> out;
    std::lock_guard lock(mu_);
    for (auto it = by_path_.begin(); it != by_path_.end();) {
        if (pred(it->second)) {
            out.push_back(std::move(it->second));
            it = by_path_.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

std::vector<Parked> ParkedStore::expire(double now) {
    return drop_if([now](const Parked& p) { return now - p.at > keep_for; });
}

std::vector<Parked> ParkedStore::drop_job(std::uint64_t job, const std::string& coordinator) {
    return drop_if([&](const Parked& p) { return p.job == job && p.coordinator == coordinator; });
}

std::vector<Parked> ParkedStore::drop_job(std::uint64_t job) {
    return drop_if([job](const Parked& p) { return p.job == job; });
}

std::vector<Parked> ParkedStore::drop_control(const void* control) {
    return drop_if([control](const Parked& p) { return p.control == control; });
}

std::vector<Parked> ParkedStore::clear() {
    return drop_if([](const Parked&) { return true; });
}

std::size_t ParkedStore::size() const {
    std::lock_guard lock(mu_);
    return by_path_.size();
}

}  // namespace hetcast::detail
