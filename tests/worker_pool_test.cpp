// The bounded pool a peer runs its requests on (lib/src/runtime/wire/worker_pool.hpp, internal).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>

#include "../lib/src/runtime/wire/worker_pool.hpp"
#include "wait.hpp"

using hetcast::detail::WorkerPool;

TEST_CASE("worker pool: never more threads than its bound, never more waiting than its queue (random sizes)") {
    std::mt19937 rng(16);
    for (int round = 0; round < 20; ++round) {
        const std::size_t threads = 1 + rng() % 4, queue = rng() % 6;
        WorkerPool pool(threads, queue);
        std::mutex mu;
        std::condition_variable cv;
        bool release = false;
        std::atomic<int> running{0}, most{0}, done{0};
        const auto work = [&] {
            const int now = ++running;
            for (int m = most; now > m && !most.compare_exchange_weak(m, now);) {
            }
            std::unique_lock lock(mu);
            cv.wait(lock, [&] { return release; });
            --running;
            ++done;
        };
        std::size_t accepted = 0;
        const std::size_t offered = threads + queue + 1 + rng() % 5;
        for (std::size_t i = 0; i < offered; ++i) {
            accepted += pool.submit(work);
            // Let a started thread take its item before the next one comes.
            REQUIRE(hetcast::test::wait_for([&] { return running >= static_cast<int>(std::min(accepted, threads)); }));
        }
        CHECK(accepted == threads + queue);
        CHECK(pool.threads() <= threads);
        {
            std::lock_guard lock(mu);
            release = true;
        }
        cv.notify_all();
        REQUIRE(hetcast::test::wait_for([&] { return done == static_cast<int>(accepted); }));
        CHECK(most <= static_cast<int>(threads));
        // Room again once the work is done.
        CHECK(pool.submit([] {}));
        pool.stop();
        CHECK_FALSE(pool.submit([] {}));
    }
}
