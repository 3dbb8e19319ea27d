#pragma once
// The random LANs for the probe's tests (map/probe.hpp), and what of them bandwidth
// can identify.
#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "probe_truth.hpp"

namespace hetcast::test {

/// The random LANs: 1–4 subnets, 2–20 hosts, a NIC rate per subnet of 50–1000 Mbit/s
/// (each host within 10 % of it), uplinks of 20–150 Mbit/s, and odd hosts (a quarter of those
/// past the second of their subnet): a slow sender (receives at its subnet's rate, sends at
/// 5–80 % of the slowest uplink), a slow host (both ways at 40–80 % of the slowest uplink), or
/// a host with a NIC half its subnet's that still outruns every uplink by half.
///
/// "Right" is the true subnets, and every drawn LAN is identifiable by bandwidth, by
/// construction: a subnet's uplink is at most 2/3 of its NIC rate. An uplink nearer the NICs
/// than that (the brief's "uplink as fast as its NICs") limits no single flow by more than the
/// probe's tolerance plus noise, so no pair rate tells such a subnet from the core; the probe
/// then joins it to a neighbour ("one subnet when the uplinks are faster than the NICs" in
/// probe_test.cpp shows what it does there). Hosts whose NIC sits between 0.8× and 1.5× an
/// uplink are left out for the same reason.
struct Lan {
    Truth truth;
    std::string kinds;  ///< per host: '.' regular, 's' slow sender, 'b' slow both ways, 'h' half NIC
};

inline Lan random_lan(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(0, 1);
    const std::size_t s = 1 + rng() % 4;
    const std::size_t n = std::max<std::size_t>(2 * s, 2 + rng() % 19);
    std::vector<std::size_t> sizes(s, 2);
    for (std::size_t k = 2 * s; k < n; ++k) ++sizes[rng() % s];
    std::vector<double> nic(s), uplink(s);
    for (std::size_t k = 0; k < s; ++k) {
        nic[k] = 50 * mbit * std::pow(20.0, u(rng));
        const double top = std::min(150 * mbit, nic[k] / 1.5);
        uplink[k] = 20 * mbit + (top - 20 * mbit) * u(rng);
    }
    const double umin = *std::min_element(uplink.begin(), uplink.end());
    const double umax = *std::max_element(uplink.begin(), uplink.end());
    std::vector<std::vector<std::pair<double, double>>> hosts(s);
    std::string kinds;
    for (std::size_t k = 0; k < s; ++k) {
        for (std::size_t i = 0; i < sizes[k]; ++i) {
            const double e = nic[k] * (0.9 + 0.2 * u(rng)), r = nic[k] * (0.9 + 0.2 * u(rng));
            char kind = '.';
            if (i >= 2 && u(rng) < 0.25) kind = "sbh"[rng() % 3];
            if (kind == 'h' && nic[k] / 2 < 1.5 * umax) kind = 'b';
            if (kind == 's') hosts[k].emplace_back(umin * (0.05 + 0.75 * u(rng)), r);
            if (kind == 'b') hosts[k].emplace_back(umin * (0.4 + 0.4 * u(rng)), umin * (0.4 + 0.4 * u(rng)));
            if (kind == 'h') hosts[k].emplace_back(e / 2, r / 2);
            if (kind == '.') hosts[k].emplace_back(e, r);
            kinds += kind;
        }
    }
    return {make_truth(rng, hosts, uplink), kinds};
}

/// Whether no sharing test can show where `h` (slow both ways) is: no flow x -> y between
/// regular hosts of its subnet and another keeps at most 3/4 of its rate when h's flow to
/// a regular host w of a third subnet (with two subnets: of y's) joins it, nor the flow
/// y -> x when a flow from w to h joins it. Bandwidth cannot tell such a host's subnet
/// (a 24 Mbit/s host behind a 140 Mbit/s uplink): "right" leaves it out.
inline bool hidden(const Lan& lan, NodeId h) {
    const Truth& t = lan.truth;
    const std::size_t s = t.uplink.size(), n = t.egress.size(), a = t.sub[h];
    if (lan.kinds[h] != 'b' || s < 2) return false;
    const auto regular = [&](NodeId x) { return lan.kinds[x] == '.'; };
    for (NodeId x = 0; x < n; ++x) {
        if (!regular(x) || t.sub[x] != a) continue;
        for (NodeId y = 0; y < n; ++y) {
            if (!regular(y) || t.sub[y] == a) continue;
            for (NodeId w = 0; w < n; ++w) {
                if (!regular(w) || w == y || t.sub[w] == a || (s >= 3) == (t.sub[w] == t.sub[y])) continue;
                if (kept(t, {x, y}, {h, w}) <= 0.75 || kept(t, {y, x}, {w, h}) <= 0.75) return false;
            }
        }
    }
    return true;
}

/// The subnets without the hidden hosts.
inline std::set<std::set<NodeId>> visible(const Lan& lan, const Subnets& subnets) {
    std::set<std::set<NodeId>> out;
    for (const auto& g : subnets) {
        std::set<NodeId> v;
        for (NodeId h : g) {
            if (!hidden(lan, h)) v.insert(h);
        }
        if (!v.empty()) out.insert(v);
    }
    return out;
}

}  // namespace hetcast::test
