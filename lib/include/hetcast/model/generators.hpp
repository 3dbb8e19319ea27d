#pragma once
/// Random networks with the papers' parameter ranges, for tests, benchmarks and sweeps.
/// Deterministic for a given seed, bit for bit on every standard library.
#include <cstdint>
#include <random>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"

namespace hetcast {

struct Range {
    double lo = 0;
    double hi = 0;
};

/// A seeded generator whose draws do not depend on the standard library's distributions.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : gen_(seed) {}
    /// Uniform in [r.lo, r.hi).
    [[nodiscard]] double uniform(Range r);
    /// Uniform integer in [0, n); n > 0.
    [[nodiscard]] std::size_t below(std::size_t n);
    /// Uniform integer in [lo, hi].
    [[nodiscard]] std::size_t between(std::size_t lo, std::size_t hi) { return lo + below(hi - lo + 1); }
    /// k distinct nodes of [0, n) other than `exclude`, ascending (k ≤ n − 1).
    [[nodiscard]] std::vector<NodeId> sample(std::size_t n, std::size_t k, NodeId exclude);

private:
    std::mt19937_64 gen_;
};

/// Bhat §5, Figure 4: every ordered pair gets a latency uniform in `latency` (seconds) and a
/// bandwidth uniform in `bandwidth` (bytes/s); no send or receive overheads.
struct BhatParams {
    Range latency{10e-6, 1e-3};
    Range bandwidth{10e3, 200e6};
};
[[nodiscard]] Network random_bhat(std::size_t n, std::uint64_t seed, const BhatParams& p = {});

/// Bhat §5, Figure 5: two clusters, the first ⌈n/2⌉ nodes and the rest. Pairs inside a
/// cluster draw from `intra`, pairs across from `inter`. The halves become the subnet map.
struct BhatClusterParams {
    BhatParams intra{{10e-6, 1e-3}, {10e6, 200e6}};
    BhatParams inter{{1e-3, 20e-3}, {10e3, 50e3}};
};
[[nodiscard]] Network random_bhat_clusters(std::size_t n, std::uint64_t seed, const BhatClusterParams& p = {});

/// A random whole-message cost matrix with entries uniform in [lo, hi].
[[nodiscard]] Network random_costs(std::size_t n, std::uint64_t seed, Range cost);

/// Wu §5. Nodes fall into `classes` overhead classes; each class draws a send and a
/// receive overhead, fixed part in `fixed` (s), per-byte part in `per_byte` (s/byte).
/// Every link has a latency in `latency` and a bandwidth in `bandwidth` (bytes/s): the
/// paper's fast network is 1 Gb/s, its slow one 155 Mb/s, no latency term.
struct WuParams {
    std::size_t classes = 4;
    Range fixed{80e-6, 400e-6};
    Range per_byte{0.0001e-6, 0.01e-6};
    Range latency{0, 0};
    Range bandwidth{1e9 / 8, 1e9 / 8};
};
inline constexpr double wu_fast_link = 1e9 / 8;
inline constexpr double wu_slow_link = 155e6 / 8;
[[nodiscard]] Network random_wu(std::size_t n, std::uint64_t seed, const WuParams& p = {});

/// Wu §5's message lengths: small (≤ 1 kB, uniform in `small`), large (1 MB or 1.5 MB,
/// even odds) or hybrid (small or large, even odds).
enum class MessageMix { small, large, hybrid };
struct MessageParams {
    MessageMix mix = MessageMix::large;
    Range small{1, 1024};
    std::vector<double> large{1 << 20, 1.5 * (1 << 20)};
};
[[nodiscard]] double random_message_size(Rng& rng, const MessageParams& p);

/// A multiple multicast (Wu §5.2): round(share · n) sources, the share uniform in
/// `sources`, at least one; each source multicasts to round(share · (n − 1)) other nodes,
/// at least one, the share drawn per source from `dests`. Messages ordered by source.
struct PatternParams {
    Range sources{0.05, 0.5};
    Range dests{0.1, 0.9};
    MessageParams messages;
};
[[nodiscard]] std::vector<Message> random_pattern(std::size_t n, std::uint64_t seed, const PatternParams& p = {});

/// Barchet-Steffenel & Mounié §6, Table 2: a cluster-level grid, one node per cluster
/// (named k<i>, each its own subnet). Cost i→j = g_ij + L_ij with L in `latency` and g in
/// `gap`, drawn per ordered pair; node i's local_broadcast() is T_i, drawn from `local`.
/// A cost matrix holds the sender for L as well as g: L ≤ 15 ms against g ≥ 100 ms.
struct GridParams {
    Range latency{1e-3, 15e-3};
    Range gap{100e-3, 600e-3};
    Range local{20e-3, 3000e-3};
};
[[nodiscard]] Network random_grid(std::size_t clusters, std::uint64_t seed, const GridParams& p = {});

/// Khuller, Kim & Wan §2: n nodes in k clusters, k uniform in `clusters` (at most n), the
/// sizes a uniform random composition of n; cost `local` inside a cluster and C, uniform
/// in `global`, across.
struct ClusterParams {
    Range clusters{2, 8};
    Range global{2, 20};
    double local = 1;
};
[[nodiscard]] Network random_clusters(std::size_t n, std::uint64_t seed, const ClusterParams& p = {});

}  // namespace hetcast
