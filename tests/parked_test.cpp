// Pieces kept for a next try (lib/src/runtime/transfer/parked.hpp, internal): one copy per
// path, taken once, dropped by age, by try, by coordinator or by control connection, and
// a dropped copy's temporary file goes with it.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <random>
#include <string>

#include "../lib/src/runtime/transfer/parked.hpp"
#include "temp_dir.hpp"

using hetcast::detail::Parked;
using hetcast::detail::ParkedStore;

namespace {

const char controls[3] = {};

struct Model {
    std::uint64_t job;
    std::string coordinator;
    const void* control;
    double at;
};

}  // namespace

TEST_CASE("parked store: random parks, takes and drops agree with a plain map") {
    for (unsigned seed = 1; seed <= 40; ++seed) {
        std::mt19937 rng(seed);
        ParkedStore store;
        std::map<std::string, Model> model;
        double now = 0;
        const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
        const auto check_dropped = [&](const std::vector<Parked>& got, auto pred) {
            std::size_t want = 0;
            for (auto it = model.begin(); it != model.end();) {
                if (pred(it->second)) {
                    ++want;
                    it = model.erase(it);
                } else {
                    ++it;
                }
            }
            for (const Parked& p : got) CHECK(pred(Model{p.job, p.coordinator, p.control, p.at}));
            CHECK(got.size() == want);
        };
        for (int step = 0; step < 200; ++step) {
            now += pick(20);
            const std::string path = "/d/f" + std::to_string(pick(6));
            const std::uint64_t job = static_cast<std::uint64_t>(pick(3));
            const std::string coordinator = "c" + std::to_string(pick(2));
            const void* control = &controls[pick(3)];
            switch (pick(6)) {
                case 0:
                case 1: {
                    Parked p;
                    p.job = job;
                    p.coordinator = coordinator;
                    p.control = control;
                    p.at = now;
                    p.verified = static_cast<std::uint64_t>(step);
                    const auto was = store.park(path, std::move(p));
                    CHECK(was.has_value() == (model.count(path) > 0));
                    model[path] = Model{job, coordinator, control, now};
                    break;
                }
                case 2: {
                    const auto got = store.take(path);
                    REQUIRE(got.has_value() == (model.count(path) > 0));
                    if (got) {
                        CHECK(got->job == model[path].job);
                        CHECK(got->at == model[path].at);
                    }
                    model.erase(path);
                    CHECK_FALSE(store.take(path).has_value());  // taken once
                    break;
                }
                case 3:
                    check_dropped(store.expire(now), [&](const Model& m) { return now - m.at > ParkedStore::keep_for; });
                    break;
                case 4:
                    if (pick(2) == 0) {
                        check_dropped(store.drop_job(job, coordinator),
                                      [&](const Model& m) { return m.job == job && m.coordinator == coordinator; });
                    } else {
                        check_dropped(store.drop_job(job), [&](const Model& m) { return m.job == job; });
                    }
                    break;
                default:
                    check_dropped(store.drop_control(control), [&](const Model& m) { return m.control == control; });
                    break;
            }
            REQUIRE(store.size() == model.size());
        }
        check_dropped(store.clear(), [](const Model&) { return true; });
        CHECK(store.size() == 0);
    }
}

TEST_CASE("parked store: what is dropped takes its temporary file along, what waits keeps it") {
    hetcast::test::TempDir dir;
    ParkedStore store;
    const auto park = [&](const std::string& name, double at) {
        Parked p;
        p.sink = std::make_unique<hetcast::FileSink>(dir.path / name, 10);
        const std::filesystem::path temp = p.sink->temp_path();
        p.at = at;
        (void)store.park((dir.path / name).string(), std::move(p));
        return temp;
    };
    const auto old_temp = park("old", 0);
    const auto new_temp = park("new", 50);
    REQUIRE(std::filesystem::exists(old_temp));
    REQUIRE(std::filesystem::exists(new_temp));
    (void)store.expire(ParkedStore::keep_for + 10);  // "old" is past keep_for, "new" is not
    CHECK_FALSE(std::filesystem::exists(old_temp));
    CHECK(std::filesystem::exists(new_temp));
    auto taken = store.take((dir.path / "new").string());
    REQUIRE(taken);
    CHECK(std::filesystem::exists(new_temp));  // the taker holds it now
    taken.reset();
    CHECK_FALSE(std::filesystem::exists(new_temp));
}
