// A push's --bwlimit: the network the planner sees (Network::with_rate_limit) and the token
// bucket every send of a job draws on (lib/src/runtime/transfer/pacing.hpp, internal).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>

#include "../lib/src/runtime/transfer/pacing.hpp"
#include "hetcast/error.hpp"
#include "hetcast/model/generators.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/push_plan.hpp"
#include "hetcast/sim/simulate.hpp"
#include "support.hpp"
#include "wait.hpp"

using namespace hetcast;
using Clock = std::chrono::steady_clock;

TEST_CASE("bwlimit: the limited network caps every pair and every sender, and keeps what was lower (random)") {
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<double> rate(1e6, 2e8);
    for (int round = 0; round < 100; ++round) {
        Network net = random_wu(2 + rng() % 10, rng());
        if (rng() % 2) test::add_random_capacities(rng, net, rate);
        const double limit = rate(rng);
        const Network lim = net.with_rate_limit(limit);
        REQUIRE(lim.size() == net.size());
        REQUIRE(lim.capacities());
        for (NodeId i = 0; i < net.size(); ++i) {
            CHECK(lim.capacities()->egress[i] == std::min(limit, net.capacities() ? net.capacities()->egress[i]
                                                                                    : std::numeric_limits<double>::infinity()));
            for (NodeId j = 0; j < net.size(); ++j) {
                if (i != j) CHECK(lim.bandwidth()[i][j] == std::min(limit, net.bandwidth()[i][j]));
            }
        }
        if (net.capacities()) {
            CHECK(lim.capacities()->ingress == net.capacities()->ingress);
            CHECK(lim.capacities()->uplink == net.capacities()->uplink);
        }
    }
    CHECK_THROWS_AS((void)test::costs(test::bhat_eq1()).with_rate_limit(1e6), InputError);
    CHECK_THROWS_AS((void)random_wu(3, 1).with_rate_limit(0), InputError);
    CHECK_THROWS_AS((void)random_wu(3, 1).with_rate_limit(std::nan("")), InputError);
}

TEST_CASE("bwlimit: no plan on a limited network predicts faster than the root can send at the limit (random)") {
    std::mt19937_64 rng(32);
    const std::vector<std::string> algos{"auto", "flat", "ecef", "pipeline", "lcf"};
    for (int round = 0; round < 60; ++round) {
        const Network net = random_wu(3 + rng() % 8, rng());
        const double limit = std::uniform_real_distribution<double>(1e6, 5e7)(rng);
        const Network lim = net.with_rate_limit(limit);
        const double size = std::uniform_real_distribution<double>(1e5, 5e8)(rng);
        const PlanRequest req = make_request(lim, 0, {}, size, ExecModel::nonblocking);
        const std::string algo = algos[rng() % algos.size()];
        CAPTURE(algo);
        const JobSpec spec = plan_push(lim, req, algo);
        const double floor = size / limit;
        CHECK(spec.lower_bound >= floor * (1 - 1e-9));
        CHECK(simulate(lim, spec.schedule, ExecModel::nonblocking).completion >= floor * (1 - 1e-9));
    }
}

TEST_CASE("bwlimit: a draw past the bucket holds the next one back for exactly the debt at the rate") {
    const auto alarm = std::make_shared<detail::Alarm>();
    std::mt19937_64 rng(33);
    for (int round = 0; round < 20; ++round) {
        const double rate = std::uniform_real_distribution<double>(1e6, 1e9)(rng);
        const double burst = std::uniform_real_distribution<double>(0, 1e6)(rng);
        detail::TokenBucket bucket(rate, burst, alarm);
        CHECK(bucket.ready([] {}));  // a full bucket
        const auto bytes = static_cast<std::size_t>(burst + rate * std::uniform_real_distribution<double>(5, 50)(rng));
        const auto before = Clock::now();
        bucket.draw(bytes);
        const auto after = Clock::now();
        const auto debt = std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>((static_cast<double>(bytes) - burst) / rate));
        const auto free = bucket.free_at();
        // The refill runs from the draw; however slow this machine, the debt is paid then.
        CHECK(free >= before + debt - std::chrono::microseconds(1));
        CHECK(free <= after + debt + std::chrono::microseconds(1));
        CHECK_FALSE(bucket.ready([] {}));
    }
}

TEST_CASE("bwlimit: a paced reader waits for the bucket, and is woken once it may go on") {
    const auto alarm = std::make_shared<detail::Alarm>();
    const double rate = 1e6;
    auto bucket = std::make_shared<detail::TokenBucket>(rate, 0, alarm);
    auto data = std::make_shared<const std::vector<std::byte>>(std::size_t{100000}, std::byte{7});
    const auto body = detail::paced(std::make_shared<BufferBody>(data), bucket);
    CHECK(body->size() == data->size());
    auto reader = body->open();
    std::vector<std::byte> out(30000);
    REQUIRE(reader->read(out) == out.size());  // drawn: 30 ms of debt at 1 MB/s
    std::atomic<int> woken{0};
    std::atomic<Clock::rep> woken_at{0};
    const auto free = bucket->free_at();
    REQUIRE_FALSE(reader->ready([&] {
        woken_at = Clock::now().time_since_epoch().count();
        ++woken;
    }));
    REQUIRE(test::wait_for([&] { return woken.load() == 1; }));
    CHECK(Clock::time_point(Clock::duration(woken_at.load())) >= free);
    CHECK(reader->ready([] {}));
    // A second reader of the same job shares the bucket: it is held back by the first's draw.
    auto other = body->open();
    REQUIRE(other->read(out) == out.size());
    CHECK_FALSE(reader->ready([] {}));
    CHECK_FALSE(other->ready([] {}));
}
