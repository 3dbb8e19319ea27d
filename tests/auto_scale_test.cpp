// auto at scale: the scaled candidate set against the exhaustive one on capacity maps small
// enough for both, and the bound the scaled one prunes by.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "hetcast/sched/auto.hpp"
#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/throughput.hpp"

using namespace hetcast;

namespace {

constexpr double gbit = 1e9 / 8;

/// A probed site's map: subnets of 4 to 20 hosts, NICs 0.1–10 Gbit/s, uplinks 1–10 Gbit/s,
/// a pair as fast as the least it crosses alone, 50 µs inside a subnet and 200 µs across.
Network site(std::mt19937_64& rng, std::size_t n) {
    std::uniform_real_distribution<double> nic(0.1 * gbit, 10 * gbit), up(1 * gbit, 10 * gbit);
    Subnets subnets;
    for (NodeId i = 0; i < n;) {
        const std::size_t k = std::min<std::size_t>(n - i, 4 + rng() % 17);
        subnets.emplace_back();
        for (std::size_t j = 0; j < k; ++j) subnets.back().push_back(i++);
    }
    std::vector<std::size_t> sub(n);
    for (std::size_t k = 0; k < subnets.size(); ++k) {
        for (NodeId v : subnets[k]) sub[v] = k;
    }
    Capacities c;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) {
        c.egress.push_back(nic(rng));
        names.push_back("h" + std::to_string(i));
    }
    c.ingress = c.egress;
    c.disk.assign(n, std::numeric_limits<double>::infinity());
    for (std::size_t k = 0; k < subnets.size(); ++k) c.uplink.push_back(up(rng));
    const Queues q[] = {Queues::realistic, Queues::fifo, Queues::fair};
    c.queues = q[rng() % 3];
    Matrix lat(n, std::vector<double>(n, 0)), bw(n, std::vector<double>(n, 0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            bw[i][j] = std::min(c.egress[i], c.ingress[j]);
            if (sub[i] != sub[j]) bw[i][j] = std::min({bw[i][j], c.uplink[sub[i]], c.uplink[sub[j]]});
            lat[i][j] = sub[i] == sub[j] ? 50e-6 : 200e-6;
        }
    }
    Network net = Network::parametric(names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
    net.set_subnets(subnets);
    net.set_capacities(c);
    return net;
}

}  // namespace

TEST_CASE("auto scaled: within 5% of the exhaustive auto's prediction on random sites of 20 to 80 hosts") {
    std::mt19937_64 rng(26);
    const double sizes[] = {256.0 * 1024, 16.0 * (1 << 20), 1024.0 * (1 << 20)};
    double worst = 0;
    for (int trial = 0; trial < 60; ++trial) {
        const Network net = site(rng, 20 + rng() % 61);
        const double size = sizes[rng() % 3];
        const NodeId root = static_cast<NodeId>(rng() % net.size());
        const PlanRequest req = make_request(net, root, {}, size, ExecModel::nonblocking);
        const AutoChoice all = plan_auto_explained(net, req, AutoScope::exhaustive);
        const AutoChoice few = plan_auto_explained(net, req, AutoScope::scaled);
        const double a = weighed_completion(net, all.best, req.model);
        const double b = weighed_completion(net, few.best, req.model);
        INFO("trial " << trial << ", " << net.size() << " hosts, " << size << " bytes: exhaustive " << all.best.algorithm
                      << " " << a << " s, scaled " << few.best.algorithm << " " << b << " s");
        CHECK(b <= a * 1.05);
        CHECK(few.predicted.size() < all.predicted.size());
        worst = std::max(worst, b / a);
    }
    MESSAGE("worst scaled / exhaustive: " << worst);
}

TEST_CASE("pipeline above 150 hosts: grown per subnet, each subnet entered once, within 5% of the capacity bound") {
    std::mt19937_64 rng(261);
    for (int trial = 0; trial < 2; ++trial) {
        const Network net = site(rng, 200 + rng() % 40);
        const PlanRequest req = make_request(net, static_cast<NodeId>(rng() % net.size()), {}, 1024.0 * (1 << 20),
                                             ExecModel::nonblocking);
        const Schedule s = plan_pipeline(net, req);
        REQUIRE(s.relay == Relay::cut_through);
        const auto sub = net.subnet_of();
        std::vector<int> entered(net.subnets()->size(), 0);
        for (NodeId u = 0; u < net.size(); ++u) {
            for (const Task& t : s.tasks[u]) {
                if (t.op == Op::send && sub[u] != sub[t.peer]) ++entered[sub[t.peer]];
            }
        }
        for (std::size_t k = 0; k < entered.size(); ++k) CHECK(entered[k] == (k == sub[req.root] ? 0 : 1));
        const double bound = capacity_lower_bound(net, req.root, req.dests, req.size);
        CHECK(weighed_completion(net, s, req.model) <= 1.05 * bound);
    }
}
