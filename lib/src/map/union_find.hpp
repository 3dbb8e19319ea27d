#pragma once
#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace hetcast::probing {

/// Disjoint sets of 0..n-1; a set's root is its lowest member.
struct UnionFind {
    explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), std::size_t{0}); }
    std::size_t find(std::size_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    }
    void unite(std::size_t a, std::size_t b) {
        a = find(a);
        b = find(b);
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
    std::vector<std::size_t> parent;
};

}  // namespace hetcast::probing
