// The probe (map/probe.hpp) where TCP shares tail-drop FIFOs: flows through one full switch
// port or uplink split it unevenly and at random (probe_truth.hpp's Fifo), realistic (fair
// at the hosts' own NICs) and all-FIFO.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <string_view>

#include "hetcast/map/probe.hpp"
#include "probe_hidden_lans.hpp"
#include "probe_lans.hpp"
#include "probe_truth.hpp"

using namespace hetcast;
using namespace hetcast::test;

namespace {

/// The found subnets restricted to `hosts`.
std::set<std::set<NodeId>> among(const Subnets& subnets, const std::set<NodeId>& hosts) {
    std::set<std::set<NodeId>> out;
    for (const auto& g : subnets) {
        std::set<NodeId> v;
        for (NodeId h : g) {
            if (hosts.count(h)) v.insert(h);
        }
        if (!v.empty()) out.insert(v);
    }
    return out;
}

void random_lans(bool all_fifo, std::uint64_t first) {
    const int total = 40;
    int right = 0, multi = 0;
    std::size_t calls = 0;
    double seconds = 0, worst = 0;
    for (std::uint64_t seed = first; seed < first + total; ++seed) {
        std::mt19937_64 rng(seed);
        const Lan lan = random_lan(rng);
        const ProbeResult r = probe_fifo(lan.truth, seed, all_fifo);
        const bool same = visible(lan, r.subnets) == visible(lan, *lan.truth.net.subnets());
        CHECK_MESSAGE(same, "seed " << seed << " kinds " << lan.kinds << "\n" << describe(lan.truth, r));
        right += same ? 1 : 0;
        multi += lan.truth.uplink.size() > 1 ? 1 : 0;
        calls += r.measurements;
        seconds += r.measured_seconds;
        worst = std::max(worst, r.measured_seconds);
    }
    MESSAGE(std::string(all_fifo ? "all-FIFO: " : "realistic FIFO: ") << right << " of " << total << " LANs right (" << multi
                                                           << " with several subnets); " << calls << " measurements, "
                                                           << seconds << " s in all, the most " << worst << " s");
    CHECK(multi >= total / 2);
}

}  // namespace

TEST_CASE("probe on FIFO links: random LANs get their subnets right, fair host NICs") { random_lans(false, 0); }

TEST_CASE("probe on FIFO links: random LANs get their subnets right, all-FIFO") { random_lans(true, 100); }

TEST_CASE("probe on FIFO links: netlab's random --seed 13 (3 subnets, 45 and 50 Mbit/s uplinks, 170 Mbit/s NICs)") {
    const std::pair<double, double> nic{170 * mbit, 170 * mbit};
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
        std::mt19937_64 rng(seed);
        const Truth t = make_truth(rng,
                                   {{nic, {50 * mbit, 170 * mbit}, nic, nic, nic},
                                    {{35 * mbit, 35 * mbit}},
                                    {nic, {11 * mbit, 170 * mbit}, nic, nic, nic, nic}},
                                   {45 * mbit, 30 * mbit, 50 * mbit});
        // b1 alone behind 30 Mbit/s with a 35 Mbit/s NIC: no rate tells where it is.
        const std::set<NodeId> a{0, 1, 2, 3, 4}, c{6, 7, 8, 9, 10, 11};
        std::set<NodeId> both = a;
        both.insert(c.begin(), c.end());
        for (bool all : {false, true}) {
            const ProbeResult r = probe_fifo(t, seed, all);
            CHECK_MESSAGE((among(r.subnets, both) == std::set<std::set<NodeId>>{a, c}),
                          std::string(all ? "all-FIFO" : "realistic") << " seed " << seed << "\n" << describe(t, r));
        }
    }
}

TEST_CASE("probe on FIFO links: netlab's random --seed 20 (70 and 110 Mbit/s uplinks, a slow sender, a slow NIC)") {
    const std::pair<double, double> a{100 * mbit, 100 * mbit}, b{200 * mbit, 200 * mbit};
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
        std::mt19937_64 rng(seed);
        const Truth t = make_truth(rng, {{a, a, a, a, {13 * mbit, 100 * mbit}, a}, {b, {70 * mbit, 70 * mbit}, b, b}},
                                   {70 * mbit, 110 * mbit});
        for (bool all : {false, true}) {
            const ProbeResult r = probe_fifo(t, seed, all);
            CHECK_MESSAGE(as_sets(r.subnets) == as_sets(*t.net.subnets()),
                          std::string(all ? "all-FIFO" : "realistic") << " seed " << seed << "\n" << describe(t, r));
        }
    }
}

TEST_CASE("probe on FIFO links: a slow sender read slow while it sent gets its subnet's pairs at what the NICs allow") {
    // netlab's random --seed 20, all-FIFO: a5 (13 Mbit/s out, 100 in) sent in every round,
    // and what it received read 12-18 Mbit/s: its ACKs waited behind its own data in its
    // NIC's FIFO. The map kept those readings as the pairs' bandwidths, and pipeline fed a5
    // from a relay at half that relay's NIC (1.41x the bound). Here the model's receiving
    // while sending is that slow for a5 alone; its ingress, measured receiving only, is 100.
    const std::pair<double, double> a{100 * mbit, 100 * mbit}, b{200 * mbit, 200 * mbit};
    const NodeId a5 = 4;
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
        std::mt19937_64 rng(seed);
        const Truth t = make_truth(rng, {{a, a, a, a, {13 * mbit, 100 * mbit}, a}, {b, {70 * mbit, 70 * mbit}, b, b}},
                                   {70 * mbit, 110 * mbit});
        Fifo s(t.net, seed, true);
        std::uniform_real_distribution<double> held(1.0, 1.4);
        std::size_t slowed = 0;
        const auto measure = [&](const std::vector<FlowPair>& flows, double seconds) {
            auto r = s(flows, seconds);
            const bool sends = std::any_of(flows.begin(), flows.end(), [&](const FlowPair& f) { return f.first == a5; });
            for (std::size_t f = 0; f < flows.size(); ++f) {
                if (sends && flows[f].second == a5) {
                    r[f] = std::min(r[f], 13 * mbit * held(rng));
                    ++slowed;
                }
            }
            return r;
        };
        ProbeOptions o;
        o.names = t.net.names();
        o.fifo_nics = true;
        const ProbeResult r = probe_capacities(t.latency, measure, o);
        CHECK(slowed > 0);
        REQUIRE_MESSAGE(as_sets(r.subnets) == as_sets(*t.net.subnets()), "seed " << seed << "\n" << describe(t, r));
        CHECK(r.capacities.ingress[a5] >= 80 * mbit);
        for (NodeId i = 0; i < 6; ++i) {
            if (i == a5) continue;
            CHECK_MESSAGE(r.bandwidth[i][a5] >= 80 * mbit, "seed " << seed << ": " << t.net.name(i) << " -> a5 at "
                                                                   << r.bandwidth[i][a5] / mbit << " Mbit/s");
        }
        // Pairs that did not run into a5 while it sent keep their readings.
        for (NodeId i = 0; i < 6; ++i) {
            for (NodeId j = 0; j < 6; ++j) {
                if (i != j && j != a5) CHECK(r.bandwidth[i][j] == r.goodput[i][j]);
            }
        }
    }
}

TEST_CASE("probe on FIFO links: behind FIFO host NICs no host sends and receives at once in the tests between rate classes") {
    // Behind a FIFO a host's ACKs wait behind the data it sends, and the data it receives
    // delays the ACKs of what it sends: a class tested sending and receiving at once reads
    // held back without any uplink (netlab's random --seed 10, one switch: a7 and a8 carried
    // 62 of 95 Mbit/s out of a round that also sent to them).
    int hidden = 0, lans = 0;
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
        std::mt19937_64 rng(seed);
        const Truth t = hidden_uplink_lan(rng);
        Fifo s(t.net, seed, true);
        std::string phase;
        bool any = false;
        ProbeOptions o;
        o.names = t.net.names();
        o.fifo_nics = true;
        o.progress = [&phase](std::string_view p, std::size_t) { phase = p; };
        const auto measure = [&](const std::vector<FlowPair>& flows, double seconds) {
            if (phase == "hidden") {
                ++hidden;
                any = true;
                std::set<NodeId> senders, receivers;
                for (const auto& [i, j] : flows) {
                    senders.insert(i);
                    receivers.insert(j);
                }
                for (NodeId h : senders) CHECK_MESSAGE(!receivers.count(h), "seed " << seed << ": " << t.net.name(h) << " sends and receives");
                CHECK(senders.size() == flows.size());
            }
            return s(flows, seconds);
        };
        (void)probe_capacities(t.latency, measure, o);
        lans += any ? 1 : 0;
    }
    CHECK(lans >= 10);
    MESSAGE(hidden << " measurements between rate classes on " << lans << " of 40 LANs");
}
