// A schedule simulated beside the flows of jobs already running (simulate_flows()'s
// `beside`): it ends later than alone, exactly as the two simulated together as one
// schedule, and the incremental simulator agrees with the reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hetcast/error.hpp"
#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/simulate.hpp"

using namespace hetcast;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

/// 8 hosts in 2 subnets (h0, h2, ... and h1, h3, ...): 25 MB/s NICs and pairs, 5 MB/s
/// uplinks, no latency and no overheads, so that a send issued first starts at time 0.
Network two_subnets() {
    const std::size_t n = 8;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) names.push_back("h" + std::to_string(i));
    Matrix lat(n, std::vector<double>(n, 0)), bw(n, std::vector<double>(n, 25e6));
    Network net = Network::parametric(names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
    net.set_subnets({{0, 2, 4, 6}, {1, 3, 5, 7}});
    net.set_capacities({std::vector<double>(n, 25e6), std::vector<double>(n, 25e6), std::vector<double>(n, inf),
                        std::vector<double>(2, 5e6)});
    return net;
}

/// The latest completion of message m's transfers.
double done_of(const Timeline& tl, MessageId m) {
    double t = 0;
    for (const Transfer& tr : tl.transfers) {
        if (tr.message == m) t = std::max(t, tr.complete);
    }
    return t;
}

/// `s` with the running flows as messages of their own, sent first by their senders and
/// received last by their receivers: the schedule and the running jobs simulated together.
Schedule together(const Schedule& s, const std::vector<BackgroundFlow>& beside) {
    Schedule all = s;
    for (const BackgroundFlow& b : beside) {
        const MessageId m = all.messages.size();
        all.messages.push_back({b.from, b.bytes, {b.to}});
        auto& out = all.tasks[b.from];
        out.insert(out.begin(), Task{Op::send, m, b.to});
        all.tasks[b.to].push_back({Op::recv, m, b.from});
    }
    return all;
}

}  // namespace

TEST_CASE("beside running flows: a plan ends later than alone, as it does simulated together with them") {
    const Network net = two_subnets();
    const double m = 4e6;
    const PlanRequest req = make_request(net, 0, {}, m, ExecModel::nonblocking);
    // Another job's flows still crossing the uplink out of h0's subnet, and into it.
    const std::vector<BackgroundFlow> beside{{2, 3, 6e6, 0}, {5, 4, 3e6, 0}};
    for (const std::string algo : {"fef", "lcf"}) {
        for (const bool cut : {false, true}) {
            CAPTURE(algo);
            CAPTURE(cut);
            Schedule s = find_algorithm(algo).plan(net, req);
            if (cut) s = with_cut_through(s, 256 << 10);
            const Timeline alone = simulate_flows(net, s);
            const Timeline next_to = simulate_flows(net, s, beside);
            CHECK(next_to.completion > alone.completion * 1.2);
            const Timeline both = simulate_flows(net, together(s, beside));
            CHECK(next_to.completion == doctest::Approx(done_of(both, 0)).epsilon(1e-9));
            CHECK(simulate_flows_reference(net, s, beside).completion == doctest::Approx(next_to.completion).epsilon(1e-9));
            CHECK(simulate_beside(net, s, ExecModel::nonblocking, beside).completion == next_to.completion);
        }
    }
}

TEST_CASE("beside running flows: a flow held to its rate cap slows a plan less, and none is alone") {
    const Network net = two_subnets();
    const Schedule s = find_algorithm("lcf").plan(net, make_request(net, 0, {}, 4e6, ExecModel::nonblocking));
    const double alone = simulate_flows(net, s).completion;
    const double full = simulate_flows(net, s, {{2, 3, 6e6, 0}}).completion;
    const double capped = simulate_flows(net, s, {{2, 3, 6e6, 1e6}}).completion;
    CHECK(capped < full);
    CHECK(capped > alone);
    CHECK(simulate_flows(net, s, {}).completion == alone);
    CHECK_THROWS_AS((void)simulate_flows(net, s, {{2, 2, 1e6, 0}}), InputError);
}
