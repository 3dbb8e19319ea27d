// Issue 27: auto weighs its candidates by their completion simulated beside the flows of
// jobs already running (PlanRequest::beside), not as if the network were its own.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>

#include "hetcast/sched/auto.hpp"
#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/flow.hpp"
#include "support.hpp"

using namespace hetcast;

namespace {

/// The first node of `s` other than its source that sends: a relay.
std::optional<NodeId> relay_of(const Schedule& s) {
    for (NodeId v = 0; v < s.tasks.size(); ++v) {
        if (v == s.messages.front().source) continue;
        for (const Task& t : s.tasks[v]) {
            if (t.op == Op::send) return v;
        }
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE("auto beside running flows: it drops its pick alone when the running flows make it slower") {
    const Network net = test::alternate_two_subnets(8, "h", 25e6, 5e6, 1e-3);
    PlanRequest req = make_request(net, 0, {2, 4}, 16e6, ExecModel::nonblocking);
    const AutoChoice alone = plan_auto_explained(net, req);
    const auto relay = relay_of(alone.best);
    REQUIRE(relay);
    // Two flows of another job leave the relay auto picked alone for h6 (not in this push),
    // taking two thirds of its NIC out.
    req.beside = {{*relay, 6, 400e6, 0}, {*relay, 6, 400e6, 0}};
    const AutoChoice next_to = plan_auto_explained(net, req);
    CHECK(next_to.best.tasks != alone.best.tasks);
    const double kept = weighed_completion(net, alone.best, req.model, req.beside);
    const double picked = weighed_completion(net, next_to.best, req.model, req.beside);
    CHECK(picked < kept * 0.7);
    // What it weighed is each candidate beside them, its pick the least but for a near tie.
    for (const auto& [name, t] : next_to.predicted) CHECK(picked <= t * (1 + 0.03 + 1e-9));
}

TEST_CASE("auto beside running flows: a pick alone that they slow less than 10% behind another stays") {
    const Network net = test::alternate_two_subnets(8, "h", 25e6, 5e6, 1e-3);
    PlanRequest req = make_request(net, 0, {2, 4}, 16e6, ExecModel::nonblocking);
    const AutoChoice alone = plan_auto_explained(net, req);
    const auto relay = relay_of(alone.best);
    REQUIRE(relay);
    req.beside = {{*relay, 6, 9e6, 0}, {*relay, 6, 9e6, 0}};
    const AutoChoice next_to = plan_auto_explained(net, req);
    const double kept = weighed_completion(net, alone.best, req.model, req.beside);
    double least = kept;
    for (const auto& [name, t] : next_to.predicted) least = std::min(least, t);
    CAPTURE(kept);
    CAPTURE(least);
    REQUIRE(least < kept);  // another candidate is faster beside them...
    REQUIRE(kept <= least * 1.10);  // ...but by less than the margin
    CHECK(next_to.best.tasks == alone.best.tasks);
    CHECK(kept > least * 1.03);
}

TEST_CASE("auto beside running flows: none, or flows on links the plan does not use, change nothing") {
    const Network net = test::alternate_two_subnets(8, "h", 25e6, 5e6, 1e-3);
    PlanRequest req = make_request(net, 0, {2, 4, 6}, 16e6, ExecModel::nonblocking);
    const AutoChoice alone = plan_auto_explained(net, req);
    req.beside = {{3, 5, 400e6, 0}};  // inside the other subnet
    const AutoChoice next_to = plan_auto_explained(net, req);
    CHECK(next_to.best.tasks == alone.best.tasks);
    CHECK(next_to.best.piece == alone.best.piece);
    REQUIRE(next_to.predicted.size() == alone.predicted.size());
    for (std::size_t k = 0; k < alone.predicted.size(); ++k) {
        CHECK(next_to.predicted[k].second == doctest::Approx(alone.predicted[k].second).epsilon(1e-9));
    }
}
