// What shared capacities force on a multi-source pattern (sim/pattern_bound.hpp).
#include <doctest/doctest.h>

#include <random>

#include "hetcast/model/generators.hpp"
#include "hetcast/sched/wu.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/pattern_bound.hpp"
#include "hetcast/sim/simulate.hpp"
#include "hetcast/sim/wu_bound.hpp"
#include "netlab_networks.hpp"
#include "support.hpp"

using namespace hetcast;
using test::all_to_all;

namespace {

constexpr double mib = 1024.0 * 1024.0;

}  // namespace

// Issue 27's cluster: 2 subnets x 4 hosts, 200 Mbit/s NICs, 40 Mbit/s uplinks, every host
// sends 4 MiB to every other. Each subnet's four messages must leave through its uplink once
// each: 16 MiB at 40 Mbit/s (x 0.956 goodput in lab_network) = 3.51 s; Wu's eq. (2), which
// knows no shared link, says far less.
TEST_CASE("pattern bound: an all-to-all across two subnets is held by the uplinks") {
    const Network net = test::lab_network({{40, test::lab_hosts("a", 4)}, {40, test::lab_hosts("b", 4)}});
    const PatternRequest req = all_to_all(8, 4 * mib);
    const double uplink = 0.956 * 40e6 / 8;
    CHECK(pattern_capacity_bound(net, req) == doctest::Approx(16 * mib / uplink));
    CHECK(wu_lower_bound(net, req) < 0.5 * pattern_capacity_bound(net, req));
    CHECK(pattern_lower_bound(net, req) == doctest::Approx(16 * mib / uplink));
}

// A message enters a remote subnet once however many of its hosts it reaches (a relay there
// forwards it), and leaves its own subnet once.
TEST_CASE("pattern bound: one message to three hosts of a subnet crosses its uplink once") {
    const Network net = test::lab_network({{20, test::lab_hosts("a", 1)}, {50, test::lab_hosts("b", 3)}});
    PatternRequest req;
    req.messages.push_back(Message{0, 10 * mib, {1, 2, 3}});
    // The source's own uplink (20 Mbit/s) is the slowest thing the message must cross.
    CHECK(pattern_capacity_bound(net, req) == doctest::Approx(10 * mib / (0.956 * 20e6 / 8)));
    // Two messages from the same source add up on its NIC and on its uplink.
    req.messages.push_back(Message{0, 10 * mib, {2}});
    CHECK(pattern_capacity_bound(net, req) == doctest::Approx(20 * mib / (0.956 * 20e6 / 8)));
}

// Wu's eq. (2) adds whole transfers along a path: it bounds plans that cannot cut through
// (messages of one piece, the blocking model), not a pipelined exchange.
TEST_CASE("pattern bound: 0 without capacities, Wu's bound where nothing cuts through, the paths' otherwise") {
    const Network net = random_bhat(6, 3);
    PatternRequest req = all_to_all(6, 5e4);  // under min_planned_piece
    CHECK(pattern_capacity_bound(net, req) == 0);
    CHECK_FALSE(pattern_may_cut_through(net, req));
    CHECK(pattern_lower_bound(net, req) == wu_lower_bound(net, req));
    req = all_to_all(6, 1e6);
    req.model = ExecModel::blocking;
    CHECK(pattern_lower_bound(net, req) == wu_lower_bound(net, req));
    req.model = ExecModel::nonblocking;
    REQUIRE(pattern_may_cut_through(net, req));
    double paths = 0;
    for (const Message& m : req.messages) paths = std::max(paths, path_lower_bound(net, m.source, m.dests, m.size));
    CHECK(pattern_lower_bound(net, req) == paths);
    CHECK(paths < wu_lower_bound(net, req));  // a pipeline is not held to whole transfers
}

// Every pattern algorithm's schedule, simulated on the flow model of random networks with
// random subnets and capacities, completes no earlier than the bound; and the bound is at
// least each message's own single-source capacity bound.
TEST_CASE("pattern bound: property: below every simulated schedule, above every message alone (200 patterns)") {
    std::mt19937_64 rng(2711);
    std::uniform_real_distribution<double> rate(1e5, 1e7), size(1e3, 1e6);
    for (int trial = 0; trial < 200; ++trial) {
        const std::size_t n = 3 + rng() % 7;
        Network net = random_bhat(n, rng());
        test::add_random_capacities(rng, net, rate);
        PatternRequest req;
        const std::size_t messages = 1 + rng() % (2 * n);
        for (std::size_t k = 0; k < messages; ++k) {
            Message m{static_cast<NodeId>(rng() % n), size(rng), {}};
            for (NodeId d = 0; d < n; ++d) {
                if (d != m.source && rng() % 2 == 0) m.dests.push_back(d);
            }
            if (m.dests.empty()) m.dests.push_back(static_cast<NodeId>((m.source + 1) % n));
            req.messages.push_back(m);
        }
        const double bound = pattern_capacity_bound(net, req);
        CAPTURE(trial);
        for (const Message& m : req.messages) {
            CHECK(capacity_lower_bound(net, m.source, m.dests, m.size) <= bound * (1 + 1e-12));
        }
        for (const auto& a : pattern_algorithms()) {
            CAPTURE(a.name);
            const Timeline tl = simulate(net, a.plan(net, req), req.model);
            CHECK(bound <= tl.completion * (1 + 1e-9));
        }
    }
}
