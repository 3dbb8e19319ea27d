#include "hetcast/map/eco.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "hetcast/error.hpp"

namespace hetcast {
namespace {

void check_input(const Matrix& cost, double tolerance) {
    if (!std::isfinite(tolerance) || tolerance < 0) {
        throw InputError("eco_partition: tolerance must be non-negative and finite");
    }
    const std::size_t n = cost.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (cost[i].size() != n) {
            throw InputError("eco_partition: row " + std::to_string(i) + " has " + std::to_string(cost[i].size()) +
                             " entries, expected " + std::to_string(n));
        }
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            if (!std::isfinite(cost[i][j]) || cost[i][j] < 0) {
                throw InputError("eco_partition: cost[" + std::to_string(i) + "][" + std::to_string(j) +
                                 "] must be non-negative and finite");
            }
        }
    }
}

struct Edge {
    double w;
    NodeId a;
    NodeId b;
};

class UnionFind {
public:
    explicit UnionFind(std::size_t n)
        : parent_(n), size_(n, 1), min_edge_(n, std::numeric_limits<double>::infinity()) {
        std::iota(parent_.begin(), parent_.end(), NodeId{0});
    }

    NodeId find(NodeId x) {
        while (parent_[x] != x) {
            parent_[x] = parent_[parent_[x]];
            x = parent_[x];
        }
        return x;
    }

    /// Cheapest edge that merged the subnet rooted at `root`; infinite for a host on its own.
    [[nodiscard]] double subnet_min(NodeId root) const { return min_edge_[root]; }

    void merge(NodeId ra, NodeId rb, double w) {
        if (size_[ra] < size_[rb]) std::swap(ra, rb);
        parent_[rb] = ra;
        size_[ra] += size_[rb];
        min_edge_[ra] = std::min({w, min_edge_[ra], min_edge_[rb]});
    }

private:
    std::vector<NodeId> parent_;
    std::vector<std::size_t> size_;
    std::vector<double> min_edge_;
};

}  // namespace

// Lowekamp & Beguelin §4.1, Figure 2, with 1.20 generalised to 1 + tolerance.
Subnets eco_partition(const Matrix& cost, double tolerance) {
    check_input(cost, tolerance);
    const std::size_t n = cost.size();
    const double factor = 1.0 + tolerance;
    const auto w = [&](std::size_t i, std::size_t j) { return std::min(cost[i][j], cost[j][i]); };

    std::vector<double> host_min(n, std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
            const double c = w(i, j);
            host_min[i] = std::min(host_min[i], c);
            host_min[j] = std::min(host_min[j], c);
        }
    }

    // The per-host test does not depend on the merges so far: apply it before sorting.
    std::vector<Edge> edges;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
            const double c = w(i, j);
            if (c > factor * host_min[i] || c > factor * host_min[j]) continue;
            edges.push_back({c, static_cast<NodeId>(i), static_cast<NodeId>(j)});
        }
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
        if (x.w != y.w) return x.w < y.w;
        if (x.a != y.a) return x.a < y.a;
        return x.b < y.b;
    });

    UnionFind uf(n);
    for (const Edge& e : edges) {
        const NodeId ra = uf.find(e.a), rb = uf.find(e.b);
        if (ra == rb) continue;
        if (e.w > factor * uf.subnet_min(ra) || e.w > factor * uf.subnet_min(rb)) continue;
        uf.merge(ra, rb, e.w);
    }

    Subnets out;
    std::vector<std::size_t> index(n, n);
    for (std::size_t i = 0; i < n; ++i) {
        const NodeId r = uf.find(static_cast<NodeId>(i));
        if (index[r] == n) {
            index[r] = out.size();
            out.emplace_back();
        }
        out[index[r]].push_back(static_cast<NodeId>(i));
    }
    return out;
}

Matrix eco_edge_costs(const Network& net, double m) {
    return net.latency().empty() ? net.cost_matrix(m) : net.latency();
}

}  // namespace hetcast
