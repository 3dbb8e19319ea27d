// crossing_paces(): the transfers of a schedule that cross a FIFO uplink other jobs use
// too are held to their part of it (docs/model.md, "Pacing across FIFO uplinks").
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sched/wu.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/pace.hpp"
#include "netlab_networks.hpp"
#include "support.hpp"
#include "../lib/src/runtime/peer/peer_pace.hpp"

using namespace hetcast;

namespace {

constexpr double headroom = 0.95;

/// The links (resource indices) a transfer crosses: NICs both ways and uplinks, no disk.
std::vector<std::size_t> links(const Network& net, NodeId from, NodeId to) {
    const std::size_t n = net.size();
    std::vector<std::size_t> out;
    for (std::size_t r : flow_path(net, from, to).resources) {
        if (r < 2 * n || r >= 3 * n) out.push_back(r);
    }
    return out;
}

/// The link that carries the ACKs of `r`'s flows.
std::size_t reverse(const Network& net, std::size_t r) {
    const std::size_t n = net.size(), subnets = (resource_capacities(net).size() - 3 * n) / 2;
    if (r < n) return n + r;
    if (r < 2 * n) return r - n;
    return r < 3 * n + subnets ? r + subnets : r - subnets;
}

/// Whether a link with `k` flows at once may be paced: a finite FIFO other than a host's
/// egress, and for a host's ingress port only with two flows or more.
bool paceable(const Network& net, std::size_t r, std::size_t k) {
    const std::size_t n = net.size();
    if (r < n || !fifo_resources(net)[r] || !std::isfinite(resource_capacities(net)[r])) return false;
    return r >= 3 * n || k >= 2;
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

TEST_CASE("paces, random networks and plans: only crossings of shared FIFO uplinks (other jobs', or its own both ways at once), every one of them, and never more than their part") {
    std::mt19937_64 rng(20261127);
    std::size_t paced_total = 0, checked = 0, two_way_total = 0;
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
        const auto end = [](const Transfer& t) { return std::max(t.start, t.arrival); };
        const auto on = [&](const Transfer& t, std::size_t r) {
            const auto l = links(net, t.from, t.to);
            return std::find(l.begin(), l.end(), r) != l.end();
        };
        // The most transfers on a link at once while `t` runs (at its start or another's
        // start within it), and whether some pair is on a link and its reverse at once.
        const auto most_during = [&](const Transfer& t, std::size_t r) {
            std::size_t most = 0;
            for (const Transfer& x : tl.transfers) {
                const double at = x.start;
                if (!(at == t.start || (t.start < at && at < end(t)))) continue;
                // Pairs, not transfers: a pair's transfers go one after another on its lane.
                std::set<std::pair<NodeId, NodeId>> pairs;
                for (const Transfer& b : tl.transfers) {
                    if (on(b, r) && b.start <= at && at < end(b)) pairs.insert({b.from, b.to});
                }
                most = std::max(most, pairs.size());
            }
            return most;
        };
        std::vector<std::size_t> beside_on(caps.size(), 0);
        std::vector<char> busy(caps.size(), 0);
        for (const auto& f : beside) {
            for (std::size_t r : links(net, f.from, f.to)) {
                ++beside_on[r];
                // At planning, other jobs make only uplinks busy (hosts' ports as they run).
                for (std::size_t x : {r, reverse(net, r)}) busy[x] = busy[x] || x >= 3 * net.size();
            }
        }
        for (const Transfer& a : tl.transfers) {
            for (const Transfer& b : tl.transfers) {
                if (std::max(a.start, b.start) >= std::min(end(a), end(b))) continue;
                for (std::size_t r : links(net, a.from, a.to)) {
                    if (on(b, reverse(net, r)) && !busy[r]) {
                        busy[r] = 1;
                        ++two_way_total;
                    }
                }
            }
        }
        const auto k_of = [&](const Transfer& t, std::size_t r) { return std::max<std::size_t>(most_during(t, r), 1) + beside_on[r]; };
        // Which transfers may ever be paced: those on a FIFO uplink or a port others may share.
        const auto maybe = may_be_paced(net, tl.transfers);
        REQUIRE(maybe.size() == tl.transfers.size());
        for (std::size_t i = 0; i < maybe.size(); ++i) {
            const auto l = links(net, tl.transfers[i].from, tl.transfers[i].to);
            CHECK((maybe[i] != 0) == std::any_of(l.begin(), l.end(), [&](std::size_t r) { return paceable(net, r, 2); }));
            if (pace_of(paces, tl.transfers[i])) CHECK(maybe[i]);
        }
        for (const Transfer& t : tl.transfers) {
            bool listed = false, shared = false;
            for (std::size_t r : links(net, t.from, t.to)) {
                if (!paceable(net, r, k_of(t, r))) continue;
                listed = true;
                shared = shared || busy[r];
            }
            const Pace* p = pace_of(paces, t);
            CHECK((p != nullptr) == (listed && shared));
            if (p) {
                CHECK(std::isfinite(p->rate));
                CHECK(p->rate > 0);
            }
        }
        // At every transfer's start, the paced transfers on each link they are paced on take
        // at most their part of it: the active ones' share beside one per other job's flow.
        // A link a transfer alone uses, one way, sets no pace (TCP finds its rate there).
        for (const Transfer& at : tl.transfers) {
            // Per link, the pairs active and each pair's highest pace (one lane, one send at a time).
            std::vector<std::map<std::pair<NodeId, NodeId>, double>> lane(caps.size());
            for (const Transfer& t : tl.transfers) {
                if (!(t.start <= at.start && at.start < end(t))) continue;
                const Pace* p = pace_of(paces, t);
                for (std::size_t r : links(net, t.from, t.to)) {
                    double& pace = lane[r][{t.from, t.to}];
                    if (p && paceable(net, r, k_of(t, r)) && (k_of(t, r) > 1 || busy[r])) pace = std::max(pace, p->rate);
                }
            }
            std::vector<double> sum(caps.size(), 0);
            std::vector<std::size_t> active(caps.size(), 0);
            for (std::size_t r = 0; r < caps.size(); ++r) {
                active[r] = lane[r].size();
                for (const auto& [pair, pace] : lane[r]) sum[r] += pace;
            }
            for (std::size_t r = 0; r < caps.size(); ++r) {
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
    CHECK(two_way_total > 10);
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
    REQUIRE(net.subnet_of()[0] == net.subnet_of()[2]);
    REQUIRE(net.subnet_of()[4] == net.subnet_of()[0]);
    // Nobody beside, but the job crosses both uplinks both ways at once: each crossing is
    // held to its share of the uplinks it crosses.
    const auto both_ways = current_paces(net, running, {}, headroom);
    REQUIRE(both_ways.size() == 3);
    CHECK(rate_of(both_ways, 0) == doctest::Approx(5e6 * headroom / 2));
    CHECK(rate_of(both_ways, 1) == doctest::Approx(5e6 * headroom / 2));
    CHECK(rate_of(both_ways, 2) == doctest::Approx(5e6 * headroom));
    // One way only, nobody beside: every crossing listed, none held.
    const auto idle = current_paces(net, {running[0], running[1]}, {}, headroom);
    REQUIRE(idle.size() == 2);
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
    // And without the others, the way back still shares the uplink.
    CHECK(rate_of(current_paces(net, {running[0], running[2]}, {}, headroom), 0) == doctest::Approx(5e6 * headroom));
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
    const Pace& cross = planned[0];
    detail::CrossingPacer pacer(net, s, tl, planned);
    CHECK(pacer.needed());
    // What the crossing's sender is told about it: -1 when nothing.
    const auto about = [&](const std::map<std::string, std::vector<SendPace>>& told) {
        const auto it = told.find(net.name(cross.from));
        if (it == told.end()) return -1.0;
        for (const SendPace& p : it->second) {
            if (p.message == cross.message && p.to == net.name(cross.to)) return p.rate;
        }
        return -1.0;
    };
    // The same three flows as planned: nothing to tell about the crossing. The other
    // jobs' flows also enter hosts' ports that this job's flows enter: those are paced now,
    // at their max-min rates (under the ports' capacity).
    // Every host but two that other flows enter holds its message: the job's sends into
    // those two run (their senders hold it), and nothing is delivered to them yet.
    std::set<std::pair<MessageId, std::string>> relays_in;
    for (const Transfer& t : tl.transfers) {
        if (t.to != 3 && t.to != 5) relays_in.insert({t.message, net.name(t.to)});
    }
    const auto first = pacer.update(three, 1e9, relays_in);
    CHECK(about(first) == -1);
    std::size_t ports = 0;
    for (const auto& [sender, list] : first) {
        for (const SendPace& p : list) {
            ports += p.rate > 0 && p.rate <= 25e6 * headroom;
            CHECK_FALSE((sender == net.name(cross.from) && p.to == net.name(cross.to)));
        }
    }
    CHECK(ports > 0);
    // One has ended: the crossing's sender is told a third of the uplink.
    CHECK(about(pacer.update({three[0], three[1]}, 1e9, {})) == doctest::Approx(5e6 * headroom / 3));
    // All gone: lifted (0), once.
    CHECK(about(pacer.update({}, 1e9, {})) == 0);
    CHECK(pacer.update({}, 1e9, {}).empty());
    // Its crossing delivered: nothing more is said about it, whatever runs beside.
    CHECK(about(pacer.update(three, 1e9, {{cross.message, net.name(cross.to)}})) == -1);
    // Before its sender holds the message a transfer does not count: with nothing
    // delivered only the root's sends run.
    detail::CrossingPacer early(net, s, tl, planned);
    for (const auto& [sender, list] : early.update({three[0], three[1]}, 0, {})) {
        for (const SendPace& p : list) {
            bool starts_at_0 = false;
            for (const Transfer& t : tl.transfers) {
                starts_at_0 = starts_at_0 || (net.name(t.from) == sender && net.name(t.to) == p.to && t.message == p.message && t.start <= 0);
            }
            CHECK(starts_at_0);
        }
    }
    // On fair links (per-flow queues everywhere) there is nothing to keep.
    Network fair = net;
    Capacities c = *fair.capacities();
    c.queues = Queues::fair;
    fair.set_capacities(c);
    CHECK_FALSE(detail::CrossingPacer(fair, s, simulate_flows(fair, s, three), {}).needed());
}

TEST_CASE("paces now: a flow held back elsewhere leaves its part of the uplink to the paced one (max-min, not equal shares)") {
    const Network net = test::alternate_two_subnets(8, "h", 25e6, 5e6, 0);
    const std::vector<Transfer> running{{0, 0, 1, 0, 0, 0, 0}};
    // Another job's flow out of subnet 0 too, but held to 1 MB/s by its --bwlimit.
    const std::vector<BackgroundFlow> slow{{2, 3, 4e6, 1e6}};
    const auto now = current_paces(net, running, slow, headroom);
    REQUIRE(now.size() == 1);
    CHECK(now[0].rate == doctest::Approx((5e6 - 1e6) * headroom));
    // Unheld, it takes half: so does this one.
    const auto even = current_paces(net, running, {{2, 3, 4e6, 0}}, headroom);
    CHECK(even.at(0).rate == doctest::Approx(5e6 / 2 * headroom));
}

TEST_CASE("paces: on one switch, flows converging on a host that sends too are held to their share of its port, a chain's hops are not") {
    // Four hosts on one switch (a single subnet, no uplink), ports of 10 MB/s.
    const std::size_t n = 4;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) names.push_back("s" + std::to_string(i));
    Network net = Network::parametric(names, Matrix(n, std::vector<double>(n, 0)), Matrix(n, std::vector<double>(n, 1e7)),
                                      std::vector<Overhead>(n), std::vector<Overhead>(n));
    net.set_subnets({{0, 1, 2, 3}});
    net.set_capacities({std::vector<double>(n, 1e7), std::vector<double>(n, 1e7), std::vector<double>(n, INFINITY), {INFINITY}});
    // Everyone to everyone at once: three flows into every port while its host sends.
    std::vector<Transfer> all;
    for (NodeId a = 0; a < n; ++a) {
        for (NodeId b = 0; b < n; ++b) {
            if (a != b) all.push_back({a, a, b, 0, 0, 0, 0});
        }
    }
    const auto now = current_paces(net, all, {}, headroom);
    REQUIRE(now.size() == all.size());
    for (const Pace& p : now) CHECK(p.rate == doctest::Approx(1e7 / 3 * headroom));
    // A chain 0 → 1 → 2 → 3: one flow into each port, nothing is paced (each listed, so
    // that a pace it had is lifted).
    const auto chain = current_paces(net, {{0, 0, 1, 0, 0, 0, 0}, {0, 1, 2, 0, 0, 0, 0}, {0, 2, 3, 0, 0, 0, 0}}, {}, headroom);
    CHECK(chain.size() == 3);
    for (const Pace& p : chain) CHECK(p.rate == 0);
    // Planned: an all-to-all exchange predicted on the flow model is paced the same way,
    // and the job's pacer keeps it as it runs.
    const Schedule s = plan_wrp(net, test::all_to_all(n, 1e6));
    const Timeline tl = simulate_flows(net, s);
    const auto planned = crossing_paces(net, tl, {}, headroom);
    CHECK_FALSE(planned.empty());
    for (const Pace& p : planned) CHECK(p.rate <= 1e7 / 2 * headroom * (1 + 1e-9));
    detail::CrossingPacer pacer(net, s, tl, {});
    REQUIRE(pacer.needed());
    const auto told = pacer.update({}, 1e9, {});
    // With nothing delivered yet, what runs is each sender's sends before its first receive.
    std::set<std::pair<NodeId, NodeId>> first_sends;
    for (NodeId v = 0; v < n; ++v) {
        for (const Task& t : s.tasks[v]) {
            if (t.op == Op::recv) break;
            first_sends.insert({v, t.peer});
        }
    }
    REQUIRE(first_sends.size() >= n);
    std::size_t paced = 0;
    for (const auto& [sender, list] : told) {
        for (const SendPace& p : list) {
            CHECK(p.rate > 0);
            CHECK(p.rate <= 1e7 / 3 * headroom * (1 + 1e-9));
            ++paced;
        }
    }
    CHECK(paced == first_sends.size());  // one per pair: a pair's later messages wait on its lane
}

namespace {

/// MPI's pairwise exchange: in round r every node i sends its message to i + r and then
/// receives from i − r, so a round's sends wait for the receives of the round before.
Schedule pairwise_exchange(std::size_t n, double size) {
    const PatternRequest req = test::all_to_all(n, size);
    Schedule s("pairwise", n, req.messages);
    for (std::size_t r = 1; r < n; ++r) {
        for (NodeId i = 0; i < n; ++i) s.tasks[i].push_back({Op::send, i, static_cast<NodeId>((i + r) % n)});
        for (NodeId i = 0; i < n; ++i) {
            const auto from = static_cast<NodeId>((i + n - r) % n);
            s.tasks[i].push_back({Op::recv, from, from});
        }
    }
    return s;
}

}  // namespace

// A run behind its prediction: the pacer counts what the senders have reached, not what
// the prediction had started by now. The pairwise exchange on one switch sends one flow into
// each port per round; counted by predicted start, every round would be running at once
// late in the job, and each port held to a share of rounds that had not begun (on netlab's
// one-switch that took 12.5 s, 3.2x the bound; counted by what was reached, 7.7-8.8 s).
TEST_CASE("crossing pacer: a run behind its prediction is not held to shares of transfers its senders have not reached") {
    const std::size_t n = 6;
    const Network net = test::lab_network({{1000, test::lab_hosts("h", n)}});
    const Schedule s = pairwise_exchange(n, 4e6);
    const Timeline tl = simulate_flows(net, s);
    detail::CrossingPacer pacer(net, s, tl, crossing_paces(net, tl, {}, headroom));
    // Long after every predicted start, nothing delivered: round 1 alone runs, one flow per port.
    for (const auto& [sender, list] : pacer.update({}, 1e9, {})) {
        for (const SendPace& p : list) CHECK(p.rate == 0);
    }
    // Round 1 delivered everywhere: round 2 runs, still one flow per port.
    std::set<std::pair<MessageId, std::string>> done;
    for (const Transfer& t : tl.transfers) {
        if ((t.to + n - t.from) % n == 1) done.insert({t.message, net.name(t.to)});
    }
    for (const auto& [sender, list] : pacer.update({}, 1e9, done)) {
        for (const SendPace& p : list) CHECK(p.rate == 0);
    }
}

TEST_CASE("paces: a crossing is not held to a link it alone uses one way (a low reading of it would hold the flow there)") {
    // netlab random --seed 11: the probe read a's 20 Mbit/s uplink as 17; a chain's a4 -> b1,
    // paced because b's uplink also carried the chain's way out of b, was held to the map's
    // 17 Mbit/s and ran at 16.2 of the 19.1 the uplink carries.
    const Network net = test::lab_network({{17, test::lab_hosts("a", 2)}, {80, test::lab_hosts("b", 2)}, {25, test::lab_hosts("c", 1)}});
    const double a_uplink = 0.956 * 17e6 / 8, b_uplink = 0.956 * 80e6 / 8;
    const NodeId a1 = net.id("a1"), b1 = net.id("b1"), b2 = net.id("b2"), c1 = net.id("c1");
    Schedule s("chain", net.size(), {Message{a1, 32 * 1048576.0, {net.id("a2"), b1, b2, c1}}});
    s.add_transfer(0, a1, net.id("a2"));
    s.add_transfer(0, a1, b1);
    s.add_transfer(0, b1, b2);
    s.add_transfer(0, b2, c1);
    s = with_cut_through(s, 256 << 10);
    const auto planned = crossing_paces(net, simulate_flows(net, s), {}, headroom);
    const auto rate_of = [&](const std::vector<Pace>& paces, NodeId from, NodeId to) {
        for (const Pace& p : paces) {
            if (p.from == from && p.to == to) return p.rate;
        }
        return -1.0;
    };
    // Paced (b's uplink carries the chain both ways), at b's uplink, not at a's.
    CHECK(rate_of(planned, a1, b1) == doctest::Approx(b_uplink * headroom));
    CHECK(rate_of(planned, a1, b1) > a_uplink);
    const auto now = current_paces(net, {{0, a1, b1, 0, 0, 0, 0}, {0, b2, c1, 0, 0, 0, 0}}, {}, headroom);
    CHECK(rate_of(now, a1, b1) > a_uplink);
}
