#pragma once
// Requests to members a few at a time (the prober's pings and hellos, storing a map).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace hetcast::detail {

/// Runs `task(i)` for every i below `count` on `width` threads, each taking the next i when
/// it is done with one. Once all have run, rethrows the first exception a task threw.
inline void at_once(std::size_t count, std::size_t width, const std::function<void(std::size_t)>& task) {
    std::atomic<std::size_t> next{0};
    std::vector<std::exception_ptr> failed(count);
    const auto work = [&] {
        for (std::size_t i; (i = next++) < count;) {
            try {
                task(i);
            } catch (...) {
                failed[i] = std::current_exception();
            }
        }
    };
    std::vector<std::thread> ts;
    for (std::size_t t = 0; t < std::min(width, count); ++t) ts.emplace_back(work);
    for (auto& t : ts) t.join();
    for (const auto& e : failed) {
        if (e) std::rethrow_exception(e);
    }
}

}  // namespace hetcast::detail
