#include "directory.hpp"

#include <algorithm>
#include <utility>

namespace hetcast::detail {

std::vector<net::ConnectionPtr> MemberDirectory::set(std::vector<Member> members) {
    std::lock_guard lock(mu_);
    std::map<std::string, Member> next;
    for (auto& m : members) next[m.name] = std::move(m);
    // A member that moved (or left) must not be reached over its old connection.
    std::vector<net::ConnectionPtr> stale;
    for (auto it = kept_.begin(); it != kept_.end();) {
        const auto was = members_.find(it->first);
        const auto now = next.find(it->first);
        const bool moved = now == next.end() || (was != members_.end() && (was->second.host != now->second.host ||
                                                                           was->second.port != now->second.port));
        if (moved) {
            stale.push_back(it->second);
            it = kept_.erase(it);
        } else {
            ++it;
        }
    }
    members_ = std::move(next);
    return stale;
}

std::vector<Member> MemberDirectory::list() const {
    std::lock_guard lock(mu_);
    std::vector<Member> out;
    for (const auto& [n, m] : members_) out.push_back(m);
    return out;
}

std::optional<Member> MemberDirectory::find(const std::string& name) const {
    std::lock_guard lock(mu_);
    const auto it = members_.find(name);
    if (it == members_.end()) return std::nullopt;
    return it->second;
}

bool MemberDirectory::knows(const std::string& name) const {
    std::lock_guard lock(mu_);
    return members_.count(name) > 0;
}

bool MemberDirectory::knows_other_than(const std::string& self) const {
    std::lock_guard lock(mu_);
    return std::any_of(members_.begin(), members_.end(), [&](const auto& m) { return m.first != self; });
}

net::ConnectionPtr MemberDirectory::connection(const std::string& name) const {
    std::lock_guard lock(mu_);
    const auto it = kept_.find(name);
    return it == kept_.end() ? nullptr : it->second;
}

void MemberDirectory::keep(const std::string& name, net::ConnectionPtr c) {
    std::lock_guard lock(mu_);
    kept_[name] = std::move(c);
}

void MemberDirectory::closed(const std::string& name, const net::ConnectionPtr& c) {
    std::lock_guard lock(mu_);
    if (auto it = kept_.find(name); it != kept_.end() && it->second == c) kept_.erase(it);
}

std::shared_ptr<std::mutex> MemberDirectory::dial_lock(const std::string& name) {
    std::lock_guard lock(mu_);
    auto& slot = dialling_[name];
    if (!slot) slot = std::make_shared<std::mutex>();
    return slot;
}

}  // namespace hetcast::detail
