#pragma once
// What a participant hands to the application: buffers delivered (to the callback, or
// queued for Peer::receive) and files landed (to the callback).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

#include "hetcast/runtime/peer_types.hpp"

namespace hetcast::detail {

/// Thread safe.
class Inbox {
public:
    void on_delivery(std::function<void(Delivery)> cb) {
        std::lock_guard lock(mu_);
        delivery_cb_ = std::move(cb);
    }
    void on_landed(std::function<void(Landed)> cb) {
        std::lock_guard lock(mu_);
        landed_cb_ = std::move(cb);
    }
    /// To the callback (outside the lock), or queued when there is none.
    void deliver(Delivery d) {
        std::function<void(Delivery)> cb;
        {
            std::lock_guard lock(mu_);
            cb = delivery_cb_;
            if (!cb) {
                queue_.push_back(std::move(d));
                cv_.notify_all();
                return;
            }
        }
        cb(std::move(d));
    }
    void landed(Landed l) {
        std::function<void(Landed)> cb;
        {
            std::lock_guard lock(mu_);
            cb = landed_cb_;
        }
        if (cb) cb(std::move(l));
    }
    /// The next queued delivery; none after `timeout`, or once `stopping` (and woken).
    std::optional<Delivery> receive(std::chrono::milliseconds timeout, const std::atomic<bool>& stopping) {
        std::unique_lock lock(mu_);
        if (!cv_.wait_for(lock, timeout, [&] { return !queue_.empty() || stopping; })) return std::nullopt;
        if (queue_.empty()) return std::nullopt;
        Delivery d = std::move(queue_.front());
        queue_.pop_front();
        return d;
    }
    /// Wakes every receive() (the peer stops).
    void wake() {
        std::lock_guard lock(mu_);
        cv_.notify_all();
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Delivery> queue_;
    std::function<void(Delivery)> delivery_cb_;
    std::function<void(Landed)> landed_cb_;
};

}  // namespace hetcast::detail
