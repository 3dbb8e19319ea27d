// One subnet's uplink measured again on a mapped site (map/probe.hpp, probe_uplink(); `hetcast
// probe --refresh-uplink`): against the flow model of a true network the map is stale about.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "../lib/src/map/probe_model.hpp"
#include "hetcast/error.hpp"
#include "hetcast/map/probe.hpp"
#include "probe_truth.hpp"

using namespace hetcast;
using namespace hetcast::test;

namespace {

/// The true network's capacities as the probe's model of them.
probing::Model model_of(const Truth& t) {
    return {t.egress, t.ingress, t.sub, t.uplink};
}

}  // namespace

TEST_CASE("probe uplink: a stale uplink is read again, and never above what the link carries") {
    std::mt19937_64 rng(26);
    std::uniform_real_distribution<double> u(0, 1);
    int binding = 0, read_right = 0, finite = 0;
    for (int trial = 0; trial < 120; ++trial) {
        const std::size_t s = 2 + rng() % 3;
        std::vector<std::vector<std::pair<double, double>>> hosts(s);
        std::vector<double> uplink(s);
        for (std::size_t k = 0; k < s; ++k) {
            const double nic = (50 + 250 * u(rng)) * mbit;
            for (std::size_t c = 2 + rng() % 6; c > 0; --c) hosts[k].emplace_back(nic * (0.9 + 0.2 * u(rng)), nic * (0.9 + 0.2 * u(rng)));
            uplink[k] = (20 + 380 * u(rng)) * mbit;
        }
        const Truth t = make_truth(rng, hosts, uplink);
        const std::size_t k = rng() % s;
        Capacities stale = *t.net.capacities();
        stale.uplink[k] = u(rng) < 0.2 ? inf : uplink[k] * (0.3 + 2.7 * u(rng));
        Synthetic measure(t.net, static_cast<std::uint64_t>(trial));
        std::vector<FlowPair> flows;
        const UplinkResult r = probe_uplink(t.net.size(), k, *t.net.subnets(), stale, [&](const auto& f, double secs) {
            if (flows.empty()) flows = f;
            return measure(f, secs);
        });
        CAPTURE(trial);
        CAPTURE(k);
        CHECK(r.measurements <= 2);
        CHECK(r.flows <= 4 * std::max<std::size_t>(3, hosts[k].size()));
        if (std::isfinite(r.uplink)) {
            ++finite;
            CHECK(r.uplink <= uplink[k] * 1.08);
            CHECK(r.doubt.empty());
        } else {
            CHECK_FALSE(r.doubt.empty());
        }
        // Where the true uplink clearly holds the flows of one direction back (what they could
        // carry without it is a quarter more), the reading is that uplink's.
        probing::Model free = model_of(t);
        free.uplink[k] = inf;
        const probing::Model truth = model_of(t);
        for (int dir = 0; dir < 2; ++dir) {
            std::vector<FlowPair> way;
            for (const auto& f : flows) {
                if ((t.sub[f.first] == k) == (dir == 0)) way.push_back(f);
            }
            const auto could = free.rates(way), did = truth.rates(way);
            const double without = std::accumulate(could.begin(), could.end(), 0.0), with = std::accumulate(did.begin(), did.end(), 0.0);
            if (way.empty() || with * 1.25 >= without) continue;
            ++binding;
            CHECK_MESSAGE(std::abs(r.uplink / uplink[k] - 1) < 0.1, "read " << r.uplink / mbit << " of " << uplink[k] / mbit << " Mbit/s");
            read_right += std::abs(r.uplink / uplink[k] - 1) < 0.1 ? 1 : 0;
            break;
        }
    }
    MESSAGE(binding << " of 120 stale uplinks held their flows back, " << read_right << " read within 10%; " << finite
                    << " readings finite");
    CHECK(binding >= 40);
}

TEST_CASE("probe uplink: a fast subnet's uplink that slower ones hide is not read as theirs") {
    // Three subnets of four 100 Mbit/s hosts behind 40, 1000 and 1000 Mbit/s; the map says
    // 100, 1000, 1000. Subnet 1's flows out go to subnet 0 (behind 40) and to subnet 2.
    std::mt19937_64 rng(3);
    const auto four = std::vector<std::pair<double, double>>(4, {100 * mbit, 100 * mbit});
    const Truth t = make_truth(rng, {four, four, four}, {40 * mbit, 1000 * mbit, 1000 * mbit});
    Capacities stale = *t.net.capacities();
    stale.uplink[0] = 100 * mbit;
    Synthetic measure(t.net, 1);
    const MeasureFlows m = [&](const auto& f, double secs) { return measure(f, secs); };
    const UplinkResult slow = probe_uplink(12, 0, *t.net.subnets(), stale, m);
    CHECK(slow.uplink == doctest::Approx(40 * mbit).epsilon(0.1));
    stale.uplink[0] = 40 * mbit;
    const UplinkResult fast = probe_uplink(12, 1, *t.net.subnets(), stale, m);
    CHECK(std::isinf(fast.uplink));
    CHECK(fast.doubt.find("no test filled") != std::string::npos);
}

TEST_CASE("probe uplink: bad input") {
    std::mt19937_64 rng(1);
    const auto two = std::vector<std::pair<double, double>>(2, {100 * mbit, 100 * mbit});
    const Truth t = make_truth(rng, {two, two}, {40 * mbit, 40 * mbit});
    Synthetic measure(t.net, 1);
    const MeasureFlows m = [&](const auto& f, double secs) { return measure(f, secs); };
    const Capacities caps = *t.net.capacities();
    CHECK_THROWS_AS((void)probe_uplink(4, 2, *t.net.subnets(), caps, m), InputError);
    CHECK_THROWS_AS((void)probe_uplink(4, 0, {{0, 1, 2, 3}}, caps, m), InputError);
    CHECK_THROWS_AS((void)probe_uplink(5, 0, *t.net.subnets(), caps, m), InputError);
    CHECK_THROWS_AS((void)probe_uplink(4, 0, {{0, 1}, {2, 7}}, caps, m), InputError);
    CHECK_THROWS_AS((void)probe_uplink(4, 0, *t.net.subnets(), caps, MeasureFlows{}), InputError);
}
