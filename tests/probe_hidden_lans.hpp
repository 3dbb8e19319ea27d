#pragma once
// LANs whose uplinks no single flow fills, for the probe's tests (map/probe.hpp, step 9).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "probe_truth.hpp"

namespace hetcast::test {

/// 2–4 subnets of 2–6 hosts; a NIC rate per subnet of 50–800 Mbit/s (each host within 10 %
/// of it, the subnets' rates at least 1.5× apart), and per subnet an uplink between 1.15×
/// the fastest single flow that can cross it (its NIC against the fastest outside) and 0.8×
/// what all its hosts can send out or take in together: no pair round shows it, a round of
/// all its hosts at once does (scripts/bench_netlab_report.py's `invisible_subnets()` would
/// call it visible). A subnet with no such room gets an uplink of half its NIC rate.
inline Truth hidden_uplink_lan(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(0, 1);
    const std::size_t s = 2 + rng() % 3;
    std::vector<double> rate;
    while (rate.size() < s) {
        const double r = 50 * mbit * std::pow(16.0, u(rng));
        if (std::all_of(rate.begin(), rate.end(), [&](double x) { return std::max(x, r) >= 1.5 * std::min(x, r); })) rate.push_back(r);
    }
    std::vector<std::vector<std::pair<double, double>>> hosts(s);
    std::vector<double> send(s, 0), take(s, 0);
    for (std::size_t k = 0; k < s; ++k) {
        const std::size_t m = 2 + rng() % 5;
        for (std::size_t i = 0; i < m; ++i) {
            hosts[k].emplace_back(rate[k] * (0.9 + 0.2 * u(rng)), rate[k] * (0.9 + 0.2 * u(rng)));
            send[k] += hosts[k].back().first;
            take[k] += hosts[k].back().second;
        }
    }
    const double all_send = std::accumulate(send.begin(), send.end(), 0.0), all_take = std::accumulate(take.begin(), take.end(), 0.0);
    std::vector<double> uplink(s);
    for (std::size_t k = 0; k < s; ++k) {
        double other = 0;
        for (std::size_t l = 0; l < s; ++l) {
            if (l != k) other = std::max(other, rate[l]);
        }
        const double single = 1.1 * std::min(rate[k], other) * 1.15;
        const double together = 0.8 * std::max(std::min(send[k], all_take - take[k]), std::min(take[k], all_send - send[k]));
        uplink[k] = single < together ? single + (together - single) * u(rng) : rate[k] / 2;
    }
    return make_truth(rng, hosts, uplink);
}

}  // namespace hetcast::test
