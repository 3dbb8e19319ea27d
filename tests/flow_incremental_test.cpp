// The incremental flow simulator against the reference that recomputes every rate at every
// event: the same completion times on random networks and schedules. And the per-schedule
// bound auto prunes by, against both.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/lower_bound.hpp"

using namespace hetcast;

namespace {

/// n hosts in up to 6 subnets with random NICs, uplinks and disks (some unlimited), random
/// pair bandwidths, latencies and overheads, and a random queueing discipline.
Network random_net(std::mt19937_64& rng, std::size_t n) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    std::uniform_real_distribution<double> rate(1e6, 1e8), lat(0, 1e-3), fixed(0, 1e-4), per_byte(0, 1e-9);
    std::vector<std::string> names;
    Matrix l(n, std::vector<double>(n)), b(n, std::vector<double>(n));
    std::vector<Overhead> send(n), recv(n);
    for (std::size_t i = 0; i < n; ++i) {
        names.push_back("n" + std::to_string(i));
        if (rng() % 2) {
            send[i] = {fixed(rng), per_byte(rng)};
            recv[i] = {fixed(rng), per_byte(rng)};
        }
        for (std::size_t j = 0; j < n; ++j) {
            l[i][j] = lat(rng);
            b[i][j] = rng() % 3 ? 2e8 : rate(rng);
        }
    }
    Network net = Network::parametric(names, l, b, send, recv);
    const std::size_t groups = 1 + rng() % std::min<std::size_t>(n, 6);
    Subnets sub(groups);
    for (NodeId i = 0; i < n; ++i) sub[i < groups ? i : rng() % groups].push_back(i);
    net.set_subnets(sub);
    const auto maybe = [&] { return rng() % 5 == 0 ? inf : rate(rng); };
    Capacities c;
    for (std::size_t i = 0; i < n; ++i) {
        c.egress.push_back(maybe());
        c.ingress.push_back(maybe());
        c.disk.push_back(rng() % 4 == 0 ? rate(rng) : inf);
    }
    for (std::size_t k = 0; k < groups; ++k) c.uplink.push_back(maybe());
    const Queues q[] = {Queues::realistic, Queues::fifo, Queues::fair};
    c.queues = q[rng() % 3];
    net.set_capacities(c);
    return net;
}

/// A random algorithm's plan for a random multicast, store-and-forward or cut through with
/// a random piece.
Schedule random_schedule(std::mt19937_64& rng, const Network& net) {
    const NodeId root = static_cast<NodeId>(rng() % net.size());
    std::vector<NodeId> dests;
    for (NodeId i = 0; i < net.size(); ++i) {
        if (i != root && rng() % 4 != 0) dests.push_back(i);
    }
    if (dests.empty()) dests.push_back(root == 0 ? 1 : 0);
    const auto& algos = algorithms();
    for (;;) {
        const Algorithm& a = algos[rng() % algos.size()];
        const double size = rng() % 8 == 0 ? 0.0 : 1e4 + static_cast<double>(rng() % 50'000'000);
        const PlanRequest req = make_request(net, root, dests, size, ExecModel::nonblocking);
        if (a.name == "auto" || a.name == "optimal" || (a.applies && !a.applies(net, req))) continue;
        Schedule s = a.plan(net, req);
        if (size > 0 && rng() % 2) {
            s = with_cut_through(std::move(s), std::uint64_t{1} << (12 + rng() % 10));
        } else {
            s.relay = Relay::store_and_forward;
        }
        return s;
    }
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({1e-9, std::abs(a), std::abs(b)}); }

}  // namespace

TEST_CASE("flow simulator: the incremental one predicts what the reference does, transfer by transfer") {
    std::mt19937_64 rng(2026);
    std::size_t compared = 0;
    for (int trial = 0; trial < 320; ++trial) {
        // A few larger ones: components of many flows held to each other.
        const Network net = random_net(rng, trial < 300 ? 2 + rng() % 30 : 60 + rng() % 60);
        const Schedule s = random_schedule(rng, net);
        const Timeline fast = simulate_flows(net, s);
        const Timeline ref = simulate_flows_reference(net, s);
        INFO("trial " << trial << ", " << s.algorithm << ", " << net.size() << " nodes");
        CHECK(close(fast.completion, ref.completion));
        REQUIRE(fast.transfers.size() == ref.transfers.size());
        for (std::size_t k = 0; k < ref.transfers.size(); ++k) {
            const Transfer& a = fast.transfers[k];
            const Transfer& b = ref.transfers[k];
            CHECK(a.from == b.from);
            CHECK(a.to == b.to);
            CHECK(close(a.arrival, b.arrival));
            CHECK(close(a.complete, b.complete));
            ++compared;
        }
    }
    CHECK(compared > 1000);
}

TEST_CASE("schedule_lower_bound: never above the flow simulator's completion, and not trivial") {
    std::mt19937_64 rng(1626);
    int tight = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const Network net = random_net(rng, 2 + rng() % 30);
        const Schedule s = random_schedule(rng, net);
        const double bound = schedule_lower_bound(net, s);
        const double completion = simulate_flows_reference(net, s).completion;
        INFO("trial " << trial << ", " << s.algorithm << (s.relay == Relay::cut_through ? " cut through" : "") << ", "
                      << net.size() << " nodes: bound " << bound << ", completion " << completion);
        CHECK(bound <= completion);
        tight += bound >= 0.5 * completion;
    }
    MESSAGE("bounds within half of the completion: " << tight << " of 300");
    CHECK(tight > 250);
}
