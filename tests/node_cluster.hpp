#pragma once
// Embedded nodes as threads of one process over loopback, for the Node tests.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hetcast/runtime/node.hpp"
#include "identity.hpp"
#include "temp_dir.hpp"

namespace hetcast::test {

inline Bytes random_bytes(std::size_t n, std::uint64_t seed) {
    auto v = std::make_shared<std::vector<std::byte>>(n);
    std::mt19937_64 rng(seed);
    for (auto& b : *v) b = static_cast<std::byte>(rng());
    return v;
}

/// Two subnets; with `slow`, emulated links at 2 MB/s so a job takes a while.
inline Network two_subnets(std::size_t n, bool slow = false) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) names.push_back("n" + std::to_string(i));
    Matrix lat(n, std::vector<double>(n)), bw(n, std::vector<double>(n));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            lat[i][j] = i % 2 == j % 2 ? 1e-4 : 2e-3;
            bw[i][j] = slow ? 2e6 : (i % 2 == j % 2 ? 1e9 : 1e8);
        }
    }
    return Network::parametric(names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
}

struct Nodes {
    TempDir dir;
    std::vector<std::unique_ptr<Node>> nodes;
    /// `max_jobs`: how many jobs each node takes part in at once (0: no limit).
    explicit Nodes(std::size_t n, bool slow = false, std::size_t max_jobs = 0) {
        const Network map = two_subnets(n, slow);
        std::vector<Member> members;
        for (std::size_t i = 0; i < n; ++i) {
            PeerConfig c;
            c.name = "n" + std::to_string(i);
            c.identity = test::identity(c.name);
            c.dest_root = dir.path / c.name;
            c.connect_timeout = std::chrono::milliseconds(3000);
            if (slow) c.link_profile = map;
            c.max_jobs = max_jobs;
            nodes.push_back(std::make_unique<Node>(c));
            nodes.back()->start();
            members.push_back({c.name, "127.0.0.1", nodes.back()->port()});
        }
        for (auto& node : nodes) node->join(members, map);
    }
    Node& operator[](std::size_t i) { return *nodes.at(i); }
};

}  // namespace hetcast::test
