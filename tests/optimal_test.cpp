// The optimal schedule by branch and bound (Bhat §4.2), checked on the paper's worked
// examples and against an independent exhaustive search.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/model/generators.hpp"
#include "hetcast/sched/bhat.hpp"
#include "hetcast/sched/optimal.hpp"
#include "hetcast/sim/simulate.hpp"
#include "support.hpp"

using namespace hetcast;
using test::Edge;

TEST_SUITE_BEGIN("optimal");

namespace {

std::vector<Edge> edges(const Timeline& tl) {
    std::vector<Edge> out;
    for (const auto& t : tl.transfers) out.push_back({t.from, t.to});
    return out;
}

// Plans, checks the schedule's shape and simulates it.
Timeline run_optimal(const Network& net, const PlanRequest& req) {
    const Schedule s = plan_optimal(net, req);
    CHECK(s.algorithm == "optimal");
    REQUIRE(s.messages.size() == 1);
    CHECK(s.messages[0].source == req.root);
    CHECK(s.messages[0].size == req.size);
    CHECK(s.messages[0].dests == req.dests);
    CHECK(s.transfer_count() == req.dests.size());
    return simulate(net, s, req.model);
}

Timeline run_optimal(const Matrix& c, ExecModel model = ExecModel::blocking) {
    const Network net = test::costs(c);
    return run_optimal(net, test::request(net, 0, {}, model));
}

// Every sequence of (holder, unreached destination) transfers, each starting as soon as
// its sender is free, without any pruning: each schedule is met many times over.
class Exhaustive {
public:
    Exhaustive(const Network& net, const PlanRequest& req)
        : net_(net), req_(req), ready_(net.size(), 0.0), holders_{req.root}, todo_(req.dests) {}

    double minimum() {
        visit(0.0);
        return best_;
    }

private:
    void visit(double made) {
        if (todo_.empty()) {
            best_ = std::min(best_, made);
            return;
        }
        for (std::size_t a = 0; a < holders_.size(); ++a) {
            const NodeId i = holders_[a];
            for (std::size_t b = 0; b < todo_.size(); ++b) {
                const NodeId j = todo_[b];
                const StepTimes t = step(net_, req_.model, i, j, req_.size, ready_[i], 0.0);
                const double was = ready_[i];
                ready_[i] = t.sender_free;
                ready_[j] = t.complete;
                todo_.erase(todo_.begin() + static_cast<std::ptrdiff_t>(b));
                holders_.push_back(j);
                visit(std::max(made, t.complete));
                holders_.pop_back();
                todo_.insert(todo_.begin() + static_cast<std::ptrdiff_t>(b), j);
                ready_[j] = 0.0;
                ready_[i] = was;
            }
        }
    }

    const Network& net_;
    const PlanRequest& req_;
    std::vector<double> ready_;
    std::vector<NodeId> holders_;
    std::vector<NodeId> todo_;
    double best_ = std::numeric_limits<double>::infinity();
};

// A parametric network with send and receive overheads, so the non-blocking model differs
// from the blocking one (random_bhat has none).
Network with_overheads(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const auto u = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
    Matrix lat(n, std::vector<double>(n, 0.0)), bw(n, std::vector<double>(n, 1.0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            lat[i][j] = 1e-3 * u();
            bw[i][j] = 1e6 + 1e8 * u();
        }
    }
    std::vector<Overhead> send(n), recv(n);
    for (auto& o : send) o = {1e-3 * u(), 1e-8 * u()};
    for (auto& o : recv) o = {1e-3 * u(), 1e-8 * u()};
    return Network::parametric(test::p_names(n), std::move(lat), std::move(bw), std::move(send), std::move(recv));
}

}  // namespace

TEST_CASE("optimal: eq. 1, P0→P1→P2 takes 20") {
    for (ExecModel m : {ExecModel::blocking, ExecModel::nonblocking}) {
        const Timeline tl = run_optimal(test::bhat_eq1(), m);
        CHECK(edges(tl) == std::vector<Edge>{{0, 1}, {1, 2}});
        CHECK(tl.completion == 20);
    }
}

TEST_CASE("optimal: eq. 2, GUSTO takes 296, the lower bound") {
    // P0→P3 (39); then P3→P2 (39 + 257 = 296) while P0→P1 (39 + 156 = 195).
    const Timeline tl = run_optimal(test::bhat_eq2());
    CHECK(edges(tl) == std::vector<Edge>{{0, 3}, {0, 1}, {3, 2}});
    CHECK(tl.completion == 296);
}

TEST_CASE("optimal: eq. 10 (ADSL), P0→P3 then P3 to the others takes 2.4") {
    // Any other first send leaves P0 busy until 2 and its next send ends at 4 or later.
    const Timeline tl = run_optimal(test::bhat_eq10());
    const std::vector<Edge> e = edges(tl);
    REQUIRE(e.size() == 4);
    CHECK(e[0] == Edge{0, 3});
    for (std::size_t k = 1; k < e.size(); ++k) CHECK(e[k].from == 3);  // in any order
    CHECK(tl.completion == doctest::Approx(2.4));
}

TEST_CASE("optimal: eq. 11 beats the paper's 2.2 + 2ε by keeping P0 busy") {
    // The paper's optimum P0→P3→P4, then P4→P1 and P4→P2, takes 2.2 + 2ε. But P0 is free
    // from 1.1 on: P0→P1 ends at 2.1 while P4 serves P2 alone, 2.2 + ε. P4 can be reached no
    // earlier than 2.2 (only P3 reaches it cheaply), and P4 then serves one node by 2.2 + ε.
    const double e = test::eq11_eps;
    const Network net = test::costs(test::bhat_eq11());
    Schedule paper("paper", 5, {Message{0, 1e6, {1, 2, 3, 4}}});
    paper.add_transfer(0, 0, 3);
    paper.add_transfer(0, 3, 4);
    paper.add_transfer(0, 4, 1);
    paper.add_transfer(0, 4, 2);
    CHECK(simulate(net, paper, ExecModel::blocking).completion == doctest::Approx(2.2 + 2 * e));

    const Timeline tl = run_optimal(net, test::request(net));
    CHECK(tl.completion == doctest::Approx(2.2 + e));
    CHECK(tl.completion < 2.2 + 2 * e);
}

TEST_CASE("optimal: eq. 5, the root sends to everyone in turn: 10·|D|") {
    for (std::size_t n : {2u, 4u, 6u, 10u}) {
        Matrix c(n, std::vector<double>(n, 100));
        for (std::size_t j = 0; j < n; ++j) c[0][j] = 10;
        CHECK(run_optimal(c).completion == doctest::Approx(10.0 * static_cast<double>(n - 1)));
    }
}

TEST_CASE("optimal: relays only through participants") {
    // P1 sits between P0 and P2 but is not a destination.
    const Network net = test::costs({{0, 1, 100}, {50, 0, 1}, {50, 50, 0}});
    const Timeline tl = run_optimal(net, test::request(net, 0, {2}));
    CHECK(edges(tl) == std::vector<Edge>{{0, 2}});
    CHECK(tl.completion == 100);
}

TEST_CASE("optimal: a root alone, and a non-zero root") {
    const Network one = test::costs({{0}});
    const Timeline empty = run_optimal(one, test::request(one));
    CHECK(empty.transfers.empty());
    CHECK(empty.completion == 0);

    // Eq. 1 from P2: P2 serves both in turn, 5 + 70; a relay costs 2000 (via P1) or
    // 70 + 10 (via P0).
    const Network net = test::costs(test::bhat_eq1());
    const Timeline tl = run_optimal(net, test::request(net, 2));
    CHECK(tl.completion == 75);
    for (const auto& t : tl.transfers) CHECK(t.from == 2);
}

TEST_CASE("optimal: more than 10 participants is an input error") {
    const Network net = random_costs(11, 1, {1, 10});
    CHECK_THROWS_WITH_AS(plan_optimal(net, test::request(net)),
                         "optimal: 11 participants, at most 10 (use ecef-la or another heuristic)", InputError);
    // A multicast among 10 of the 11 nodes is fine.
    const PlanRequest req = test::request(net, 3, {0, 1, 2, 4, 5, 6, 7, 8, 10});
    CHECK(run_optimal(net, req).completion > 0);
}

TEST_CASE("optimal: agrees with an exhaustive search on random instances") {
    std::mt19937_64 rng(2024);
    int checked = 0;
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        const std::size_t n = 2 + seed % 6;  // 2..7 nodes
        const Network nets[] = {random_costs(n, seed, {1, 100}), random_costs(n, seed, {90, 100}),
                                random_bhat(n, seed), with_overheads(n, seed)};
        for (const Network& net : nets) {
            for (ExecModel m : {ExecModel::blocking, ExecModel::nonblocking}) {
                // Broadcast on small networks; otherwise a random root and destination subset
                // of at most 5, so there are at most 6 participants.
                const auto root = static_cast<NodeId>(n <= 6 ? 0 : rng() % n);
                std::vector<NodeId> dests;
                if (n > 6 || seed % 3 == 0) {
                    for (NodeId i = 0; i < n; ++i) {
                        if (i != root && dests.size() < 5 && rng() % 3 != 0) dests.push_back(i);
                    }
                    if (dests.empty()) dests.push_back(root == 0 ? 1 : 0);
                }
                const PlanRequest req = test::request(net, root, dests, m);
                CAPTURE(seed);
                CAPTURE(n);
                CAPTURE(static_cast<int>(m));
                const double want = Exhaustive(net, req).minimum();
                CHECK(run_optimal(net, req).completion == want);
                ++checked;
            }
        }
    }
    CHECK(checked >= 200);
}

TEST_CASE("optimal: never worse than the heuristics on 10 nodes") {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        for (ExecModel m : {ExecModel::blocking, ExecModel::nonblocking}) {
            for (const Network& net : {random_bhat(10, seed), with_overheads(10, seed)}) {
                const PlanRequest req = test::request(net, 0, {}, m);
                const double best = run_optimal(net, req).completion;
                for (auto algo : {plan_fnf, plan_fef, plan_ecef, plan_ecef_la}) {
                    CHECK(best <= simulate(net, algo(net, req), m).completion);
                }
            }
        }
    }
}

TEST_SUITE_END();
