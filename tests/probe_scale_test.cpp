// The structure-first probe (map/probe.hpp, probe_structure()) on generated sites of 100 to
// 5000 hosts: the subnets and capacities it finds, and what it costs as the site grows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "hetcast/error.hpp"
#include "hetcast/map/probe.hpp"
#include "hetcast/map/probe_site.hpp"

using namespace hetcast;

namespace {

std::set<std::set<NodeId>> as_sets(const Subnets& s, const std::vector<char>& skip = {}) {
    std::set<std::set<NodeId>> out;
    for (const auto& g : s) {
        std::set<NodeId> members;
        for (NodeId h : g) {
            if (skip.empty() || !skip[h]) members.insert(h);
        }
        out.insert(std::move(members));
    }
    return out;
}

bool within(double got, double want, double rel) { return std::abs(got - want) <= rel * want; }

ProbeResult probe_site(const Site& site, std::uint64_t seed) {
    SiteMeasure m(site, seed);
    ProbeOptions o;
    o.pair_matrices = site.subnet_of.size() <= 1000;
    const Matrix no_latency;
    // Through probe_capacities() where the latency matrix is small enough to make.
    if (site.subnet_of.size() <= 1000) {
        const std::size_t n = site.subnet_of.size();
        return probe_capacities(Matrix(n, std::vector<double>(n, 1e-4)),
                                [&m](const auto& f, double s) { return m(f, s); }, o);
    }
    return probe_structure(site.subnet_of.size(), [&m](const auto& f, double s) { return m(f, s); }, o, no_latency);
}

/// What a host's NICs can show: the most a flow with a partner of its own subnet carries.
double observable(const Site& s, NodeId h, bool out) {
    double best = 0;
    for (NodeId j : s.subnets[s.subnet_of[h]]) {
        if (j == h) continue;
        const auto& c = s.capacities;
        best = std::max(best, out ? std::min(c.egress[h], c.ingress[j]) : std::min(c.egress[j], c.ingress[h]));
    }
    return best;
}

/// What an uplink can show: the most it carries towards another uplink.
double observable_uplink(const Site& s, std::size_t k) {
    double best = 0;
    for (std::size_t j = 0; j < s.subnets.size(); ++j) {
        if (j != k) best = std::max(best, std::min(s.capacities.uplink[k], s.capacities.uplink[j]));
    }
    return best;
}

/// Subnets right (hosts in `skip` aside), every NIC within 10% and the uplinks within 15% of
/// what they can show, but for one or the share `uplinks_off` (an uplink whose tests all met
/// slower ones reads theirs: 20% low at worst seen); found subnets come in the true order.
void check_found(const Site& s, const ProbeResult& r, const std::string& what, const std::vector<char>& skip = {},
                 double uplinks_off = 0.1) {
    const bool same = as_sets(r.subnets, skip) == as_sets(s.subnets, skip);
    CHECK_MESSAGE(same, what << ": " << r.subnets.size() << " subnets found, " << s.subnets.size() << " true");
    if (!same) return;
    std::size_t wrong_nic = 0, wrong_uplink = 0;
    for (NodeId h = 0; h < s.subnet_of.size(); ++h) {
        if (!skip.empty() && skip[h]) continue;
        if (!within(r.capacities.egress[h], observable(s, h, true), 0.1)) ++wrong_nic;
        if (!within(r.capacities.ingress[h], observable(s, h, false), 0.1)) ++wrong_nic;
    }
    REQUIRE(r.capacities.uplink.size() == s.subnets.size());
    for (std::size_t k = 0; k < s.subnets.size(); ++k) {
        if (!within(r.capacities.uplink[k], observable_uplink(s, k), 0.15)) ++wrong_uplink;
    }
    CHECK_MESSAGE(wrong_nic == 0, what << ": NIC rates off by more than 10%");
    CHECK_MESSAGE(static_cast<double>(wrong_uplink) <= std::max(1.0, uplinks_off * static_cast<double>(s.subnets.size())),
                  what << ": " << wrong_uplink << " uplinks off by more than 15%");
}

}  // namespace

TEST_CASE("probe at scale: subnets and capacities of 100 and 1000 hosts, measurements growing linearly") {
    std::size_t flows100 = 0, calls100 = 0, flows1000 = 0, calls1000 = 0;
    double seconds100 = 0, seconds1000 = 0;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const Site s = random_site(100, seed);
        const ProbeResult r = probe_site(s, seed * 31);
        check_found(s, r, "100 hosts, seed " + std::to_string(seed));
        flows100 = std::max(flows100, r.flows);
        calls100 = std::max(calls100, r.measurements);
        seconds100 = std::max(seconds100, r.measured_seconds);
    }
    // Every pair measured (n − 1 rounds of n flows, 3 passes) would be 29,700 flows.
    REQUIRE_MESSAGE(flows100 <= 40 * 100, "flows at 100 hosts: " << flows100);
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
        const Site s = random_site(1000, 100 + seed);
        const ProbeResult r = probe_site(s, seed * 37);
        check_found(s, r, "1000 hosts, seed " + std::to_string(seed));
        flows1000 = std::max(flows1000, r.flows);
        calls1000 = std::max(calls1000, r.measurements);
        seconds1000 = std::max(seconds1000, r.measured_seconds);
    }
    MESSAGE("100 hosts: " << calls100 << " measurements, " << flows100 << " flows, " << seconds100
                          << " s; 1000 hosts: " << calls1000 << " measurements, " << flows1000 << " flows, "
                          << seconds1000 << " s");
    CHECK(flows1000 <= 12 * flows100);
    CHECK(calls1000 <= 12 * calls100);
    CHECK(seconds1000 <= 12 * seconds100);
}

TEST_CASE("probe at scale: hosts numbered at random, the subnets right") {
    // Blocks of neighbours then hold pieces of many subnets; the pieces must still merge.
    SiteParams shuffled;
    shuffled.shuffled = true;
    for (const auto& [hosts, seeds] : {std::pair<std::size_t, std::uint64_t>{100, 3}}) {
        for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
            const Site in_order = random_site(hosts, 600 + seed), s = random_site(hosts, 600 + seed, shuffled);
            const ProbeResult base = probe_site(in_order, seed), r = probe_site(s, seed);
            const std::string what = std::to_string(hosts) + " hosts shuffled, seed " + std::to_string(seed);
            // Uplinks aside: their tests between pieces of one subnet mislead the estimates (left open).
            check_found(s, r, what, {}, 1.0);
            MESSAGE(what << ": " << r.measurements << " measurements, " << r.flows << " flows (in order "
                         << base.measurements << ", " << base.flows << ")");
            // Joining the hosts blocks leave to pieces of subnets costs more than the merge.
            CHECK(r.measurements <= 3 * base.measurements + 20);
            CHECK(r.flows <= 3 * base.flows);
        }
    }
}

TEST_CASE("probe at scale: 5000 hosts") {
    const Site s = random_site(5000, 5000);
    const ProbeResult r = probe_site(s, 5);
    check_found(s, r, "5000 hosts");
    CHECK(r.flows <= 40 * 5000);
    MESSAGE("5000 hosts: " << r.measurements << " measurements, " << r.flows << " flows, " << r.measured_seconds << " s");
}

TEST_CASE("probe at scale: a host slower than every uplink is placed right or named in its subnet's doubt") {
    SiteParams p;
    p.slow_share = 0.05;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const Site s = random_site(200, 70 + seed, p);
        const ProbeResult r = probe_site(s, seed);
        // Uplinks off by more than 15%: 14-15 of 247 over seeds 1-20 (6%), so two of ten
        // happen by the noise's draw.
        check_found(s, r, "200 hosts with slow ones, seed " + std::to_string(seed), s.slow, 0.2);
        MESSAGE("200 hosts with slow ones, seed " << seed << ": " << r.measurements << " measurements; " << r.notes.back());
        // A block pass over the slow hosts that finds no group faster than the uplinks ends
        // the passes: 116-144 measurements when it tested them as a group and joined them again
        // (100-112 now, a sharing test that goes on to the next four candidates included).
        CHECK(r.measurements <= 115);
        // The slow hosts no join placed are named, with how far their best reading fell short.
        const auto joined = std::find_if(r.notes.begin(), r.notes.end(),
                                         [](const std::string& x) { return x.rfind("joining: ", 0) == 0; });
        REQUIRE(joined != r.notes.end());
        std::size_t placed = 0, asked = 0;
        REQUIRE(std::sscanf(joined->c_str(), "joining: %zu of %zu", &placed, &asked) == 2);
        CHECK(placed < asked);
        bool named = false;
        for (NodeId h = 0; h < s.slow.size(); ++h) {
            if (s.slow[h] && joined->find(" " + std::to_string(h) + " 0.") != std::string::npos) named = true;
        }
        CHECK_MESSAGE(named, *joined);
        REQUIRE(r.doubts.size() == r.subnets.size());
        for (std::size_t k = 0; k < r.subnets.size(); ++k) {
            for (NodeId h : r.subnets[k]) {
                const auto& truth = s.subnets[s.subnet_of[h]];
                const bool right = std::all_of(truth.begin(), truth.end(), [&](NodeId o) {
                    return s.slow[o] || std::find(r.subnets[k].begin(), r.subnets[k].end(), o) != r.subnets[k].end();
                });
                if (!right) CHECK_MESSAGE(r.doubts[k].find(std::to_string(h) + " placed") != std::string::npos, "host " << h);
            }
        }
    }
}

TEST_CASE("probe at scale: a joining host costs a measurement per subnet, and finds its own") {
    const Site s = random_site(300, 9);
    SiteMeasure m(s, 3);
    int right = 0, tried = 0;
    for (NodeId host : {NodeId{0}, NodeId{57}, NodeId{150}, NodeId{299}}) {
        const JoinResult j = probe_join(300, host, s.subnets, s.capacities, [&m](const auto& f, double x) { return m(f, x); });
        ++tried;
        right += j.subnet == s.subnet_of[host] ? 1 : 0;
        CHECK_MESSAGE(j.subnet == s.subnet_of[host], "host " << host);
        CHECK(j.doubt.empty());
        CHECK(j.measurements <= 2 * s.subnets.size());
        CHECK(j.flows <= 4 * s.subnets.size());
        CHECK(within(j.egress, observable(s, host, true), 0.1));
    }
    CHECK(right == tried);
}

TEST_CASE("probe at scale: a host joining a subnet of one member is measured both ways") {
    // Hosts 0, 1 behind one uplink, 2 alone behind another; 3 joins, truly beside 2.
    const std::vector<std::size_t> truth{0, 0, 1, 1};
    const Subnets subnets{{0, 1}, {2}};
    constexpr double inf = std::numeric_limits<double>::infinity();
    const Capacities caps{{100e6, 100e6, 100e6, 0}, {100e6, 100e6, 100e6, 0}, {inf, inf, inf, inf}, {10e6, 10e6}};
    std::size_t into_joiner = 0;
    const MeasureFlows measure = [&](const std::vector<FlowPair>& flows, double) {
        std::vector<double> r;
        for (const auto& [a, b] : flows) {
            r.push_back(truth[a] == truth[b] ? 95e6 : 9.5e6);
            if (b == 3) ++into_joiner;
        }
        return r;
    };
    const JoinResult j = probe_join(4, 3, subnets, caps, measure);
    CHECK(j.subnet == 1);
    CHECK(into_joiner >= 1);
    CHECK(j.ingress == doctest::Approx(95e6));
    CHECK(j.egress == doctest::Approx(95e6));
}

TEST_CASE("probe at scale: bad input") {
    const Site s = random_site(30, 1);
    SiteMeasure m(s, 1);
    const MeasureFlows f = [&m](const auto& x, double t) { return m(x, t); };
    CHECK_THROWS_AS((void)probe_structure(1, f), InputError);
    CHECK_THROWS_AS((void)probe_structure(30, f, {}, Matrix(3, std::vector<double>(3, 0))), InputError);
    CHECK_THROWS_AS((void)probe_join(30, 30, s.subnets, s.capacities, f), InputError);
    CHECK_THROWS_AS((void)probe_join(31, 0, s.subnets, s.capacities, f), InputError);
}


TEST_CASE("probe at scale: each hint of the next measurement's flows names the flows measured next") {
    // A prober dials the flows it is told of while the measurement before them runs.
    const Site s = random_site(100, 2);
    SiteMeasure m(s, 62);
    ProbeOptions o;
    std::vector<std::vector<FlowPair>> measured;
    std::vector<std::pair<std::size_t, std::vector<FlowPair>>> hints;  // (measurements made before it, flows)
    o.prepare = [&](const std::vector<FlowPair>& next) { hints.emplace_back(measured.size(), next); };
    const std::size_t n = s.subnet_of.size();
    const ProbeResult r = probe_capacities(Matrix(n, std::vector<double>(n, 1e-4)),
                                           [&](const auto& f, double sec) {
                                               measured.push_back(f);
                                               return m(f, sec);
                                           },
                                           o);
    check_found(s, r, "100 hosts with hints");
    REQUIRE(!hints.empty());
    std::size_t right = 0;
    for (const auto& [before, flows] : hints) {
        // Given before measurement `before`, it names measurement `before` + 1.
        REQUIRE(before + 1 < measured.size());
        if (measured[before + 1] == flows) ++right;
    }
    CHECK(right == hints.size());
    MESSAGE(hints.size() << " of " << measured.size() << " measurements hinted");
    CHECK(2 * hints.size() >= measured.size());
}

TEST_CASE("probe at scale: the record of a probe holds every measurement as measured, in order") {
    // What `hetcast probe --trace` writes: phase, flows and rates, a flow not rated as NaN.
    const Site s = random_site(100, 3);
    SiteMeasure m(s, 7);
    ProbeOptions o;
    std::vector<std::vector<FlowPair>> measured;
    std::vector<std::vector<double>> returned;
    std::vector<std::string> phases;
    std::vector<std::pair<std::vector<FlowPair>, std::vector<double>>> recorded;
    o.progress = [&](std::string_view phase, std::size_t) { phases.emplace_back(phase); };
    o.record = [&](std::string_view phase, const std::vector<FlowPair>& f, const std::vector<double>& r) {
        REQUIRE(phases.size() == recorded.size() + 1);
        CHECK(phase == phases.back());
        recorded.emplace_back(f, r);
    };
    std::mt19937_64 rng(11);
    const std::size_t n = s.subnet_of.size();
    const ProbeResult r = probe_capacities(Matrix(n, std::vector<double>(n, 1e-4)),
                                           [&](const auto& f, double sec) {
                                               auto x = m(f, sec);
                                               for (double& v : x) v = rng() % 50 == 0 ? 0 : v;  // not rated
                                               measured.push_back(f);
                                               returned.push_back(x);
                                               return x;
                                           },
                                           o);
    REQUIRE(recorded.size() == r.measurements);
    REQUIRE(recorded.size() == measured.size());
    std::size_t unrated = 0;
    for (std::size_t k = 0; k < recorded.size(); ++k) {
        CHECK(recorded[k].first == measured[k]);
        REQUIRE(recorded[k].second.size() == returned[k].size());
        for (std::size_t f = 0; f < returned[k].size(); ++f) {
            if (returned[k][f] == 0) {
                CHECK(std::isnan(recorded[k].second[f]));
                ++unrated;
            } else {
                CHECK(recorded[k].second[f] == returned[k][f]);
            }
        }
    }
    CHECK(unrated > 0);
}

namespace {

/// conf/netlab/scale/hosts-48.yaml: four subnets of 12, 20 Mbit/s NICs, uplinks 15, 12, 10
/// and 12 Mbit/s, b5 a 10 Mbit/s NIC, c7 a 5 Mbit/s sender; with `subnets` 8, hosts-96.yaml
/// (uplinks 15 12 10 12 15 10 12 15, f3 a 10 Mbit/s NIC too).
Site hosts_48(std::size_t subnets = 4) {
    Site s;
    const double mbit = 1e6 / 8, uplinks[8] = {15, 12, 10, 12, 15, 10, 12, 15};
    for (std::size_t k = 0; k < subnets; ++k) {
        auto& g = s.subnets.emplace_back();
        for (std::size_t i = 0; i < 12; ++i) {
            g.push_back(static_cast<NodeId>(k * 12 + i));
            s.subnet_of.push_back(k);
            s.slow.push_back(0);
            const bool slow = (k == 1 && i == 4) || (k == 5 && i == 2), c7 = k == 2 && i == 6;
            s.capacities.egress.push_back((slow ? 10 : c7 ? 5 : 20) * mbit);
            s.capacities.ingress.push_back((slow ? 10 : 20) * mbit);
            s.capacities.disk.push_back(std::numeric_limits<double>::infinity());
        }
        s.capacities.uplink.push_back(uplinks[k] * mbit);
    }
    return s;
}

Site hosts_24() {
    Site s;
    const double mbit = 1e6 / 8, uplinks[4] = {45, 35, 30, 40};
    for (std::size_t k = 0; k < 4; ++k) {
        auto& g = s.subnets.emplace_back();
        for (std::size_t i = 0; i < 6; ++i) {
            g.push_back(static_cast<NodeId>(k * 6 + i));
            s.subnet_of.push_back(k);
            s.slow.push_back(0);
            const bool b3 = k == 1 && i == 2, c4 = k == 2 && i == 3;
            s.capacities.egress.push_back((b3 ? 25 : c4 ? 12 : 60) * mbit);
            s.capacities.ingress.push_back((b3 ? 25 : 60) * mbit);
            s.capacities.disk.push_back(std::numeric_limits<double>::infinity());
        }
        s.capacities.uplink.push_back(uplinks[k] * mbit);
    }
    return s;
}

std::size_t spent_on(const ProbeResult& r, const std::string& step) {
    for (const auto& note : r.notes) {
        const auto at = note.find(" " + step + " ");
        if (note.rfind("measurements by step", 0) == 0 && at != std::string::npos) return std::stoul(note.substr(at + step.size() + 2));
    }
    return 0;
}

}  // namespace

TEST_CASE("probe at scale: netlab's 48 hosts, the slow NIC placed by a sharing test, not by latency that tells nothing") {
    // Latency across the router told b5's subnet wrong on netlab in 2 of 6 runs; here it is
    // the same everywhere. Equal NICs tie: trying partner after partner cost 16 measurements.
    const Site s = hosts_48();
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        SiteMeasure m(s, seed);
        const ProbeResult r = probe_capacities(Matrix(48, std::vector<double>(48, 1e-4)),
                                               [&m](const auto& f, double x) { return m(f, x); });
        CHECK_MESSAGE(as_sets(r.subnets) == as_sets(s.subnets), "seed " << seed);
        for (const auto& d : r.doubts) CHECK_MESSAGE(d.find("placed by") == std::string::npos, d);
        CHECK_MESSAGE(r.measurements <= 50, "seed " << seed << ": " << r.measurements << " measurements");
        // b5 reads 10 Mbit/s into two subnets alike, its best anywhere: no join will place it,
        // and it stops after two (trying all four cost 8 measurements of the join's 8).
        const std::size_t joining = spent_on(r, "joining");
        CHECK_MESSAGE(joining <= 4, "seed " << seed << ": " << joining << " joining measurements");
        MESSAGE("seed " << seed << ": " << r.measurements << " measurements, " << r.measured_seconds << " s; "
                        << (r.notes.empty() ? "" : r.notes.back()));
    }
}

TEST_CASE("probe at scale: netlab's 24 hosts, a NIC slower than every uplink tried only where an uplink could have limited it") {
    // b3 (25 Mbit/s) reads 25 with b, its own, and with a, c and d across uplinks of 30-45:
    // its own NIC limited the first try, so only c (30, within the tolerance of 25) could
    // still hold it. It tried all four subnets and the sharing test four (12-16 of 44
    // measurements on netlab). Latency ranks b last, as netlab's noise can.
    const Site s = hosts_24();
    Matrix lat(24, std::vector<double>(24, 1e-4));
    for (NodeId o : s.subnets[1]) {
        if (o != 8) lat[8][o] = lat[o][8] = 3e-4;
    }
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        SiteMeasure m(s, seed);
        const ProbeResult r = probe_capacities(lat, [&m](const auto& f, double x) { return m(f, x); });
        CHECK_MESSAGE(as_sets(r.subnets) == as_sets(s.subnets), "seed " << seed);
        for (const auto& d : r.doubts) CHECK_MESSAGE(d.find("placed by") == std::string::npos, d);
        const std::size_t joining = spent_on(r, "joining"), placing = spent_on(r, "placing");
        CHECK_MESSAGE(joining <= 4, "seed " << seed << ": " << joining << " joining measurements");
        CHECK_MESSAGE(placing <= 4, "seed " << seed << ": " << placing << " placing measurements");
        MESSAGE("seed " << seed << ": " << r.measurements << " measurements; " << r.notes.back());
    }
}

TEST_CASE("probe at scale: netlab's 96 hosts, slow NICs placed by sharing tests when latency points elsewhere") {
    // b5 and f3 read alike from anywhere. Latency ranks each one's own subnet last (on
    // netlab it is noise): four candidates tried left them to latency, wrong, on netlab.
    const Site s = hosts_48(8);
    const std::size_t n = s.subnet_of.size();
    Matrix lat(n, std::vector<double>(n, 1e-4));
    for (NodeId h : {NodeId{16}, NodeId{62}}) {
        for (NodeId o = 0; o < n; ++o) {
            if (o != h && s.subnet_of[o] == s.subnet_of[h]) lat[h][o] = lat[o][h] = 3e-4;
        }
    }
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        SiteMeasure m(s, seed);
        const ProbeResult r = probe_capacities(lat, [&m](const auto& f, double x) { return m(f, x); });
        CHECK_MESSAGE(as_sets(r.subnets) == as_sets(s.subnets), "seed " << seed);
        for (const auto& d : r.doubts) CHECK_MESSAGE(d.find("placed by") == std::string::npos, d);
        MESSAGE("seed " << seed << ": " << r.measurements << " measurements");
    }
}

TEST_CASE("probe at scale: two pieces of a subnet that the group tests kept apart are one when their uplink test carries what their NICs allow") {
    // netlab's c5 and c6 (hosts-48): their block group's test with the rest of c went through
    // c7, a 5 Mbit/s sender, and read a third low. Here every group-step flow out of or into
    // c5 and c6 reads a third low; the uplink test between the pieces, at what the NICs
    // allow both ways, must join them.
    const Site s = hosts_48();
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        SiteMeasure m(s, seed);
        ProbeOptions o;
        std::string phase;
        std::size_t split = 0;
        o.progress = [&](std::string_view p, std::size_t) { phase = p; };
        const ProbeResult r = probe_capacities(Matrix(48, std::vector<double>(48, 1e-4)),
                                               [&](const auto& f, double x) {
                                                   auto v = m(f, x);
                                                   if (phase != "groups") return v;
                                                   for (std::size_t k = 0; k < f.size(); ++k) {
                                                       const bool odd = f[k].first == 28 || f[k].first == 29 ||
                                                                        f[k].second == 28 || f[k].second == 29;
                                                       if (odd && s.subnet_of[f[k].first] == s.subnet_of[f[k].second]) {
                                                           v[k] *= 0.3;
                                                           ++split;
                                                       }
                                                   }
                                                   return v;
                                               },
                                               o);
        CHECK(split > 0);
        CHECK_MESSAGE(as_sets(r.subnets) == as_sets(s.subnets), "seed " << seed << ": " << r.subnets.size() << " subnets");
    }
}

TEST_CASE("probe at scale: a sample of pings places hosts as all pairs do, pinging on demand only pairs it lacks") {
    // Sites with hosts slower than every uplink, and latency that tells (50 us inside, 300
    // us across): every pair pinged, against the first 16 round-robin rounds and the probe
    // asking for the rest it needs.
    SiteParams p;
    p.slow_share = 0.05;
    std::size_t latency_told = 0;
    for (std::uint64_t seed = 1; seed <= 9; ++seed) {
        const Site s = seed == 4 ? hosts_48() : random_site(200, 70 + seed, p);
        const std::size_t n = s.subnet_of.size();
        const auto truth = [&](NodeId a, NodeId b) { return s.subnet_of[a] == s.subnet_of[b] ? 50e-6 : 300e-6; };
        Matrix full(n, std::vector<double>(n, 0)), sample(n, std::vector<double>(n, std::nan("")));
        for (NodeId a = 0; a < n; ++a) {
            sample[a][a] = 0;
            for (NodeId b = 0; b < n; ++b) {
                if (a != b) full[a][b] = truth(a, b);
            }
        }
        const auto rounds = round_robin(static_cast<std::uint32_t>(n));
        for (std::size_t r = 0; r < 16; ++r) {
            for (auto [a, b] : rounds[r]) sample[a][b] = sample[b][a] = truth(a, b);
        }
        SiteMeasure m1(s, seed), m2(s, seed), m3(s, seed);
        const ProbeResult all = probe_capacities(full, [&m1](const auto& f, double x) { return m1(f, x); });
        ProbeOptions o;
        std::map<std::pair<NodeId, std::size_t>, int> asked;
        o.ping = [&](const std::vector<FlowPair>& pairs) {
            std::vector<double> out;
            for (auto [a, b] : pairs) {
                CHECK(std::isnan(sample[a][b]));
                ++asked[{a, s.subnet_of[b]}];
                out.push_back(truth(a, b));
            }
            return out;
        };
        const ProbeResult some = probe_capacities(sample, [&m2](const auto& f, double x) { return m2(f, x); }, o);
        CHECK_MESSAGE(as_sets(some.subnets) == as_sets(all.subnets), "seed " << seed);
        CHECK(some.doubts == all.doubts);
        CHECK(some.measurements == all.measurements);  // the same candidates tried in the same order
        for (const auto& [host_subnet, count] : asked) CHECK(count <= 8);
        // Without a way to ping, the sample alone still makes a map.
        const ProbeResult alone = probe_capacities(sample, [&m3](const auto& f, double x) { return m3(f, x); });
        CHECK(alone.subnets.size() == all.subnets.size());
        // The control: with no latency at all, some site's map comes out otherwise, or costs
        // more sharing tests (latency ranks the candidates).
        SiteMeasure m4(s, seed);
        const ProbeResult blind = probe_capacities(Matrix(n, std::vector<double>(n, std::nan(""))),
                                                   [&m4](const auto& f, double x) { return m4(f, x); });
        if (as_sets(blind.subnets) != as_sets(all.subnets) || blind.doubts != all.doubts ||
            blind.measurements > all.measurements) {
            ++latency_told;
        }
        MESSAGE("seed " << seed << ": " << asked.size() << " (host, subnet) pairs pinged on demand");
    }
    // Latency told somewhere: the sample had to do as well as all pairs. (Since the joins
    // narrow a slow host's candidates by the uplinks, it tells on fewer sites: of seeds
    // 1-16, only 9's doubts.)
    CHECK(latency_told > 0);
    Matrix bad(30, std::vector<double>(30, std::nan("")));
    bad[0][1] = -1;
    CHECK_THROWS_AS((void)probe_capacities(bad, [](const auto& f, double) { return std::vector<double>(f.size(), 1e6); }),
                    InputError);
}
