// Bhat, Raghavendra, Prasanna (paper 001): the worked examples of §2, §3.1 and §6.
#include <doctest/doctest.h>

#include "hetcast/sched/bhat.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/simulate.hpp"
#include "support.hpp"

using namespace hetcast;
using test::Edge;

namespace {

// The transfers in the order the timeline starts them.
std::vector<Edge> edges(const Timeline& tl) {
    std::vector<Edge> out;
    for (const auto& t : tl.transfers) out.push_back({t.from, t.to});
    return out;
}

struct Run {
    std::vector<Edge> edges;
    double completion;
};

Run run(Schedule (*algo)(const Network&, const PlanRequest&), const Matrix& c,
        ExecModel model = ExecModel::blocking) {
    const Network net = test::costs(c);
    const Timeline tl = simulate(net, algo(net, test::request(net, 0, {}, model)), model);
    return {edges(tl), tl.completion};
}

}  // namespace

TEST_CASE("bhat: eq. 1, modified FNF takes 1000 where the optimum takes 20") {
    // T_i = mean send cost to the other nodes: 502.5, 1005, 37.5. The paper divides by N
    // (335, 670, 25); either way P2 has the lowest T and is the first receiver.
    for (ExecModel m : {ExecModel::blocking, ExecModel::nonblocking}) {
        const Run fnf = run(plan_fnf, test::bhat_eq1(), m);
        CHECK(fnf.edges == std::vector<Edge>{{0, 2}, {2, 1}});
        CHECK(fnf.completion == 1000);
    }
    for (auto algo : {plan_fef, plan_ecef, plan_ecef_la}) {
        const Run r = run(algo, test::bhat_eq1());
        CHECK(r.edges == std::vector<Edge>{{0, 1}, {1, 2}});
        CHECK(r.completion == 20);
    }
}

TEST_CASE("bhat: eq. 2, the GUSTO testbed (Figure 3's FEF tree)") {
    // FEF: P0→P3 (39), P3→P1 (39+115 = 154), P1→P2 (154+163 = 317).
    for (auto algo : {plan_fef, plan_ecef, plan_ecef_la}) {
        const Run r = run(algo, test::bhat_eq2());
        CHECK(r.edges == std::vector<Edge>{{0, 3}, {3, 1}, {1, 2}});
        CHECK(r.completion == 317);
    }
    // FNF: T = 173.3, 144.7, 248.3, 137 → receivers P3, P1, P2; P2 is served by P0 at 39 + 325.
    const Run fnf = run(plan_fnf, test::bhat_eq2());
    CHECK(fnf.edges == std::vector<Edge>{{0, 3}, {0, 2}, {3, 1}});  // both start at 39
    CHECK(fnf.completion == 364);
    const Network net = test::costs(test::bhat_eq2());
    CHECK(bhat_lower_bound(net, 0, {1, 2, 3}, 1) == 296);  // ERT(P2) = 39 + 257 through P3
}

TEST_CASE("bhat: eq. 10 (ADSL), ECEF misses the fast relay, look-ahead finds it") {
    const Run ecef = run(plan_ecef, test::bhat_eq10());
    CHECK(ecef.edges == std::vector<Edge>{{0, 1}, {0, 2}, {0, 4}, {0, 3}});
    // The paper (§6) says 8.4 for this schedule; its own steps add up to 2 + 2 + 2 + 2.1 = 8.1,
    // the figure §6 itself quotes later for the same star. We trust the schedule.
    CHECK(ecef.completion == doctest::Approx(8.1));
    CHECK(ecef.completion != doctest::Approx(8.4));

    const Run la = run(plan_ecef_la, test::bhat_eq10());
    CHECK(la.edges == std::vector<Edge>{{0, 3}, {3, 1}, {3, 2}, {3, 4}});
    CHECK(la.completion == doctest::Approx(2.4));

    const Run fef = run(plan_fef, test::bhat_eq10());
    CHECK(fef.completion == doctest::Approx(8.1));
}

TEST_CASE("bhat: eq. 11, look-ahead follows the chain and takes 4.1") {
    // The paper's chain P0→P1→P2→P3→P4 and ours differ only in a tie at step 2: P0→P2 and
    // P1→P2 both score R + C + L = 1 + 1 + 1 = 3; the lower sender wins. Same 4.1 either way.
    const Run la = run(plan_ecef_la, test::bhat_eq11());
    CHECK(la.edges == std::vector<Edge>{{0, 1}, {0, 2}, {2, 3}, {3, 4}});
    CHECK(la.completion == doctest::Approx(4.1));
    const Run ecef = run(plan_ecef, test::bhat_eq11());
    CHECK(ecef.completion == doctest::Approx(4.1));
}

TEST_CASE("bhat: eq. 5, the lower bound can be |D| times below the optimum") {
    const std::size_t n = 6;
    Matrix c(n, std::vector<double>(n, 100));
    for (std::size_t j = 0; j < n; ++j) c[0][j] = 10;
    const Network net = test::costs(c);
    CHECK(bhat_lower_bound(net, 0, {1, 2, 3, 4, 5}, 1) == 10);
    CHECK(run(plan_ecef, c).completion == 50);
}

TEST_CASE("bhat: multicast picks receivers among the destinations; ecef-relay may route around") {
    // P1 is not a destination but sits between P0 and P2.
    const Network net = test::costs({{0, 1, 100}, {50, 0, 1}, {50, 50, 0}});
    const PlanRequest req = test::request(net, 0, {2});
    const Timeline direct = simulate(net, plan_ecef(net, req), req.model);
    CHECK(edges(direct) == std::vector<Edge>{{0, 2}});
    CHECK(direct.completion == 100);
    const Timeline relay = simulate(net, plan_ecef_relay(net, req), req.model);
    CHECK(edges(relay) == std::vector<Edge>{{0, 1}, {1, 2}});
    CHECK(relay.completion == 2);
    CHECK(bhat_lower_bound(net, 0, {2}, 1) == 2);
}

TEST_CASE("bhat: the non-blocking model lets a fast sender start its next send early") {
    // Parametric: S = 1 s for the root, wire 10 s to everyone, no receive overhead.
    const std::size_t n = 4;
    Matrix lat(n, std::vector<double>(n, 10)), bw(n, std::vector<double>(n, 1e12));
    std::vector<Overhead> send(n, {1, 0}), recv(n);
    const Network net = Network::parametric(test::p_names(n), lat, bw, send, recv);
    const Timeline nb = simulate(net, plan_ecef(net, test::request(net, 0, {}, ExecModel::nonblocking)),
                                 ExecModel::nonblocking);
    CHECK(nb.completion == doctest::Approx(13));  // root sends at 0, 1, 2; each lands 11 later
    const Timeline bl = simulate(net, plan_ecef(net, test::request(net, 0, {}, ExecModel::blocking)),
                                 ExecModel::blocking);
    CHECK(bl.completion == doctest::Approx(22));  // 11, then two holders send in parallel
}
