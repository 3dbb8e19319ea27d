#include <doctest/doctest.h>

#include "hetcast/error.hpp"
#include "hetcast/sim/simulate.hpp"
#include "support.hpp"

using namespace hetcast;

namespace {

// Three hosts, 1000-byte messages: S = 1 s, L = 3 s, B = 1000 B/s (1 s on the wire), R = 2 s.
// So a transfer: sender busy 1, arrives 1 + 3 + 1 = 5 after it starts, complete 2 later.
Network three_hosts() {
    const Matrix lat{{0, 3, 3}, {3, 0, 3}, {3, 3, 0}};
    const Matrix bw{{0, 1000, 1000}, {1000, 0, 1000}, {1000, 1000, 0}};
    return Network::parametric({"A", "B", "C"}, lat, bw, std::vector<Overhead>(3, {1, 0}),
                               std::vector<Overhead>(3, {2, 0}));
}

Schedule one_message(std::vector<NodeId> dests, double size = 1000) {
    return Schedule("hand", 3, {Message{0, size, std::move(dests)}});
}

void check(const Transfer& t, NodeId from, NodeId to, double start, double free, double arrival, double complete) {
    CHECK(t.from == from);
    CHECK(t.to == to);
    CHECK(t.start == doctest::Approx(start));
    CHECK(t.sender_free == doctest::Approx(free));
    CHECK(t.arrival == doctest::Approx(arrival));
    CHECK(t.complete == doctest::Approx(complete));
}

}  // namespace

TEST_CASE("simulate: flat broadcast, non-blocking sends overlap on the wire") {
    const Network net = three_hosts();
    Schedule s = one_message({1, 2});
    s.add_transfer(0, 0, 1);
    s.add_transfer(0, 0, 2);
    const Timeline tl = simulate(net, s, ExecModel::nonblocking);
    REQUIRE(tl.transfers.size() == 2);
    check(tl.transfers[0], 0, 1, 0, 1, 5, 7);
    check(tl.transfers[1], 0, 2, 1, 2, 6, 8);
    CHECK(tl.completion == doctest::Approx(8));
}

TEST_CASE("simulate: flat broadcast, blocking sends serialise") {
    const Network net = three_hosts();
    Schedule s = one_message({1, 2});
    s.add_transfer(0, 0, 1);
    s.add_transfer(0, 0, 2);
    const Timeline tl = simulate(net, s, ExecModel::blocking);
    check(tl.transfers[0], 0, 1, 0, 7, 7, 7);
    check(tl.transfers[1], 0, 2, 7, 14, 14, 14);
    CHECK(tl.completion == doctest::Approx(14));
}

TEST_CASE("simulate: a relay sends only after its receive completes") {
    const Network net = three_hosts();
    Schedule s = one_message({1, 2});
    s.add_transfer(0, 0, 1);
    s.add_transfer(0, 1, 2);
    const Timeline nb = simulate(net, s, ExecModel::nonblocking);
    check(nb.transfers[1], 1, 2, 7, 8, 12, 14);
    const Timeline bl = simulate(net, s, ExecModel::blocking);
    check(bl.transfers[1], 1, 2, 7, 14, 14, 14);
}

TEST_CASE("simulate: a receiver takes queued messages one at a time, in its list's order") {
    const Network net = three_hosts();
    // Two sources, A and B, each send their own message to C at time 0; both arrive at 5.
    Schedule s("hand", 3, {Message{0, 1000, {2}}, Message{1, 1000, {2}}});
    s.tasks[0] = {{Op::send, 0, 2}};
    s.tasks[1] = {{Op::send, 1, 2}};
    s.tasks[2] = {{Op::recv, 1, 1}, {Op::recv, 0, 0}};
    const Timeline tl = simulate(net, s, ExecModel::nonblocking);
    REQUIRE(tl.transfers.size() == 2);
    CHECK(tl.transfers[0].message == 0);
    CHECK(tl.transfers[0].complete == doctest::Approx(9));  // waits for B's message first
    CHECK(tl.transfers[1].complete == doctest::Approx(7));
    CHECK(tl.completion == doctest::Approx(9));
}

TEST_CASE("simulate: cost-matrix networks give Bhat's times in both models") {
    const Network net = test::costs(test::bhat_eq1());
    Schedule s("hand", 3, {Message{0, 1, {1, 2}}});
    s.add_transfer(0, 0, 2);
    s.add_transfer(0, 2, 1);
    for (ExecModel m : {ExecModel::blocking, ExecModel::nonblocking}) {
        const Timeline tl = simulate(net, s, m);
        CHECK(tl.transfers[0].complete == 995);
        CHECK(tl.transfers[1].complete == 1000);
        CHECK(tl.transfers[0].sender_free == 995);
        CHECK(tl.completion == 1000);
    }
}

TEST_CASE("simulate: exchange that deadlocks when blocking runs when sends do not block") {
    const Network net = three_hosts();
    Schedule s("hand", 3, {Message{0, 1000, {1}}, Message{1, 1000, {0}}});
    s.tasks[0] = {{Op::send, 0, 1}, {Op::recv, 1, 1}};
    s.tasks[1] = {{Op::send, 1, 0}, {Op::recv, 0, 0}};
    CHECK_THROWS_AS((void)simulate(net, s, ExecModel::blocking), InfeasibleSchedule);
    const Timeline tl = simulate(net, s, ExecModel::nonblocking);
    CHECK(tl.completion == doctest::Approx(7));  // arrives at 5, receiver free since 1
}

TEST_CASE("simulate: infeasible schedules are rejected") {
    const Network net = three_hosts();
    SUBCASE("relay before holding") {
        Schedule s = one_message({1, 2});
        s.tasks[0] = {{Op::send, 0, 1}};
        s.tasks[1] = {{Op::send, 0, 2}, {Op::recv, 0, 0}};
        s.tasks[2] = {{Op::recv, 0, 1}};
        CHECK_THROWS_WITH_AS((void)simulate(net, s, ExecModel::nonblocking), doctest::Contains("before it holds"),
                             InfeasibleSchedule);
    }
    SUBCASE("destination never reached") {
        Schedule s = one_message({1, 2});
        s.add_transfer(0, 0, 1);
        CHECK_THROWS_WITH_AS((void)simulate(net, s, ExecModel::blocking), doctest::Contains("never reached"),
                             InfeasibleSchedule);
    }
    SUBCASE("destination reached twice") {
        Schedule s = one_message({1, 2});
        s.add_transfer(0, 0, 1);
        s.add_transfer(0, 0, 2);
        s.add_transfer(0, 1, 2);
        CHECK_THROWS_WITH_AS((void)simulate(net, s, ExecModel::blocking), doctest::Contains("reached twice"),
                             InfeasibleSchedule);
    }
    SUBCASE("send without a receive") {
        Schedule s = one_message({1});
        s.add_transfer(0, 0, 1);
        s.tasks[0].push_back({Op::send, 0, 2});
        CHECK_THROWS_AS((void)simulate(net, s, ExecModel::nonblocking), InfeasibleSchedule);
    }
    SUBCASE("the source receiving its own message") {
        Schedule s = one_message({1});
        s.add_transfer(0, 0, 1);
        s.add_transfer(0, 1, 0);
        CHECK_THROWS_WITH_AS((void)simulate(net, s, ExecModel::nonblocking), doctest::Contains("is the source"),
                             InfeasibleSchedule);
    }
}

TEST_CASE("simulate: messages in flight on one link share it only when asked to") {
    const Network net = three_hosts();
    // Two messages from A, each to B: A's sends start at 0 and 1 (S = 1 each).
    Schedule s("hand", 3, {Message{0, 1000, {1}}, Message{0, 1000, {1}}});
    s.add_transfer(0, 0, 1);
    s.add_transfer(1, 0, 1);
    // Wu's model: each has the whole link: arrivals 5 and 6, B takes them at 5-7 and 7-9.
    const Timeline wu = simulate(net, s, ExecModel::nonblocking);
    REQUIRE(wu.transfers.size() == 2);
    check(wu.transfers[0], 0, 1, 0, 1, 5, 7);
    check(wu.transfers[1], 0, 1, 1, 2, 6, 9);
    // One at a time: the second message's 1 s on the wire waits for the first's to end (at 2),
    // which here is when A is free anyway; with 3000-byte messages it is not.
    const Timeline one = simulate(net, s, ExecModel::nonblocking, LinkUse::one_at_a_time);
    check(one.transfers[1], 0, 1, 1, 2, 6, 9);
    Schedule big("hand", 3, {Message{0, 3000, {1}}, Message{0, 3000, {1}}});
    big.add_transfer(0, 0, 1);
    big.add_transfer(1, 0, 1);
    // 3 s on the wire each: first leaves 1-4, arrives 7; second leaves 4-7 (not 2-5), arrives 10.
    const Timeline shared = simulate(net, big, ExecModel::nonblocking, LinkUse::one_at_a_time);
    check(shared.transfers[0], 0, 1, 0, 1, 7, 9);
    check(shared.transfers[1], 0, 1, 1, 2, 10, 12);
    CHECK(simulate(net, big, ExecModel::nonblocking).completion == doctest::Approx(11));
    CHECK(shared.completion == doctest::Approx(12));
    // Different links never wait for each other.
    Schedule two("hand", 3, {Message{0, 3000, {1, 2}}});
    two.add_transfer(0, 0, 1);
    two.add_transfer(0, 0, 2);
    CHECK(simulate(net, two, ExecModel::nonblocking, LinkUse::one_at_a_time).completion ==
          doctest::Approx(simulate(net, two, ExecModel::nonblocking).completion));
}
