// crossing_paces(): the transfers of a schedule that cross a FIFO uplink other jobs use
// too are held to their part of it (docs/model.md, "Pacing across FIFO uplinks").
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/pace.hpp"
#include "support.hpp"
#include "../lib/src/runtime/peer/peer_pace.hpp"

using namespace hetcast;

namespace {

constexpr double headroom = 0.95;

/// The FIFO uplink directions (resource indices) a transfer crosses, finite ones only.
std::vector<std::size_t> uplinks(const Network& net, NodeId from, NodeId to) {
    const auto fifo = fifo_resources(net);
    const auto caps = resource_capacities(net);
    std::vector<std::size_t> out;
    for (std::size_t r : flow_path(net, from, to).resources) {
        if (r >= 3 * net.size() && fifo[r] && std::isfinite(caps[r])) out.push_back(r);
    }
    return out;
}

const Pace* pace_of(const std::vector<Pace>& paces, const Transfer& t) {
    for (const Pace& p : paces) {
        if (p.message == t.message && p.from == t.from && p.to == t.to) return &p;
    }
    return nullptr;
}

Network random_net(std::mt19937_64& rng) {
    const std::size_t n = 4 + rng() % 9;
    std::uniform_real_distribution<double> rate(1e6, 1e8);
    std::vector<std::string> names;
    Matrix lat(n, std::vector<double>(n, 0)), bw(n, std::vector<double>(n));
    for (std::size_t i = 0; i < n; ++i) {
        names.push_back("n" + std::to_string(i));
        for (std::size_t j = 0; j < n; ++j) bw[i][j] = rate(rng);
    }
    Network net = Network::parametric(names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
    test::add_random_capacities(rng, net, rate);
    return net;
}

Schedule random_plan(std::mt19937_64& rng, const Network& net) {
    const NodeId root = static_cast<NodeId>(rng() % net.size());
    for (;;) {
        const auto& algos = algorithms();
        const Algorithm& a = algos[rng() % algos.size()];
        const PlanRequest req = make_request(net, root, {}, 1e5 + static_cast<double>(rng() % 10'000'000), ExecModel::nonblocking);
        if (a.name == "auto" || a.name == "optimal" || (a.applies && !a.applies(net, req))) continue;
        Schedule s = a.plan(net, req);
        if (rng() % 2) s = with_cut_through(s, 256 << 10);
        return s;
    }
}

}  // namespace

TEST_CASE("paces: a broadcast's crossing is held to its share of the uplink the other jobs cross, each way") {
    const Network net = test::alternate_two_subnets(8, "h", 25e6, 5e6, 0);
    const Schedule s = find_algorithm("lcf").plan(net, make_request(net, 0, {}, 4e6, ExecModel::nonblocking));
    const Timeline alone = simulate_flows(net, s);
    std::size_t crossing = 0;
    for (const Transfer& t : alone.transfers) crossing += net.subnet_of()[t.from] != net.subnet_of()[t.to];
    REQUIRE(crossing == 1);  // lcf crosses each uplink once
    CHECK(crossing_paces(net, alone, {}).empty());
    // Three other jobs cross out of h0's subnet: the crossing gets a quarter of the uplink.
    const std::vector<BackgroundFlow> same_way{{2, 1, 4e6, 0}, {4, 3, 4e6, 0}, {6, 5, 4e6, 0}};
    const auto paced = crossing_paces(net, simulate_flows(net, s, same_way), same_way, headroom);
    REQUIRE(paced.size() == 1);
    CHECK(net.subnet_of()[paced[0].from] != net.subnet_of()[paced[0].to]);
    CHECK(paced[0].rate == doctest::Approx(5e6 * headroom / 4));
    // Others only come the other way: this crossing is alone in its direction, held just under it.
    const std::vector<BackgroundFlow> other_way{{1, 2, 4e6, 0}, {3, 4, 4e6, 0}};
    const auto alone_way = crossing_paces(net, simulate_flows(net, s, other_way), other_way, headroom);
    REQUIRE(alone_way.size() == 1);
    CHECK(alone_way[0].rate == doctest::Approx(5e6 * headroom));
    // Other jobs inside the subnets only: no uplink is shared, nothing is paced.
    const std::vector<BackgroundFlow> inside{{2, 4, 4e6, 0}, {1, 3, 4e6, 0}};
    CHECK(crossing_paces(net, simulate_flows(net, s, inside), inside, headroom).empty());
}

TEST_CASE("paces: on fair uplinks (per-flow queues) nothing is paced") {
    Network net = test::alternate_two_subnets(8, "h", 25e6, 5e6, 0);
    Capacities c = *net.capacities();
    c.queues = Queues::fair;
    net.set_capacities(c);
    const Schedule s = find_algorithm("lcf").plan(net, make_request(net, 0, {}, 4e6, ExecModel::nonblocking));
    const std::vector<BackgroundFlow> beside{{2, 1, 4e6, 0}};
    CHECK(crossing_paces(net, simulate_flows(net, s, beside), beside).empty());
}

TEST_CASE("paces, random networks and plans: only crossings of shared FIFO uplinks, every one of them, and never more than their part") {
    std::mt19937_64 rng(20261127);
    std::size_t paced_total = 0, checked = 0;
    for (int trial = 0; trial < 300; ++trial) {
        CAPTURE(trial);
        const Network net = random_net(rng);
        const Schedule s = random_plan(rng, net);
        std::vector<BackgroundFlow> beside;
        const std::size_t k = rng() % 5;
        for (std::size_t i = 0; i < k; ++i) {
            const NodeId a = static_cast<NodeId>(rng() % net.size());
            const NodeId b = static_cast<NodeId>((a + 1 + rng() % (net.size() - 1)) % net.size());
            beside.push_back({a, b, 1e6 + static_cast<double>(rng() % 5'000'000), 0});
        }
        const Timeline tl = simulate_flows(net, s, beside);
        const auto paces = crossing_paces(net, tl, beside, headroom);
        paced_total += paces.size();
        const auto caps = resource_capacities(net);
        const std::size_t subnets = (caps.size() - 3 * net.size()) / 2;
        std::vector<std::size_t> beside_on(caps.size(), 0);
        std::vector<char> busy(subnets, 0);
        for (const auto& f : beside) {
            for (std::size_t r : uplinks(net, f.from, f.to)) {
                ++beside_on[r];
                busy[(r - 3 * net.size()) % subnets] = 1;
            }
        }
        for (const Transfer& t : tl.transfers) {
            bool shared = false;
            for (std::size_t r : uplinks(net, t.from, t.to)) shared = shared || busy[(r - 3 * net.size()) % subnets];
            const Pace* p = pace_of(paces, t);
            CHECK((p != nullptr) == shared);
            if (p) {
                CHECK(std::isfinite(p->rate));
                CHECK(p->rate > 0);
            }
        }
        // At every transfer's start, the paced transfers on each shared uplink direction take
        // at most their part of it: the active ones' share beside one per other job's flow.
        for (const Transfer& at : tl.transfers) {
            std::vector<double> sum(caps.size(), 0);
            std::vector<std::size_t> active(caps.size(), 0);
            for (const Transfer& t : tl.transfers) {
                if (!(t.start <= at.start && at.start < std::max(t.start, t.arrival))) continue;
                const Pace* p = pace_of(paces, t);
                for (std::size_t r : uplinks(net, t.from, t.to)) {
                    ++active[r];
                    if (p) sum[r] += p->rate;
                }
            }
            for (std::size_t r = 3 * net.size(); r < caps.size(); ++r) {
                if (sum[r] == 0) continue;
                ++checked;
                const double part = caps[r] * headroom * static_cast<double>(active[r]) /
                                    static_cast<double>(active[r] + beside_on[r]);
                CHECK(sum[r] <= part * (1 + 1e-9));
            }
        }
    }
    // The property was exercised, not vacuous.
    CHECK(paced_total > 100);
    CHECK(checked > 100);
}

TEST_CASE("paces now: the share follows the other jobs' flows as they come and go, and is lifted when none is left") {
    const Network net = test::alternate_two_subnets(8, "h", 25e6, 5e6, 0);
    // Two crossings of this job out of h0's subnet, one into it.
    const std::vector<Transfer> running{{0, 0, 1, 0, 0, 0, 0}, {1, 2, 3, 0, 0, 0, 0}, {2, 5, 4, 0, 0, 0, 0}};
    const auto rate_of = [](const std::vector<Pace>& ps, MessageId m) {
        for (const Pace& p : ps) {
            if (p.message == m) return p.rate;
        }
        return -1.0;
    };
    // Nobody beside: every crossing listed, none held.
    const auto idle = current_paces(net, running, {}, headroom);
    REQUIRE(idle.size() == 3);
    for (const Pace& p : idle) CHECK(p.rate == 0);
    // Two other jobs out of subnet 0: four flows share that uplink. The crossing into subnet
    // 0 is alone both ways it goes (out of 1, into 0), so it is held just under the uplink.
    const std::vector<BackgroundFlow> two_out{{4, 5, 1e6, 0}, {6, 7, 1e6, 0}};
    const auto now = current_paces(net, running, two_out, headroom);
    CHECK(rate_of(now, 0) == doctest::Approx(5e6 * headroom / 4));
    CHECK(rate_of(now, 1) == doctest::Approx(5e6 * headroom / 4));
    CHECK(rate_of(now, 2) == doctest::Approx(5e6 * headroom / 1));
    // One crossing of this job is through: the other gets a third.
    const auto later = current_paces(net, {running[0], running[2]}, two_out, headroom);
    CHECK(rate_of(later, 0) == doctest::Approx(5e6 * headroom / 3));
    // Without capacities nothing is listed.
    CHECK(current_paces(Network::from_costs({"a", "b"}, {{0, 1}, {1, 0}}), {{0, 0, 1, 0, 0, 0, 0}}, two_out).empty());
}

TEST_CASE("crossing pacer: each sender is told only what changed, its crossings lifted when the others are gone") {
    const Network net = test::alternate_two_subnets(8, "h", 25e6, 5e6, 0);
    const Schedule s = find_algorithm("lcf").plan(net, make_request(net, 0, {}, 4e6, ExecModel::nonblocking));
    const std::vector<BackgroundFlow> three{{2, 1, 4e6, 0}, {4, 3, 4e6, 0}, {6, 5, 4e6, 0}};
    const Timeline tl = simulate_flows(net, s, three);
    const auto planned = crossing_paces(net, tl, three, headroom);
    REQUIRE(planned.size() == 1);
    detail::CrossingPacer pacer(net, tl, planned);
    CHECK(pacer.needed());
    // The same three flows as planned: nothing to tell.
    CHECK(pacer.update(three, {}).empty());
    // One has ended: its sender is told a third of the uplink.
    auto told = pacer.update({three[0], three[1]}, {});
    REQUIRE(told.size() == 1);
    const auto& [sender, list] = *told.begin();
    CHECK(sender == net.name(planned[0].from));
    REQUIRE(list.size() == 1);
    CHECK(list[0].to == net.name(planned[0].to));
    CHECK(list[0].rate == doctest::Approx(5e6 * headroom / 3));
    // All gone: lifted (0), once.
    told = pacer.update({}, {});
    REQUIRE(told.size() == 1);
    CHECK(told.begin()->second.at(0).rate == 0);
    CHECK(pacer.update({}, {}).empty());
    // Its crossing delivered: nothing more is said about it, whatever runs beside.
    CHECK(pacer.update(three, {{planned[0].message, net.name(planned[0].to)}}).empty());
    // A plan that stays inside its subnet has nothing to keep.
    const Schedule local = find_algorithm("flat").plan(net, make_request(net, 0, {2, 4}, 4e6, ExecModel::nonblocking));
    CHECK_FALSE(detail::CrossingPacer(net, simulate_flows(net, local, three), {}).needed());
}
