#include "pacing.hpp"

#include <algorithm>

namespace hetcast::detail {

Alarm::Alarm() : thread_([this] { run(); }) {}

Alarm::~Alarm() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void Alarm::at(Clock::time_point when, std::function<void()> fn) {
    {
        std::lock_guard lock(mu_);
        queue_.push(Entry{when, seq_++, std::move(fn)});
    }
    cv_.notify_all();
}

void Alarm::run() {
    std::unique_lock lock(mu_);
    while (!stop_) {
        if (queue_.empty()) {
            cv_.wait(lock);
            continue;
        }
        const auto when = queue_.top().when;
        if (Clock::now() < when) {
            cv_.wait_until(lock, when);
            continue;
        }
        auto fn = std::move(const_cast<Entry&>(queue_.top()).fn);
        queue_.pop();
        lock.unlock();
        fn();
        lock.lock();
    }
}

TokenBucket::TokenBucket(double rate, double burst, std::shared_ptr<Alarm> alarm)
    : rate_(rate), burst_(burst), alarm_(std::move(alarm)), tokens_(burst), last_(Clock::now()) {}

void TokenBucket::refill_locked(Clock::time_point now) {
    tokens_ = std::min(burst_, tokens_ + rate_ * std::chrono::duration<double>(now - last_).count());
    last_ = now;
}

TokenBucket::Clock::time_point TokenBucket::free_at() {
    std::lock_guard lock(mu_);
    const auto now = Clock::now();
    refill_locked(now);
    if (tokens_ >= 0) return now;
    return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(-tokens_ / rate_));
}

bool TokenBucket::ready(const std::function<void()>& wake) {
    const auto when = free_at();
    if (when <= Clock::now()) return true;
    alarm_->at(when, wake);
    return false;
}

void TokenBucket::draw(std::size_t bytes) {
    std::lock_guard lock(mu_);
    refill_locked(Clock::now());
    tokens_ -= static_cast<double>(bytes);
}

namespace {

class PacedReader final : public net::MessageBody::Reader {
public:
    PacedReader(std::unique_ptr<Reader> inner, std::shared_ptr<TokenBucket> bucket)
        : inner_(std::move(inner)), bucket_(std::move(bucket)) {}
    std::size_t read(std::span<std::byte> out) override {
        const std::size_t n = inner_->read(out);
        bucket_->draw(n);
        return n;
    }
    void skip(std::size_t n) override { inner_->skip(n); }
    bool ready(std::function<void()> wake) override {
        // Pacing waits only once the data itself is there, so a wake is never owed twice.
        if (!inner_->ready(wake)) return false;
        return bucket_->ready(wake);
    }

private:
    std::unique_ptr<Reader> inner_;
    std::shared_ptr<TokenBucket> bucket_;
};

class PacedBody final : public net::MessageBody {
public:
    PacedBody(std::shared_ptr<const MessageBody> body, std::shared_ptr<TokenBucket> bucket)
        : body_(std::move(body)), bucket_(std::move(bucket)) {}
    [[nodiscard]] std::uint64_t size() const override { return body_->size(); }
    [[nodiscard]] net::Digest sha256() const override { return body_->sha256(); }
    [[nodiscard]] std::unique_ptr<Reader> open() const override {
        return std::make_unique<PacedReader>(body_->open(), bucket_);
    }

private:
    std::shared_ptr<const MessageBody> body_;
    std::shared_ptr<TokenBucket> bucket_;
};

}  // namespace

std::shared_ptr<const net::MessageBody> paced(std::shared_ptr<const net::MessageBody> body,
                                              std::shared_ptr<TokenBucket> bucket) {
    return std::make_shared<PacedBody>(std::move(body), std::move(bucket));
}

}  // namespace hetcast::detail
