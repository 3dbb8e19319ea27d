// The probe (map/probe.hpp) on random LANs, with slow senders, and with flows that starve or
// fail: the flow model's rates with noise stand in for the network (probe_truth.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>

#include "hetcast/error.hpp"
#include "hetcast/map/probe.hpp"
#include "probe_lans.hpp"
#include "probe_truth.hpp"

using namespace hetcast;
using namespace hetcast::test;

namespace {

/// The flow model as the measuring callback, but a flow in `starved` reads 0 (TCP on FIFO
/// links can leave one flow with nothing in its window) whenever it runs with at least
/// `crowd` flows, and a flow in `broken` never measures (NaN).
struct Starving {
    Synthetic model;
    std::set<FlowPair> starved, broken;
    std::size_t crowd = 2;
    std::size_t zeros = 0;

    std::vector<double> operator()(const std::vector<FlowPair>& flows, double seconds) {
        std::vector<double> r = model(flows, seconds);
        for (std::size_t f = 0; f < flows.size(); ++f) {
            if (broken.count(flows[f])) r[f] = std::nan("");
            if (flows.size() >= crowd && starved.count(flows[f])) {
                r[f] = 0;
                ++zeros;
            }
        }
        return r;
    }
};

/// The flow model, plus what a FIFO queue at a slow sender's NIC does: while the host sends,
/// its data fills the queue its ACKs wait in, and what it receives runs at most at 1.5× what
/// it sends (the rest of its ingress stays unused). A host sending nothing receives at its
/// NIC's rate.
struct AckBound {
    Synthetic model;
    std::vector<double> egress, ingress;

    std::vector<double> operator()(const std::vector<FlowPair>& flows, double seconds) {
        std::vector<double> r = model(flows, seconds);
        for (std::size_t f = 0; f < flows.size(); ++f) {
            const NodeId h = flows[f].second;
            const bool sends = std::any_of(flows.begin(), flows.end(), [&](const FlowPair& g) { return g.first == h; });
            if (sends && egress[h] * 2 < ingress[h]) r[f] = std::min(r[f], 1.5 * egress[h]);
        }
        return r;
    }
};

ProbeResult probe_acks(const Truth& t, std::uint64_t seed) {
    AckBound a{Synthetic(t.net, seed), t.egress, t.ingress};
    ProbeOptions o;
    o.names = t.net.names();
    return probe_capacities(t.latency, [&a](const auto& flows, double seconds) { return a(flows, seconds); }, o);
}

ProbeResult probe_with(const Truth& t, Starving& s) {
    ProbeOptions o;
    o.names = t.net.names();
    return probe_capacities(t.latency, [&s](const auto& flows, double seconds) { return s(flows, seconds); }, o);
}

bool names_pair(const ProbeResult& r, const Truth& t, FlowPair f) {
    const std::string want = t.net.name(f.first) + " -> " + t.net.name(f.second);
    return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& note) {
        return note.find(want) != std::string::npos && note.find("not measured") != std::string::npos;
    });
}

}  // namespace

TEST_CASE("probe: random LANs of 1-4 subnets and 2-20 hosts with odd hosts get their subnets right in every seed") {
    int multi = 0, odd = 0, hiddens = 0, exact = 0;
    for (std::uint64_t seed = 0; seed < 60; ++seed) {
        std::mt19937_64 rng(seed);
        const Lan lan = random_lan(rng);
        const ProbeResult r = probe_acks(lan.truth, seed);
        CHECK_MESSAGE(visible(lan, r.subnets) == visible(lan, *lan.truth.net.subnets()),
                      "seed " << seed << " kinds " << lan.kinds << "\n" << describe(lan.truth, r));
        for (NodeId h = 0; h < lan.kinds.size(); ++h) hiddens += hidden(lan, h) ? 1 : 0;
        if (as_sets(r.subnets) == as_sets(*lan.truth.net.subnets())) ++exact;
        multi += lan.truth.uplink.size() > 1 ? 1 : 0;
        odd += lan.kinds.find_first_not_of('.') != std::string::npos ? 1 : 0;
    }
    MESSAGE(multi << " of 60 LANs have several subnets, " << odd << " odd hosts; " << hiddens
                  << " hosts no sharing test can place; " << exact << " LANs found exactly");
    CHECK(multi >= 30);
    CHECK(odd >= 15);
}

TEST_CASE("probe: a host that receives at 200 but sends at 20 Mbit/s lands in its own fast subnet") {
    // The case: a fast subnet with one such host, three subnets, one uplink of 80
    // Mbit/s, the others differing; every placement of the slow sender and uplink order.
    const std::pair<double, double> fast{200 * mbit, 200 * mbit}, slow_sender{20 * mbit, 200 * mbit};
    const std::vector<std::vector<double>> uplinks{{80, 50, 30},  {50, 80, 120},  {120, 30, 80}, {80, 120, 50},
                                                   {100, 80, 30}, {150, 80, 120}, {60, 80, 40},  {100, 80, 50}};
    const std::vector<std::vector<double>> nics{{200, 200, 200}, {200, 120, 400}, {200, 1000, 130}, {200, 300, 75},
                                                {200, 100, 50},  {200, 100, 1000}, {200, 100, 200}, {200, 120, 200}};
    int cases = 0;
    for (std::size_t v = 0; v < uplinks.size(); ++v) {
        for (std::size_t where = 0; where < 4; ++where) {
            std::mt19937_64 rng(v * 10 + where);
            std::vector<std::vector<std::pair<double, double>>> hosts(3);
            for (std::size_t k = 0; k < 3; ++k) {
                const double r = nics[v][k] * mbit;
                hosts[k].assign(k == 0 ? 4 : 3, {r, r});
            }
            hosts[0][where] = slow_sender;
            std::vector<double> up;
            for (double x : uplinks[v]) up.push_back(x * mbit);
            const Truth t = make_truth(rng, hosts, up);
            const ProbeResult r = probe_acks(t, v * 10 + where);
            CHECK_MESSAGE(as_sets(r.subnets) == as_sets(*t.net.subnets()), "case " << v << "/" << where << "\n"
                                                                                   << describe(t, r));
            CHECK(within(r.capacities.egress[where], 20 * mbit, 0.1));
            CHECK(within(r.capacities.ingress[where], 200 * mbit, 0.1));
            ++cases;
        }
    }
    CHECK(cases == 32);
}

TEST_CASE("probe: flows starved in crowded rounds are measured again, and the map comes out right") {
    int retried = 0;
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
        std::mt19937_64 rng(1000 + seed);
        const Lan lan = random_lan(rng);
        const Truth& t = lan.truth;
        const std::size_t n = t.egress.size();
        Starving s{Synthetic(t.net, seed), {}, {}, 2 + rng() % 4};
        for (std::size_t k = 0; k < 1 + n / 4; ++k) {
            const auto i = static_cast<NodeId>(rng() % n), j = static_cast<NodeId>(rng() % n);
            if (i != j) s.starved.insert({i, j});
        }
        const ProbeResult r = probe_with(t, s);
        CHECK_MESSAGE(visible(lan, r.subnets) == visible(lan, *t.net.subnets()),
                      "seed " << seed << " kinds " << lan.kinds << "\n" << describe(t, r));
        // Every starved flow measured alone in the end: none is left unmeasured.
        for (const auto& f : s.starved) CHECK_FALSE(names_pair(r, t, f));
        CHECK(r.unmeasured.empty());
        retried += s.zeros > 0 ? 1 : 0;
    }
    CHECK(retried >= 30);
}

TEST_CASE("probe: a pair that never measures is named in a note, and the map is made from the rest") {
    int seeds = 0;
    for (std::uint64_t seed = 0; seed < 30; ++seed) {
        std::mt19937_64 rng(2000 + seed);
        const Lan lan = random_lan(rng);
        const Truth& t = lan.truth;
        const std::size_t n = t.egress.size();
        if (n < 3) continue;
        ++seeds;
        Starving s{Synthetic(t.net, seed), {}, {}, 2};
        const auto i = static_cast<NodeId>(rng() % n), j = static_cast<NodeId>((i + 1 + rng() % (n - 1)) % n);
        s.broken = {{i, j}};
        if (seed % 2) s.broken.insert({j, i});  // both ways
        const ProbeResult r = probe_with(t, s);
        CHECK_MESSAGE(visible(lan, r.subnets) == visible(lan, *t.net.subnets()),
                      "seed " << seed << " kinds " << lan.kinds << "\n" << describe(t, r));
        CHECK(r.unmeasured.size() == s.broken.size());
        for (const auto& f : s.broken) {
            CHECK_MESSAGE(names_pair(r, t, f), describe(t, r));
            CHECK(std::find(r.unmeasured.begin(), r.unmeasured.end(), f) != r.unmeasured.end());
            // Its goodput is what the model of the map allows: min(NICs, uplinks on the way).
            double want = std::min(r.capacities.egress[f.first], r.capacities.ingress[f.second]);
            if (!r.capacities.uplink.empty()) {
                std::size_t a = 0, b = 0;
                for (std::size_t k = 0; k < r.subnets.size(); ++k) {
                    for (NodeId h : r.subnets[k]) {
                        if (h == f.first) a = k;
                        if (h == f.second) b = k;
                    }
                }
                if (a != b) want = std::min({want, r.capacities.uplink[a], r.capacities.uplink[b]});
            }
            CHECK(r.goodput[f.first][f.second] == doctest::Approx(want));
            CHECK(r.bandwidth[f.first][f.second] == doctest::Approx(want));
        }
    }
    CHECK(seeds >= 20);
}

TEST_CASE("probe: no map when every flow out of a host fails") {
    const Matrix lat(3, std::vector<double>(3, 1e-4));
    ProbeOptions o;
    o.names = {"a", "b", "c"};
    const auto dead_c = [](const std::vector<FlowPair>& flows, double) {
        std::vector<double> r;
        for (const auto& f : flows) r.push_back(f.first == 2 ? 0.0 : 1e6);
        return r;
    };
    CHECK_THROWS_WITH_AS((void)probe_capacities(lat, dead_c, o), doctest::Contains("no flow out of c"), Error);
}
