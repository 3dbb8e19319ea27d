#include "request_limits.hpp"

namespace hetcast::detail {

std::shared_ptr<void> RequestLimits::take(const std::string& who, const net::Connection* conn, std::size_t limit) {
    {
        std::lock_guard lock(mu_);
        std::size_t& n = of_[who];
        if (limit > 0 && n >= limit) return nullptr;
        ++n;
        ++on_[conn];
    }
    return std::shared_ptr<void>(static_cast<void*>(this), [this, who, conn](void*) {
        std::lock_guard lock(mu_);
        if (auto it = of_.find(who); it != of_.end() && --it->second == 0) of_.erase(it);
        if (auto it = on_.find(conn); it != on_.end() && --it->second == 0) on_.erase(it);
    });
}

bool RequestLimits::serving(const net::Connection* conn) {
    std::lock_guard lock(mu_);
    return on_.count(conn) > 0;
}

std::size_t RequestLimits::running(const std::string& who) {
    std::lock_guard lock(mu_);
    const auto it = of_.find(who);
    return it == of_.end() ? 0 : it->second;
}

}  // namespace hetcast::detail
