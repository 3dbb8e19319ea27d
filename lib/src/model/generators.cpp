#include "hetcast/model/generators.hpp"

#include <random>
#include <string>

namespace hetcast {
namespace {

std::vector<std::string> node_names(std::size_t n) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) names.push_back("p" + std::to_string(i));
    return names;
}

// std::uniform_real_distribution is not specified bit for bit across standard libraries;
// this is, so a seed gives the same network everywhere.
double uniform(std::mt19937_64& rng, Range r) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    return r.lo + (r.hi - r.lo) * u;
}

}  // namespace

Network random_bhat(std::size_t n, std::uint64_t seed, const BhatParams& p) {
    std::mt19937_64 rng(seed);
    Matrix lat(n, std::vector<double>(n, 0.0));
    Matrix bw(n, std::vector<double>(n, 0.0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            lat[i][j] = uniform(rng, p.latency);
            bw[i][j] = uniform(rng, p.bandwidth);
        }
    }
    return Network::parametric(node_names(n), std::move(lat), std::move(bw), std::vector<Overhead>(n),
                               std::vector<Overhead>(n));
}

Network random_costs(std::size_t n, std::uint64_t seed, Range cost) {
    std::mt19937_64 rng(seed);
    Matrix c(n, std::vector<double>(n, 0.0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i != j) c[i][j] = uniform(rng, cost);
        }
    }
    return Network::from_costs(node_names(n), std::move(c));
}

}  // namespace hetcast
