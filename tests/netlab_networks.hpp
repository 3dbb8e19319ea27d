#pragma once
// The netlab topologies (conf/netlab/*.yaml) as capacity-model networks, for tests that
// check plans and bounds against the shapes the benchmarks run on.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "hetcast/model/network.hpp"

namespace hetcast::test {

struct LabHost {
    std::string name;
    double out_mbit = 200;
    double in_mbit = 200;
};
struct LabSubnet {
    double uplink_mbit;
    std::vector<LabHost> hosts;
};

/// Every shaped rate at TCP goodput (0.956 of it, docs/netlab.md); a pair's bandwidth is
/// the slowest of the sender's NIC out, the receiver's NIC in and, across subnets, both
/// uplinks; 0.1 ms latency.
inline Network lab_network(const std::vector<LabSubnet>& subnets) {
    const auto rate = [](double mbit) { return 0.956 * mbit * 1e6 / 8; };
    std::vector<std::string> names;
    Subnets sub;
    std::vector<std::size_t> of;
    Capacities c;
    for (std::size_t k = 0; k < subnets.size(); ++k) {
        sub.emplace_back();
        c.uplink.push_back(rate(subnets[k].uplink_mbit));
        for (const auto& h : subnets[k].hosts) {
            sub.back().push_back(static_cast<NodeId>(names.size()));
            names.push_back(h.name);
            of.push_back(k);
            c.egress.push_back(rate(h.out_mbit));
            c.ingress.push_back(rate(h.in_mbit));
            c.disk.push_back(std::numeric_limits<double>::infinity());
        }
    }
    const std::size_t n = names.size();
    Matrix lat(n, std::vector<double>(n, 1e-4)), bw(n, std::vector<double>(n, 0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            bw[i][j] = std::min(c.egress[i], c.ingress[j]);
            if (of[i] != of[j]) bw[i][j] = std::min({bw[i][j], c.uplink[of[i]], c.uplink[of[j]]});
        }
    }
    Network net = Network::parametric(names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
    net.set_subnets(sub);
    net.set_capacities(c);
    return net;
}

/// `net` with its capacities queueing as `q` says (Capacities::queues).
inline Network with_queues(Network net, Queues q) {
    Capacities c = *net.capacities();
    c.queues = q;
    net.set_capacities(c);
    return net;
}

/// prefix1 .. prefixN at 200 Mbit/s both ways.
inline std::vector<LabHost> lab_hosts(const std::string& prefix, std::size_t count) {
    std::vector<LabHost> h;
    for (std::size_t i = 1; i <= count; ++i) h.push_back({prefix + std::to_string(i)});
    return h;
}

}  // namespace hetcast::test
