#pragma once
// Answers awaited from other members: each call (a request frame) or ping gets a sequence
// number that its response or pong carries back. The peer's Calls holds one table for calls
// and one for pings.
#include <cstddef>
#include <cstdint>
#include <future>
#include <map>
#include <mutex>
#include <utility>

namespace hetcast::detail {

/// Thread safe. An answer whose number is not waited for (late, forgotten, never asked)
/// is dropped.
template <class Answer>
class Pending {
public:
    /// A new number and the future its answer fills.
    [[nodiscard]] std::pair<std::uint32_t, std::future<Answer>> open() {
        std::lock_guard lock(mu_);
        const std::uint32_t seq = ++seq_;
        return {seq, waiting_[seq].get_future()};
    }
    /// Fills what waits for `seq`; false when nothing does.
    bool answer(std::uint32_t seq, Answer a) {
        std::lock_guard lock(mu_);
        const auto it = waiting_.find(seq);
        if (it == waiting_.end()) return false;
        it->second.set_value(std::move(a));
        waiting_.erase(it);
        return true;
    }
    /// Stops waiting for `seq` (its caller gave up).
    void forget(std::uint32_t seq) {
        std::lock_guard lock(mu_);
        waiting_.erase(seq);
    }
    /// Drops every wait: their futures throw std::future_error (broken promise).
    void clear() {
        std::lock_guard lock(mu_);
        waiting_.clear();
    }
    [[nodiscard]] bool empty() const {
        std::lock_guard lock(mu_);
        return waiting_.empty();
    }
    [[nodiscard]] std::size_t size() const {
        std::lock_guard lock(mu_);
        return waiting_.size();
    }

private:
    mutable std::mutex mu_;
    std::uint32_t seq_ = 0;
    std::map<std::uint32_t, std::promise<Answer>> waiting_;
};

}  // namespace hetcast::detail
