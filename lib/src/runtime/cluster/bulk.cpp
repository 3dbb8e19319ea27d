#include "bulk.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include "hetcast/error.hpp"
#include "hetcast/net/frame.hpp"

namespace hetcast::detail {

bool GoodputWindow::arrive(double now, std::size_t bytes, bool end, std::optional<std::uint64_t> kernel) {
    if (!started_ && !kernel_base_ && kernel) kernel_base_ = *kernel - std::min<std::uint64_t>(*kernel, bytes);
    if (end || (started_ && now - start_ > seconds_)) return true;
    bytes_ += bytes;
    if (!kernel_base_) return count(now, bytes_);
    // A count the kernel did not give cannot be placed among those it gave.
    if (!kernel || *kernel < *kernel_base_) return false;
    return count(now, *kernel - *kernel_base_);
}

bool GoodputWindow::sample(double now, std::uint64_t kernel) {
    if (!kernel_base_ || kernel < *kernel_base_) return false;
    return count(now, kernel - *kernel_base_);
}

bool GoodputWindow::count(double now, std::uint64_t n) {
    if (!started_) {
        if (n == 0) return false;
        started_ = true;
        start_ = now;
    } else if (now - start_ > seconds_) {
        return true;
    }
    // Frames and samples interleave: a frame's count may be older than the latest sample.
    if (now < last_ || n < counted_) return false;
    counted_ = n;
    last_ = now;
    if (arrivals_.empty() || now - arrivals_.back().first >= 1e-3) {
        arrivals_.emplace_back(now, n);
    } else {
        arrivals_.back() = {now, n};
    }
    if (now - start_ <= warmup_ || !from_) {
        from_ = std::pair{now, n};
    } else {
        to_ = std::pair{now, n};
    }
    return false;
}

Goodput GoodputWindow::result() {
    // The window's edges when data arrived inside it; else everything since the start.
    Goodput g;
    g.bytes = std::max(bytes_, counted_);
    if (from_ && to_ && to_->first > from_->first) {
        g.seconds = to_->first - from_->first;
        g.rate = static_cast<double>(to_->second - from_->second) / g.seconds;
    } else if (counted_ > 0 && last_ > start_) {
        g.seconds = last_ - start_;
        g.rate = static_cast<double>(counted_) / g.seconds;
    }
    g.arrivals = std::move(arrivals_);
    return g;
}

BulkTransfers::~BulkTransfers() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    changed_.notify_all();
    if (watcher_.joinable()) watcher_.join();
}

void BulkTransfers::finish(In& b) {
    Goodput g = b.window->result();
    b.done = true;
    b.connection.reset();
    if (g.rate > 0) {
        b.result->set_value(std::move(g));
    } else {
        b.result->set_exception(std::make_exception_ptr(Error("'" + b.peer + "' sent too little to measure")));
    }
}

void BulkTransfers::watch() {
    // Often enough that a window ends within a few milliseconds of its time.
    constexpr auto sample_every = std::chrono::milliseconds(5);
    std::unique_lock lock(mu_);
    while (!stopping_) {
        auto next = Clock::time_point::max();
        const auto now = Clock::now();
        const double now_s = std::chrono::duration<double>(now.time_since_epoch()).count();
        for (auto& [c, b] : in_) {
            if (!b.window || b.done) continue;
            if (const auto kernel = b.connection ? b.connection->kernel_received() : std::nullopt) {
                if (b.window->sample(now_s, *kernel)) {
                    finish(b);
                    continue;
                }
                next = std::min(next, now + sample_every);
            }
            if (b.deadline <= now) {
                // The measurement's waiter closes the connection once it has the result.
                finish(b);
            } else {
                next = std::min(next, b.deadline);
            }
        }
        if (next == Clock::time_point::max()) {
            changed_.wait(lock);
        } else {
            changed_.wait_until(lock, next);
        }
    }
}

std::uint64_t BulkTransfers::dialled(const net::ConnectionPtr& c, double now) {
    std::lock_guard lock(mu_);
    in_[c.get()] = In{};
    ready_[++seq_] = {c, now};
    return seq_;
}

void BulkTransfers::close_stale(double now, double stale) {
    std::lock_guard lock(mu_);
    for (auto it = ready_.begin(); it != ready_.end();) {
        if (now - it->second.second > stale) {
            it->second.first->close();
            it = ready_.erase(it);
        } else {
            ++it;
        }
    }
}

std::future<Goodput> BulkTransfers::measure(std::uint64_t id, double seconds, double warmup, net::ConnectionPtr& c) {
    std::lock_guard lock(mu_);
    const auto it = ready_.find(id);
    if (it == ready_.end()) throw Error("no bulk connection " + std::to_string(id) + " is ready");
    c = it->second.first;
    ready_.erase(it);
    const auto b = in_.find(c.get());
    if (b == in_.end()) throw Error("the bulk connection to '" + c->peer() + "' closed while it waited");
    b->second.connection = c;
    b->second.window.emplace(seconds, warmup, c->kernel_received());
    b->second.peer = c->peer();
    b->second.deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds + late_for(seconds)));
    if (!watcher_.joinable()) watcher_ = std::thread([this] { watch(); });
    changed_.notify_all();
    return b->second.result->get_future();
}

void BulkTransfers::on_data(const net::ConnectionPtr& c, std::uint16_t flags, std::size_t bytes, double now,
                            std::optional<std::uint64_t> kernel) {
    std::lock_guard lock(mu_);
    const auto it = in_.find(c.get());
    if (it == in_.end()) throw InputError("bulk data that nobody asked for");
    In& b = it->second;
    if (b.done) return;  // what was in flight when the window closed
    if (!b.window) throw InputError("bulk data before it was asked for");
    if (!b.window->arrive(now, bytes, flags == net::bulk_end, kernel)) return;
    finish(b);
    // Closing with data still coming resets the connection: the sender's kernel drops what
    // its socket holds instead of sending it, for seconds on a slow link, into the next
    // measurement.
    c->close();
}

void BulkTransfers::sending(const net::Connection* c) {
    std::lock_guard lock(mu_);
    out_.insert(c);
}

bool BulkTransfers::still_sending(const net::Connection* c) {
    std::lock_guard lock(mu_);
    return out_.count(c) > 0;
}

bool BulkTransfers::forget(const net::Connection* c) {
    std::lock_guard lock(mu_);
    if (const auto it = in_.find(c); it != in_.end()) {
        if (!it->second.done) {
            it->second.result->set_exception(
                std::make_exception_ptr(Error("the connection closed before the bulk transfer's window was over")));
        }
        in_.erase(it);
        return true;
    }
    return out_.erase(c) > 0;
}

bool BulkTransfers::busy_or_locked(const net::Connection* c) {
    std::unique_lock lock(mu_, std::try_to_lock);
    return !lock || in_.count(c) || out_.count(c);
}

}  // namespace hetcast::detail
