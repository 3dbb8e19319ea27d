#include "hetcast/model/generators.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "hetcast/error.hpp"

namespace hetcast {
namespace {

std::vector<std::string> node_names(std::size_t n, const char* prefix = "p") {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) names.push_back(prefix + std::to_string(i));
    return names;
}

void check_range(Range r, const char* what, bool positive = false) {
    if (!std::isfinite(r.lo) || !std::isfinite(r.hi) || r.lo > r.hi || r.lo < 0 || (positive && r.lo <= 0)) {
        throw InputError(std::string(what) + " range must satisfy " + (positive ? "0 < lo" : "0 <= lo") +
                         " <= hi, finite");
    }
}

void check_nodes(std::size_t n) {
    if (n == 0) throw InputError("a network needs at least one node");
}

std::size_t share_of(double share, std::size_t of) {
    const auto k = static_cast<std::size_t>(std::llround(share * static_cast<double>(of)));
    return std::clamp<std::size_t>(k, 1, std::max<std::size_t>(of, 1));
}

}  // namespace

// std::uniform_real_distribution is not specified bit for bit across standard libraries;
// this is, so a seed gives the same network everywhere.
double Rng::uniform(Range r) {
    const double u = static_cast<double>(gen_() >> 11) * 0x1.0p-53;
    return r.lo + (r.hi - r.lo) * u;
}

std::size_t Rng::below(std::size_t n) {
    const double u = static_cast<double>(gen_() >> 11) * 0x1.0p-53;
    return std::min(static_cast<std::size_t>(u * static_cast<double>(n)), n - 1);
}

std::vector<NodeId> Rng::sample(std::size_t n, std::size_t k, NodeId exclude) {
    std::vector<NodeId> pool;
    for (NodeId i = 0; i < n; ++i) {
        if (i != exclude) pool.push_back(i);
    }
    if (k > pool.size()) throw InputError("cannot pick " + std::to_string(k) + " of " + std::to_string(pool.size()) + " nodes");
    // Partial Fisher–Yates.
    for (std::size_t i = 0; i < k; ++i) std::swap(pool[i], pool[i + below(pool.size() - i)]);
    pool.resize(k);
    std::sort(pool.begin(), pool.end());
    return pool;
}

namespace {

Network bhat_network(std::size_t n, std::uint64_t seed, const BhatClusterParams& p, bool halves) {
    check_nodes(n);
    for (const BhatParams* b : {&p.intra, &p.inter}) {
        check_range(b->latency, "latency");
        check_range(b->bandwidth, "bandwidth", true);
    }
    const std::size_t half = (n + 1) / 2;
    Rng rng(seed);
    Matrix lat(n, std::vector<double>(n, 0.0));
    Matrix bw(n, std::vector<double>(n, 0.0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            const BhatParams& b = (i < half) == (j < half) ? p.intra : p.inter;
            lat[i][j] = rng.uniform(b.latency);
            bw[i][j] = rng.uniform(b.bandwidth);
        }
    }
    Network net = Network::parametric(node_names(n), std::move(lat), std::move(bw), std::vector<Overhead>(n),
                                      std::vector<Overhead>(n));
    if (halves) {
        Subnets map(n > half ? 2 : 1);
        for (NodeId i = 0; i < n; ++i) map[i < half ? 0 : 1].push_back(i);
        net.set_subnets(std::move(map));
    }
    return net;
}

}  // namespace

Network random_bhat(std::size_t n, std::uint64_t seed, const BhatParams& p) {
    return bhat_network(n, seed, BhatClusterParams{p, p}, false);
}

Network random_bhat_clusters(std::size_t n, std::uint64_t seed, const BhatClusterParams& p) {
    return bhat_network(n, seed, p, true);
}

Network random_costs(std::size_t n, std::uint64_t seed, Range cost) {
    Rng rng(seed);
    Matrix c(n, std::vector<double>(n, 0.0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i != j) c[i][j] = rng.uniform(cost);
        }
    }
    return Network::from_costs(node_names(n), std::move(c));
}

Network random_wu(std::size_t n, std::uint64_t seed, const WuParams& p) {
    check_nodes(n);
    if (p.classes == 0) throw InputError("the number of overhead classes must be at least 1");
    check_range(p.fixed, "overhead");
    check_range(p.per_byte, "per-byte overhead");
    check_range(p.latency, "latency");
    check_range(p.bandwidth, "bandwidth", true);
    Rng rng(seed);
    std::vector<Overhead> send_class(p.classes), recv_class(p.classes);
    for (std::size_t c = 0; c < p.classes; ++c) {
        send_class[c] = {rng.uniform(p.fixed), rng.uniform(p.per_byte)};
        recv_class[c] = {rng.uniform(p.fixed), rng.uniform(p.per_byte)};
    }
    std::vector<Overhead> send(n), recv(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t c = rng.below(p.classes);
        send[i] = send_class[c];
        recv[i] = recv_class[c];
    }
    Matrix lat(n, std::vector<double>(n, 0.0));
    Matrix bw(n, std::vector<double>(n, 0.0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            lat[i][j] = rng.uniform(p.latency);
            bw[i][j] = rng.uniform(p.bandwidth);
        }
    }
    return Network::parametric(node_names(n), std::move(lat), std::move(bw), std::move(send), std::move(recv));
}

double random_message_size(Rng& rng, const MessageParams& p) {
    check_range(p.small, "small message size");
    if (p.large.empty()) throw InputError("no large message sizes given");
    MessageMix mix = p.mix;
    if (mix == MessageMix::hybrid) mix = rng.below(2) == 0 ? MessageMix::small : MessageMix::large;
    if (mix == MessageMix::small) return std::floor(rng.uniform({p.small.lo, p.small.hi + 1}));
    return p.large[rng.below(p.large.size())];
}

std::vector<Message> random_pattern(std::size_t n, std::uint64_t seed, const PatternParams& p) {
    if (n < 2) throw InputError("a multiple multicast needs at least two nodes");
    check_range(p.sources, "source share");
    check_range(p.dests, "destination share");
    if (p.sources.hi > 1 || p.dests.hi > 1) throw InputError("source and destination shares must be at most 1");
    Rng rng(seed);
    const std::size_t k = share_of(rng.uniform(p.sources), n);
    std::vector<Message> out;
    for (NodeId src : rng.sample(n, k, static_cast<NodeId>(n))) {
        const double size = random_message_size(rng, p.messages);
        const std::size_t d = share_of(rng.uniform(p.dests), n - 1);
        out.push_back(Message{src, size, rng.sample(n, d, src)});
    }
    return out;
}

Network random_grid(std::size_t clusters, std::uint64_t seed, const GridParams& p) {
    check_nodes(clusters);
    check_range(p.latency, "latency");
    check_range(p.gap, "gap");
    check_range(p.local, "local broadcast");
    Rng rng(seed);
    Matrix c(clusters, std::vector<double>(clusters, 0.0));
    for (std::size_t i = 0; i < clusters; ++i) {
        for (std::size_t j = 0; j < clusters; ++j) {
            if (i == j) continue;
            const double l = rng.uniform(p.latency);
            c[i][j] = rng.uniform(p.gap) + l;
        }
    }
    std::vector<double> t(clusters);
    for (double& x : t) x = rng.uniform(p.local);
    Network net = Network::from_costs(node_names(clusters, "k"), std::move(c));
    Subnets each;
    for (NodeId i = 0; i < clusters; ++i) each.push_back({i});
    net.set_subnets(std::move(each));
    net.set_local_broadcast(std::move(t));
    return net;
}

Network random_clusters(std::size_t n, std::uint64_t seed, const ClusterParams& p) {
    check_nodes(n);
    check_range(p.clusters, "cluster count");
    check_range(p.global, "global cost");
    if (p.clusters.lo < 1) throw InputError("a cluster network needs at least one cluster");
    if (!std::isfinite(p.local) || p.local < 0) throw InputError("local cost must be non-negative and finite");
    Rng rng(seed);
    const auto lo = static_cast<std::size_t>(std::ceil(p.clusters.lo));
    const auto hi = static_cast<std::size_t>(std::floor(p.clusters.hi));
    if (lo > hi) throw InputError("cluster count range holds no whole number");
    const std::size_t k = std::min(rng.between(lo, hi), n);
    // k − 1 distinct cut points in 1 … n − 1 split 0 … n into k non-empty runs.
    std::vector<NodeId> cuts = rng.sample(n, k - 1, 0);
    cuts.push_back(static_cast<NodeId>(n));
    std::vector<std::size_t> sizes;
    NodeId start = 0;
    for (NodeId c : cuts) {
        sizes.push_back(c - start);
        start = c;
    }
    return Network::clusters(sizes, p.local, rng.uniform(p.global));
}

}  // namespace hetcast
