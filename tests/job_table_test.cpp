// The jobs a member takes part in and those it coordinates (lib/src/runtime/job/
// job_table.hpp, coord_table.hpp, internal): one job per id, a removed job only if it is
// still the one registered, no job after close; a cancel names tries by id or by push and
// holds for the push until forgotten.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "hetcast/error.hpp"
#include "../lib/src/runtime/job/coord_table.hpp"
#include "../lib/src/runtime/job/job_table.hpp"

using hetcast::Coord;
using hetcast::Job;
using hetcast::detail::CoordTable;
using hetcast::detail::JobTable;

namespace {

std::shared_ptr<Job> job_with(std::uint64_t id) {
    auto j = std::make_shared<Job>();
    j->plan.job = id;
    return j;
}

}  // namespace

TEST_CASE("job table: random adds, removes and ends agree with a plain map, and nothing is added after close") {
    for (unsigned seed = 1; seed <= 30; ++seed) {
        std::mt19937 rng(seed);
        JobTable t;
        std::map<std::uint64_t, std::shared_ptr<Job>> model;
        for (int step = 0; step < 200; ++step) {
            const std::uint64_t id = rng() % 8;
            switch (rng() % 5) {
                case 0:
                case 1: {
                    auto j = job_with(id);
                    if (model.count(id)) {
                        CHECK_THROWS_AS(t.add(j), hetcast::InputError);
                    } else {
                        t.add(j);
                        model[id] = j;
                    }
                    break;
                }
                case 2: {
                    // A job of the same id that is not the registered one removes nothing.
                    auto other = job_with(id);
                    CHECK_FALSE(t.remove(other));
                    if (auto it = model.find(id); it != model.end() && rng() % 2 == 0) {
                        const auto j = it->second;
                        CHECK(t.remove(j));
                        model.erase(it);
                        CHECK_FALSE(t.remove(j));  // a second reaper of the same job joins nothing
                    }
                    break;
                }
                case 3:
                    if (auto it = model.find(id); it != model.end()) it->second->finished = true;
                    break;
                default:
                    t.remove(id);
                    model.erase(id);
                    break;
            }
            for (std::uint64_t k = 0; k < 8; ++k) {
                const auto it = model.find(k);
                REQUIRE(t.find(k) == (it == model.end() ? nullptr : it->second));
            }
            std::size_t running = 0;
            for (const auto& [k, j] : model) running += j->finished ? 0 : 1;
            REQUIRE(t.running() == running);
            REQUIRE(t.all().size() == model.size());
        }
        const auto held = t.close();
        CHECK(held.size() == model.size());
        CHECK_THROWS_AS(t.add(job_with(100)), hetcast::Error);
        CHECK(t.find(100) == nullptr);
    }
}

TEST_CASE("coordinator table: a cancel reaches the tries of its push and holds for later tries until forgotten") {
    for (unsigned seed = 1; seed <= 30; ++seed) {
        std::mt19937 rng(seed);
        CoordTable t;
        std::map<std::uint64_t, std::shared_ptr<Coord>> model;  // by try id
        std::map<std::uint64_t, std::string> cancelled;          // by push
        std::uint64_t next = 1;
        for (int step = 0; step < 200; ++step) {
            switch (rng() % 5) {
                case 0:
                case 1: {
                    // A new try: of a new push, or a next try of a running or ended one.
                    auto k = std::make_shared<Coord>();
                    const std::uint64_t id = next++;
                    k->push = (rng() % 2 == 0 || id == 1) ? id : 1 + rng() % (id - 1);
                    const auto why = t.add(id, k);
                    const auto c = cancelled.find(k->push);
                    REQUIRE(why.has_value() == (c != cancelled.end()));
                    if (why) CHECK(*why == c->second);
                    model[id] = k;
                    break;
                }
                case 2: {
                    const std::uint64_t job = 1 + rng() % next;
                    const std::string why = "why " + std::to_string(step);
                    const auto got = t.cancel(job, why);
                    std::set<const Coord*> want;
                    for (const auto& [id, k] : model) {
                        if (id == job || k->push == job) want.insert(k.get());
                    }
                    std::set<const Coord*> have;
                    for (const auto& k : got) have.insert(k.get());
                    CHECK(have == want);
                    if (!want.empty()) cancelled[job] = why;  // a cancel of nothing running is no cancel
                    break;
                }
                case 3: {
                    const std::uint64_t id = 1 + rng() % next;
                    t.remove(id);
                    model.erase(id);
                    break;
                }
                default: {
                    const std::uint64_t push = 1 + rng() % next;
                    t.forget_cancel(push);
                    cancelled.erase(push);
                    break;
                }
            }
            for (std::uint64_t id = 1; id <= next; ++id) {
                const auto it = model.find(id);
                REQUIRE(t.find(id) == (it == model.end() ? nullptr : it->second));
                REQUIRE(t.cancelled(id) == (cancelled.count(id) > 0));
            }
            REQUIRE(t.all().size() == model.size());
        }
    }
}
