// Step 10 of the probe (map/probe.hpp): whether the hosts' NICs queue in one FIFO, told by a
// flow across an uplink beside flows inside from the same host. The truth here is the flow
// model's own FIFO rule (sim/flow.hpp, sharing_rates()) with noise: these tests hold the
// step to the model it feeds; netlab's all-FIFO runs hold both to the wire.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "../lib/src/map/prober.hpp"
#include "hetcast/map/probe.hpp"
#include "netlab_networks.hpp"
#include "probe_lans.hpp"
#include "probe_truth.hpp"

using namespace hetcast;
using namespace hetcast::test;

namespace {


/// sharing_rates() of `net` (its queues) times ±5 % noise; counts its calls.
struct Shared {
    Network net;
    std::mt19937_64 rng;
    std::size_t calls = 0;
    std::vector<double> operator()(const std::vector<FlowPair>& flows, double) {
        ++calls;
        std::vector<FlowPath> paths;
        for (const auto& [i, j] : flows) paths.push_back(flow_path(net, i, j));
        auto r = sharing_rates(resource_capacities(net), fifo_resources(net), paths);
        std::uniform_real_distribution<double> noise(0.95, 1.05);
        for (double& x : r) x *= noise(rng);
        return r;
    }
};

/// Step 10 alone on the true subnets and capacities of `t`, measured on `net`.
ProbeResult queues_of(const Truth& t, const Network& net, std::uint64_t seed, std::size_t& calls) {
    Shared s{net, std::mt19937_64(seed)};
    ProbeResult r;
    r.subnets = *t.net.subnets();
    r.capacities = *t.net.capacities();
    ProbeOptions opt;
    probing::measure_queues([&s](const auto& flows, double secs) { return s(flows, secs); }, opt, r);
    calls = s.calls;
    return r;
}

}  // namespace

TEST_CASE("probe, host NICs: FIFO queues and fair ones told apart on random LANs, and nothing measured where no test tells") {
    int tested = 0, several = 0;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        std::mt19937_64 rng(seed);
        const Lan lan = random_lan(rng);
        const bool multi = lan.truth.uplink.size() > 1;
        several += multi;
        bool made = false;
        for (const Queues q : {Queues::realistic, Queues::fifo}) {
            CAPTURE(seed);
            CAPTURE(lan.kinds);
            std::size_t calls = 0;
            const ProbeResult r = queues_of(lan.truth, with_queues(lan.truth.net, q), seed, calls);
            CHECK((calls == 0 || calls == 3));
            CHECK(r.measurements == calls);
            if (!multi) CHECK(calls == 0);
            if (calls == 0) {
                CHECK(r.capacities.queues == Queues::realistic);
                CHECK(r.notes.empty());
                continue;
            }
            made = true;
            REQUIRE(r.notes.size() == 1);
            CHECK(r.notes[0].rfind("host NICs: ", 0) == 0);
            CHECK(r.capacities.queues == q);
        }
        tested += made;
    }
    // A test tells only where a host's NIC outruns an uplink about five times (FIFO queues
    // then cost the flow across a third or more); these LANs' uplinks reach 1/1.5 of the NICs.
    MESSAGE(tested << " of " << several << " LANs with several subnets tested");
    CHECK(tested * 10 >= several);
}

TEST_CASE("probe, host NICs: netlab random --seed 1 (a 20 Mbit/s uplink, 150 Mbit/s NICs) is told both ways by the whole probe") {
    // All-FIFO there, a1 sending inside its subnet and across at once got 10.6 of 20 Mbit/s
    // across, where fair NICs gave it 18.
    std::vector<std::pair<double, double>> a(9, {150 * mbit, 150 * mbit}), b(11, {50 * mbit, 50 * mbit});
    a[1].first = 25 * mbit;
    b[4].first = b[9].first = 14 * mbit;
    std::mt19937_64 rng(1);
    const Truth t = make_truth(rng, {a, b}, {20 * mbit, 20 * mbit});
    for (const Queues q : {Queues::realistic, Queues::fifo}) {
        Shared s{with_queues(t.net, q), std::mt19937_64(7)};
        ProbeOptions o;
        o.structure_hosts = 0;
        o.names = t.net.names();
        const ProbeResult r = probe_capacities(t.latency, [&s](const auto& flows, double secs) { return s(flows, secs); }, o);
        CHECK(r.capacities.queues == q);
    }
}
