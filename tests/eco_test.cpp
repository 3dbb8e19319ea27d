#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/map/eco.hpp"
#include "support.hpp"

using namespace hetcast;

namespace {

Subnets canonical(Subnets s) {
    for (auto& sub : s) std::sort(sub.begin(), sub.end());
    std::sort(s.begin(), s.end());
    return s;
}

bool is_canonical(const Subnets& s) {
    for (const auto& sub : s) {
        if (sub.empty() || !std::is_sorted(sub.begin(), sub.end())) return false;
    }
    return std::is_sorted(s.begin(), s.end(), [](const auto& x, const auto& y) { return x.front() < y.front(); });
}

Matrix min_symmetrised(const Matrix& m) {
    Matrix s = m;
    for (std::size_t i = 0; i < m.size(); ++i) {
        for (std::size_t j = 0; j < m.size(); ++j) s[i][j] = std::min(m[i][j], m[j][i]);
    }
    return s;
}

struct Planted {
    Matrix cost;
    Subnets clusters;
};

// Clusters are unambiguous for any tolerance in [0.11, 0.25]:
//   intra:                      base_c * (1 ± 4%), base_c in [1, 5]   (ratio within a cluster <= 1.084)
//   between two multi-host clusters:        [10, 100]  (> 1.25 * 5.2, the largest intra edge)
//   singleton to a multi-host cluster host: [10, 50]   (that host's cheapest edge is intra)
//   singleton to singleton:                 [70, 100]  (> 1.25 * 50, each singleton's cheapest edge bound)
// Cluster 0 always has at least two hosts: the globally cheapest edge always merges, so a planted
// partition made only of singletons could never be recovered.
Planted planted_clusters(std::mt19937_64& rng, std::size_t min_clusters, std::size_t max_clusters,
                         std::size_t max_size) {
    std::uniform_int_distribution<std::size_t> k_dist(min_clusters, max_clusters), size_dist(1, max_size);
    const std::size_t k = k_dist(rng);
    std::vector<std::size_t> sizes(k);
    for (auto& s : sizes) s = size_dist(rng);
    sizes[0] = std::max<std::size_t>(sizes[0], 2);
    const std::size_t n = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});

    std::vector<NodeId> label(n);
    std::iota(label.begin(), label.end(), NodeId{0});
    std::shuffle(label.begin(), label.end(), rng);
    std::vector<std::size_t> cluster_of(n);
    Subnets clusters(k);
    std::size_t next = 0;
    for (std::size_t c = 0; c < k; ++c) {
        for (std::size_t i = 0; i < sizes[c]; ++i) {
            cluster_of[label[next]] = c;
            clusters[c].push_back(label[next++]);
        }
    }

    std::uniform_real_distribution<double> base_dist(1, 5), noise(-0.04, 0.04);
    std::vector<double> base(k);
    for (auto& b : base) b = base_dist(rng);
    const auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };

    Matrix cost(n, std::vector<double>(n, 0.0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            const std::size_t ci = cluster_of[i], cj = cluster_of[j];
            const bool single_i = sizes[ci] == 1, single_j = sizes[cj] == 1;
            if (ci == cj) {
                cost[i][j] = base[ci] * (1 + noise(rng));
            } else if (single_i && single_j) {
                cost[i][j] = uniform(70, 100);
            } else if (single_i || single_j) {
                cost[i][j] = uniform(10, 50);
            } else {
                cost[i][j] = uniform(10, 100);
            }
        }
    }
    return {std::move(cost), canonical(std::move(clusters))};
}

}  // namespace

TEST_CASE("eco: three subnets of two hosts each (ECO Figure 1 style)") {
    // Pairs {0,3}, {1,4}, {2,5}, interleaved so that the output order is exercised.
    const double big = 50;
    Matrix c(6, std::vector<double>(6, big));
    for (std::size_t i = 0; i < 6; ++i) c[i][i] = 0;
    const auto set = [&](std::size_t a, std::size_t b, double w) { c[a][b] = c[b][a] = w; };
    set(0, 3, 2.0);
    set(1, 4, 1.0);
    set(2, 5, 3.0);
    set(0, 1, 10);
    set(3, 4, 11);
    set(1, 2, 15);
    set(0, 2, 20);
    const Subnets s = eco_partition(c);
    CHECK(s == Subnets{{0, 3}, {1, 4}, {2, 5}});
    CHECK(is_canonical(s));
}

TEST_CASE("eco: trivial sizes and uniform matrices") {
    CHECK(eco_partition(Matrix{}).empty());
    CHECK(eco_partition(Matrix{{0}}) == Subnets{{0}});
    CHECK(eco_partition(Matrix{{0, 7}, {9, 0}}) == Subnets{{0, 1}});
    CHECK(eco_partition(Matrix{{0, 7}, {9, 0}}, 0.0) == Subnets{{0, 1}});

    for (double v : {0.0, 1.0, 123.0}) {
        Matrix c(5, std::vector<double>(5, v));
        CHECK(eco_partition(c) == Subnets{{0, 1, 2, 3, 4}});
        CHECK(eco_partition(c, 0.0) == Subnets{{0, 1, 2, 3, 4}});
    }
}

TEST_CASE("eco: the per-host and per-subnet tolerance tests of Figure 2") {
    // 0-1 at 1.0; 2's cheapest edge is 1.5 to 0, more than 20% above 0's cheapest edge.
    CHECK(eco_partition(Matrix{{0, 1, 1.5}, {1, 0, 1.6}, {1.5, 1.6, 0}}) == Subnets{{0, 1}, {2}});
    CHECK(eco_partition(Matrix{{0, 1, 1.5}, {1, 0, 1.6}, {1.5, 1.6, 0}}, 0.5) == Subnets{{0, 1, 2}});

    // A chain 0-1 (1.0), 1-2 (1.15), 2-3 (1.3): host 2 joins {0,1} although its edge to 0 is 10
    // (members are not checked pairwise); 2-3 passes both hosts' tests (1.3 <= 1.2 * 1.15) but fails
    // the subnet test (1.3 > 1.2 * 1.0), so 3 stays alone.
    Matrix chain(4, std::vector<double>(4, 10));
    for (std::size_t i = 0; i < 4; ++i) chain[i][i] = 0;
    chain[0][1] = chain[1][0] = 1.0;
    chain[1][2] = chain[2][1] = 1.15;
    chain[2][3] = chain[3][2] = 1.3;
    CHECK(eco_partition(chain) == Subnets{{0, 1, 2}, {3}});
    CHECK(eco_partition(chain, 0.14) == Subnets{{0, 1}, {2, 3}});
    CHECK(eco_partition(chain, 0.10) == Subnets{{0, 1}, {2}, {3}});
}

TEST_CASE("eco: the diagonal is ignored") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    CHECK(eco_partition(Matrix{{nan, 1, 5}, {1, -3, 5}, {5, 5, 1e300}}) == Subnets{{0, 1}, {2}});
}

TEST_CASE("eco: planted clusters are recovered and relabelling does not change the partition") {
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
        CAPTURE(seed);
        std::mt19937_64 rng(seed);
        const Planted p = planted_clusters(rng, 1, 8, 10);
        const double tol = std::uniform_real_distribution<double>(0.11, 0.25)(rng);
        CAPTURE(tol);
        const Subnets s = eco_partition(p.cost, tol);
        REQUIRE(is_canonical(s));
        CHECK(s == p.clusters);

        const std::size_t n = p.cost.size();
        std::vector<NodeId> perm(n);
        std::iota(perm.begin(), perm.end(), NodeId{0});
        std::shuffle(perm.begin(), perm.end(), rng);
        Matrix relabelled(n, std::vector<double>(n));
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < n; ++j) relabelled[perm[i]][perm[j]] = p.cost[i][j];
        }
        std::vector<NodeId> back(n);
        for (std::size_t i = 0; i < n; ++i) back[perm[i]] = static_cast<NodeId>(i);
        Subnets mapped = eco_partition(relabelled, tol);
        REQUIRE(is_canonical(mapped));
        for (auto& sub : mapped) {
            for (auto& h : sub) h = back[h];
        }
        CHECK(canonical(mapped) == s);
    }
}

TEST_CASE("eco: relabelling invariance on unstructured matrices") {
    for (std::uint64_t seed = 1; seed <= 100; ++seed) {
        CAPTURE(seed);
        std::mt19937_64 rng(seed);
        const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
        std::uniform_real_distribution<double> d(1, 2);
        Matrix c(n, std::vector<double>(n, 0.0));
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < n; ++j) {
                if (i != j) c[i][j] = d(rng);
            }
        }
        const Subnets s = eco_partition(c);
        std::vector<NodeId> perm(n);
        std::iota(perm.begin(), perm.end(), NodeId{0});
        std::shuffle(perm.begin(), perm.end(), rng);
        Matrix relabelled(n, std::vector<double>(n));
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < n; ++j) relabelled[perm[i]][perm[j]] = c[i][j];
        }
        std::vector<NodeId> back(n);
        for (std::size_t i = 0; i < n; ++i) back[perm[i]] = static_cast<NodeId>(i);
        Subnets mapped = eco_partition(relabelled);
        for (auto& sub : mapped) {
            for (auto& h : sub) h = back[h];
        }
        CHECK(canonical(mapped) == s);
    }
}

TEST_CASE("eco: asymmetric input partitions like its min-symmetrised version") {
    for (std::uint64_t seed = 1; seed <= 100; ++seed) {
        CAPTURE(seed);
        std::mt19937_64 rng(seed);
        const std::size_t n = std::uniform_int_distribution<std::size_t>(2, 40)(rng);
        std::uniform_real_distribution<double> d(1, 2), stretch(1, 10);
        std::bernoulli_distribution flip(0.5);
        Matrix c(n, std::vector<double>(n, 0.0));
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = i + 1; j < n; ++j) {
                const double w = d(rng);
                const double other = w * stretch(rng);
                if (flip(rng)) {
                    c[i][j] = w;
                    c[j][i] = other;
                } else {
                    c[i][j] = other;
                    c[j][i] = w;
                }
            }
        }
        for (double tol : {0.0, 0.1, 0.2, 0.5}) {
            CHECK(eco_partition(c, tol) == eco_partition(min_symmetrised(c), tol));
        }
    }
    std::mt19937_64 rng(99);
    const Planted p = planted_clusters(rng, 1, 8, 10);
    CHECK(eco_partition(p.cost) == eco_partition(min_symmetrised(p.cost)));
}

TEST_CASE("eco: a few thousand hosts") {
    std::mt19937_64 rng(2024);
    const Planted p = planted_clusters(rng, 150, 150, 25);
    REQUIRE(p.cost.size() > 1500);
    CHECK(eco_partition(p.cost) == p.clusters);
}

// Barchet-Estefanel & Mounié (paper 004), Table 3: latency in microseconds between the clusters
// of an 88-machine GRID5000 grid, "split in 6 homogeneous clusters, according to cluster map
// provided by Lowekamp's algorithm with a tolerance rate rho = 30%". The diagonal is the latency
// between two machines of the same cluster ("-" for the one-machine clusters 3 and 4).
TEST_CASE("eco: the 88-machine grid of paper 004, Table 3, at 30% tolerance") {
    const std::vector<std::size_t> sizes{31, 29, 6, 1, 1, 20};  // Orsay, Orsay, IDPOT x3, Toulouse
    const double t3[6][6] = {
        {47.56, 62.10, 12181.52, 12187.24, 12197.49, 5210.99},
        {62.10, 47.92, 12181.52, 12198.03, 12195.22, 5211.47},
        {12181.52, 12181.52, 35.52, 60.08, 60.08, 5388.49},
        {12187.24, 12198.03, 60.08, 0, 242.47, 5393.98},
        {12197.49, 12195.22, 60.08, 242.47, 0, 5394.10},
        {5210.99, 5211.47, 5388.49, 5393.98, 5394.10, 27.53},
    };

    std::vector<std::size_t> cluster_of;
    Subnets expected(sizes.size());
    for (std::size_t c = 0; c < sizes.size(); ++c) {
        for (std::size_t i = 0; i < sizes[c]; ++i) {
            expected[c].push_back(static_cast<NodeId>(cluster_of.size()));
            cluster_of.push_back(c);
        }
    }
    const std::size_t n = cluster_of.size();
    REQUIRE(n == 88);

    // Deterministic +-2% noise within clusters; between clusters the table's values as given.
    const auto noise = [](std::size_t i, std::size_t j) {
        const std::size_t lo = std::min(i, j), hi = std::max(i, j);
        const double frac = static_cast<double>((lo * 7919 + hi * 104729) % 1000) / 999.0;
        return 1 + 0.02 * (2 * frac - 1);
    };
    Matrix latency(n, std::vector<double>(n, 0.0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            const std::size_t ci = cluster_of[i], cj = cluster_of[j];
            const double us = t3[ci][cj] * (ci == cj ? noise(i, j) : 1.0);
            latency[i][j] = us * 1e-6;
        }
    }
    const Network net = Network::parametric(test::p_names(n), latency, Matrix(n, std::vector<double>(n, 1e9)),
                                            std::vector<Overhead>(n), std::vector<Overhead>(n));
    const Matrix edges = eco_edge_costs(net, 4.0 * 1024 * 1024);
    CHECK(edges == latency);

    CHECK(eco_partition(edges, 0.30) == expected);

    // The table is consistent with the paper's six clusters, but Orsay's split into clusters 0 and 1
    // hangs on a thin margin, and only on cluster 0's side: 62.10 / 47.56 = 1.306 just exceeds 1.30,
    // while 62.10 / 47.92 = 1.296 does not. A slightly larger tolerance merges the two Orsay clusters.
    CHECK(62.10 > 1.30 * 47.56);
    CHECK(62.10 < 1.30 * 47.92);
    Subnets orsay_merged = expected;
    orsay_merged[0].insert(orsay_merged[0].end(), orsay_merged[1].begin(), orsay_merged[1].end());
    orsay_merged.erase(orsay_merged.begin() + 1);
    CHECK(eco_partition(edges, 0.35) == orsay_merged);
    // The two single IDPOT machines reach cluster 2 at 60.08, far above its 35.52 internally, and
    // each other only at 242.47: they stay on their own.
    CHECK(60.08 > 1.30 * 35.52);
    CHECK(242.47 > 1.30 * 60.08);
}

TEST_CASE("eco: bad input is refused") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    CHECK_THROWS_AS((void)eco_partition(Matrix{{0, 1}, {1}}), InputError);
    CHECK_THROWS_AS((void)eco_partition(Matrix{{0, 1, 2}, {1, 0, 2}}), InputError);
    CHECK_THROWS_AS((void)eco_partition(Matrix{{0, 1}, {1, 0}, {1, 1}}), InputError);
    CHECK_THROWS_AS((void)eco_partition(Matrix{{0, -1}, {1, 0}}), InputError);
    CHECK_THROWS_AS((void)eco_partition(Matrix{{0, 1}, {nan, 0}}), InputError);
    CHECK_THROWS_AS((void)eco_partition(Matrix{{0, inf}, {1, 0}}), InputError);
    CHECK_THROWS_AS((void)eco_partition(Matrix{{0, 1}, {1, 0}}, -0.01), InputError);
    CHECK_THROWS_AS((void)eco_partition(Matrix{{0, 1}, {1, 0}}, nan), InputError);
    CHECK_THROWS_AS((void)eco_partition(Matrix{{0, 1}, {1, 0}}, inf), InputError);
}
