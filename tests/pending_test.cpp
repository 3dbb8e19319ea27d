// Answers awaited from other members (lib/src/runtime/wire/pending.hpp, internal): each
// number is new, an answer reaches only the future of its number, once, and a forgotten
// or cleared wait takes no answer.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <map>
#include <random>
#include <set>
#include <string>

#include "../lib/src/runtime/wire/pending.hpp"

using hetcast::detail::Pending;

TEST_CASE("pending answers: random opens, answers and forgets agree with a plain map") {
    for (unsigned seed = 1; seed <= 30; ++seed) {
        std::mt19937 rng(seed);
        Pending<int> p;
        std::map<std::uint32_t, std::future<int>> open;
        std::set<std::uint32_t> seen;
        for (int step = 0; step < 300; ++step) {
            const auto any_seq = [&] {  // one that waits, or one that never did, or a gone one
                if (!open.empty() && rng() % 4 != 0) {
                    auto it = open.begin();
                    std::advance(it, static_cast<long>(rng() % open.size()));
                    return it->first;
                }
                return static_cast<std::uint32_t>(rng() % 400);
            };
            switch (rng() % 4) {
                case 0:
                case 1: {
                    auto [seq, f] = p.open();
                    CHECK(seen.insert(seq).second);  // never handed out before
                    open.emplace(seq, std::move(f));
                    break;
                }
                case 2: {
                    const std::uint32_t seq = any_seq();
                    const int value = static_cast<int>(rng() % 1000);
                    const bool waited = open.count(seq) > 0;
                    CHECK(p.answer(seq, value) == waited);
                    if (waited) {
                        auto& f = open.at(seq);
                        REQUIRE(f.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
                        CHECK(f.get() == value);
                        open.erase(seq);
                    }
                    CHECK_FALSE(p.answer(seq, value));  // answered once
                    break;
                }
                default: {
                    const std::uint32_t seq = any_seq();
                    p.forget(seq);
                    if (auto it = open.find(seq); it != open.end()) {
                        CHECK_THROWS_AS(it->second.get(), std::future_error);  // broken promise
                        open.erase(it);
                    }
                    CHECK_FALSE(p.answer(seq, 1));
                    break;
                }
            }
            // Answered futures are taken out of `open`: the rest still wait.
            for (auto& [seq, f] : open) REQUIRE(f.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
            REQUIRE(p.size() == open.size());
            REQUIRE(p.empty() == open.empty());
        }
        p.clear();
        for (auto& [seq, f] : open) CHECK_THROWS_AS(f.get(), std::future_error);
        CHECK(p.empty());
    }
}
