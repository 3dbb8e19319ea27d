#pragma once
/// Random networks with the papers' parameter ranges, for tests, benchmarks and sweeps.
/// Deterministic for a given seed.
#include <cstdint>

#include "hetcast/model/network.hpp"

namespace hetcast {

struct Range {
    double lo = 0;
    double hi = 0;
};

/// Bhat §5, Figure 4: every ordered pair gets a latency uniform in `latency` (seconds) and a
/// bandwidth uniform in `bandwidth` (bytes/s); no send or receive overheads.
struct BhatParams {
    Range latency{10e-6, 1e-3};
    Range bandwidth{10e3, 200e6};
};
[[nodiscard]] Network random_bhat(std::size_t n, std::uint64_t seed, const BhatParams& p = {});

/// A random whole-message cost matrix with entries uniform in [lo, hi].
[[nodiscard]] Network random_costs(std::size_t n, std::uint64_t seed, Range cost);

}  // namespace hetcast
