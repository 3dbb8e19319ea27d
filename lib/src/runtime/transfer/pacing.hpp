#pragma once
// A push's --bwlimit, enforced where its bytes leave a member: every send of one job from
// this member draws on one token bucket, so the member's sends of that job together keep
// to the rate (rsync's --bwlimit, but per member and job rather than per stream).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "hetcast/net/transport.hpp"

namespace hetcast::detail {

/// Calls functions at given times, from a thread of its own (one for all buckets).
class Alarm {
public:
    using Clock = std::chrono::steady_clock;
    Alarm();
    ~Alarm();
    Alarm(const Alarm&) = delete;
    Alarm& operator=(const Alarm&) = delete;
    void at(Clock::time_point when, std::function<void()> fn);

private:
    struct Entry {
        Clock::time_point when;
        std::uint64_t seq;
        std::function<void()> fn;
        bool operator>(const Entry& o) const { return when != o.when ? when > o.when : seq > o.seq; }
    };
    void run();
    std::mutex mu_;
    std::condition_variable cv_;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue_;
    std::uint64_t seq_ = 0;
    bool stop_ = false;
    std::thread thread_;
};

/// `rate` bytes per second, drawn in any amounts: a draw may overdraw, and the bucket is
/// then empty until the debt is paid back at `rate`. It holds at most `burst` bytes.
class TokenBucket {
public:
    using Clock = std::chrono::steady_clock;
    TokenBucket(double rate, double burst, std::shared_ptr<Alarm> alarm);
    /// Whether a draw may go now; when not, `wake` runs (once, on the alarm's thread)
    /// when it may.
    bool ready(const std::function<void()>& wake);
    void draw(std::size_t bytes);
    /// When the bucket is next out of debt (now, when it is not in debt).
    [[nodiscard]] Clock::time_point free_at();

private:
    void refill_locked(Clock::time_point now);
    const double rate_, burst_;
    const std::shared_ptr<Alarm> alarm_;
    std::mutex mu_;
    double tokens_;
    Clock::time_point last_;
};

/// `body` read no faster than `bucket` allows (shared by every reader of the job).
[[nodiscard]] std::shared_ptr<const net::MessageBody> paced(std::shared_ptr<const net::MessageBody> body,
                                                            std::shared_ptr<TokenBucket> bucket);

}  // namespace hetcast::detail
