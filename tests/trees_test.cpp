#include <doctest/doctest.h>

#include <cmath>

#include "hetcast/error.hpp"
#include "hetcast/sched/trees.hpp"
#include "hetcast/sim/simulate.hpp"
#include "support.hpp"

using namespace hetcast;

namespace {
Network uniform(std::size_t n, double c = 1) {
    Matrix m(n, std::vector<double>(n, c));
    return test::costs(m);
}
}  // namespace

TEST_CASE("trees: participants are ranked from the root, wrapping around (ECO Fig. 1d)") {
    const Network net = uniform(8);
    CHECK(test::request(net, 5).ranked() == std::vector<NodeId>{5, 6, 7, 0, 1, 2, 3, 4});
    CHECK(test::request(net, 3, {7, 1, 4}).ranked() == std::vector<NodeId>{3, 4, 7, 1});
}

TEST_CASE("trees: flat sends from the root in rank order") {
    const Network net = uniform(5);
    const Schedule s = plan_flat(net, test::request(net, 2));
    REQUIRE(s.tasks[2].size() == 4);
    const std::vector<NodeId> expected{3, 4, 0, 1};
    for (std::size_t k = 0; k < 4; ++k) {
        CHECK(s.tasks[2][k] == Task{Op::send, 0, expected[k]});
    }
    CHECK(simulate(net, s, ExecModel::blocking).completion == 4);
}

TEST_CASE("trees: binomial rounds, rank r sends to r + 2^k") {
    const Network net = uniform(8);
    const Schedule s = plan_binomial(net, test::request(net, 0));
    auto sends = [&](NodeId n) {
        std::vector<NodeId> to;
        for (const auto& t : s.tasks[n]) {
            if (t.op == Op::send) to.push_back(t.peer);
        }
        return to;
    };
    CHECK(sends(0) == std::vector<NodeId>{1, 2, 4});
    CHECK(sends(1) == std::vector<NodeId>{3, 5});
    CHECK(sends(2) == std::vector<NodeId>{6});
    CHECK(sends(3) == std::vector<NodeId>{7});
    CHECK(sends(4).empty());
    CHECK(s.tasks[5].front() == Task{Op::recv, 0, 1});
}

TEST_CASE("trees: binomial on p uniform nodes takes ceil(log2 p) steps, flat takes p - 1") {
    for (std::size_t p : {2u, 3u, 5u, 8u, 13u, 16u, 17u, 100u}) {
        const Network net = uniform(p);
        const auto req = test::request(net);
        CHECK(simulate(net, plan_binomial(net, req), ExecModel::blocking).completion ==
              std::ceil(std::log2(static_cast<double>(p))));
        CHECK(simulate(net, plan_flat(net, req), ExecModel::blocking).completion == static_cast<double>(p - 1));
    }
}

TEST_CASE("trees: binomial does not wait for lock-step rounds") {
    // P1 → P3 (round 1) is slow; P2 → P6 (round 2) starts as soon as P2 holds the message.
    Matrix c(8, std::vector<double>(8, 1));
    c[1][3] = 10;
    const Network net = test::costs(c);
    const Timeline tl = simulate(net, plan_binomial(net, test::request(net)), ExecModel::blocking);
    bool seen = false;
    for (const auto& t : tl.transfers) {
        if (t.from == 2 && t.to == 6) {
            seen = true;
            CHECK(t.start == 2);  // P2 completes at 2; a lock-step round 2 would start at 11
        }
    }
    CHECK(seen);
    CHECK(tl.completion == 12);  // P3 holds at 11, P3 → P7 ends at 12
}

TEST_CASE("plan: requests are validated") {
    const Network net = uniform(4);
    CHECK_THROWS_WITH_AS((void)test::request(net, 0, {1, 0}), doctest::Contains("destination list"), InputError);
    CHECK_THROWS_WITH_AS((void)test::request(net, 0, {1, 1}), doctest::Contains("twice"), InputError);
    CHECK_THROWS_AS((void)test::request(net, 0, {9}), InputError);
    CHECK_THROWS_WITH_AS((void)find_algorithm("nope"), doctest::Contains("unknown algorithm 'nope'"), InputError);
    CHECK(find_algorithm("ecef-la").name == "ecef-la");
}

TEST_CASE("auto: picks the least predicted completion among the applicable algorithms") {
    // Eq. 10: look-ahead (2.4) beats ECEF (8.1); flat (8.1) and binomial lose too.
    const Network net = test::costs(test::bhat_eq10());
    const auto req = test::request(net);
    const Schedule s = find_algorithm("auto").plan(net, req);
    CHECK(s.algorithm.rfind("auto:", 0) == 0);
    CHECK(simulate(net, s, req.model).completion == doctest::Approx(2.4));
    for (const auto& a : algorithms()) {
        if (a.name == "auto" || (a.applies && !a.applies(net, req))) continue;
        CHECK(simulate(net, s, req.model).completion <= simulate(net, a.plan(net, req), req.model).completion);
    }
}
