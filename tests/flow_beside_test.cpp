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
#include "support.hpp"

using namespace hetcast;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

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
    const Network net = test::alternate_two_subnets(8, "h", 25e6, 5e6, 0);
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
    const Network net = test::alternate_two_subnets(8, "h", 25e6, 5e6, 0);
    const Schedule s = find_algorithm("lcf").plan(net, make_request(net, 0, {}, 4e6, ExecModel::nonblocking));
    const double alone = simulate_flows(net, s).completion;
    const double full = simulate_flows(net, s, {{2, 3, 6e6, 0}}).completion;
    const double capped = simulate_flows(net, s, {{2, 3, 6e6, 1e6}}).completion;
    CHECK(capped < full);
    CHECK(capped > alone);
    CHECK(simulate_flows(net, s, {}).completion == alone);
    CHECK_THROWS_AS((void)simulate_flows(net, s, {{2, 2, 1e6, 0}}), InputError);
}
