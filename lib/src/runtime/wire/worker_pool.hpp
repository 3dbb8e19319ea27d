#pragma once
// A bounded pool of worker threads for a peer's requests: at most `threads` run at once
// and at most `queue` wait; past that, submit() refuses and the caller answers "busy".
// Threads start as work comes and stay for the pool's life. Internal to lib/src/runtime.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hetcast::detail {

class WorkerPool {
public:
    WorkerPool(std::size_t threads, std::size_t queue) : max_threads_(threads), max_queue_(queue) {}
    ~WorkerPool() { stop(); }
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    /// Queues `work`; false when the pool is stopped, or every thread is busy and `queue`
    /// items already wait.
    bool submit(std::function<void()> work) {
        std::lock_guard lock(mu_);
        if (stopped_ || busy_ + queue_.size() >= max_threads_ + max_queue_) return false;
        queue_.push_back(std::move(work));
        if (busy_ + queue_.size() > threads_.size() && threads_.size() < max_threads_) {
            threads_.emplace_back([this] { run(); });
        } else {
            cv_.notify_one();
        }
        return true;
    }

    /// Drops what waits, lets what runs finish, joins every thread. Idempotent.
    void stop() {
        std::vector<std::thread> ts;
        {
            std::lock_guard lock(mu_);
            stopped_ = true;
            queue_.clear();
            ts.swap(threads_);
            cv_.notify_all();
        }
        for (auto& t : ts) t.join();
    }

    [[nodiscard]] std::size_t threads() const {
        std::lock_guard lock(mu_);
        return threads_.size();
    }

private:
    void run() {
        std::unique_lock lock(mu_);
        while (true) {
            cv_.wait(lock, [this] { return stopped_ || !queue_.empty(); });
            if (stopped_) return;
            auto work = std::move(queue_.front());
            queue_.pop_front();
            ++busy_;
            lock.unlock();
            try {
                work();
            } catch (...) {
                // The work answers its own errors; one that escapes must not end the process.
            }
            lock.lock();
            --busy_;
        }
    }

    const std::size_t max_threads_, max_queue_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> queue_;
    std::vector<std::thread> threads_;
    std::size_t busy_ = 0;  ///< threads running an item
    bool stopped_ = false;
};

}  // namespace hetcast::detail
