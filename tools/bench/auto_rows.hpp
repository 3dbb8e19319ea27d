#pragma once
// hetcast-bench's rows for `auto` on generated capacity maps (issue 26 §2).
#include <cstdint>
#include <iosfwd>
#include <string>

#include "hetcast/model/network.hpp"

namespace hetcast::bench {

/// A capacity map like a probed site's: subnets of 20 hosts, each host's NIC (both
/// directions) uniform in 0.1–10 Gbit/s, each subnet's uplink uniform in 1–10 Gbit/s; a
/// pair's bandwidth is the least of what it crosses alone (as a probe measures it),
/// latency 50 µs inside a subnet and 200 µs across. Deterministic for a seed.
[[nodiscard]] Network capacity_map(std::size_t hosts, std::uint64_t seed);

/// The map as YAML for `hetcast plan --network`: its capacities, from which the loader
/// derives the pair bandwidths, or with `full_matrices` both N×N matrices (a probe's form).
void write_capacity_map(std::ostream& out, const Network& net, bool full_matrices = false);

/// Runs the rows (each size in a fresh process, for its own peak memory), prints their
/// table and growth; true when every stated target is met. A run longer than
/// `limit_seconds` is stopped and counts as a miss.
[[nodiscard]] bool run_auto_rows(double limit_seconds);

}  // namespace hetcast::bench
