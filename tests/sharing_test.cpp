// Sharing on FIFO links (docs/model.md, "Sharing on FIFO links"): sharing_rates(), the flow
// simulator under Capacities::queues, and auto's preference for plans robust to it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/sched/auto.hpp"
#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/simulate.hpp"
#include "netlab_networks.hpp"

using namespace hetcast;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double w = fifo_second_bottleneck_weight;

bool close(double a, double b, double rel = 1e-9) { return std::abs(a - b) <= rel * std::max({1.0, std::abs(a), std::abs(b)}); }

struct Instance {
    std::vector<double> cap;
    std::vector<char> fifo;
    std::vector<FlowPath> flows;
};

Instance random_instance(std::mt19937_64& rng) {
    Instance in;
    const std::size_t resources = 1 + rng() % 6, flows = 1 + rng() % 8;
    for (std::size_t r = 0; r < resources; ++r) {
        in.cap.push_back(1 + static_cast<double>(rng() % 100));
        in.fifo.push_back(static_cast<char>(rng() % 4 != 0));
    }
    in.flows.resize(flows);
    for (auto& p : in.flows) {
        for (std::size_t r = 0; r < resources; ++r) {
            if (rng() % 2) p.resources.push_back(r);
        }
        p.cap = rng() % 3 == 0 ? 1 + static_cast<double>(rng() % 100) : inf;
        if (p.resources.empty() && !std::isfinite(p.cap)) p.cap = 50;
    }
    return in;
}

/// Whether some flow crosses two saturated FIFO resources (under `rate`) with different flows.
bool two_fifo_bottlenecks(const Instance& in, const std::vector<double>& rate) {
    std::vector<std::vector<std::size_t>> on(in.cap.size());
    std::vector<double> load(in.cap.size(), 0);
    for (std::size_t f = 0; f < in.flows.size(); ++f) {
        for (std::size_t r : in.flows[f].resources) {
            on[r].push_back(f);
            load[r] += rate[f];
        }
    }
    for (const auto& p : in.flows) {
        std::vector<std::vector<std::size_t>> seen;
        for (std::size_t r : p.resources) {
            if (in.fifo[r] && load[r] >= in.cap[r] * (1 - 1e-9) && std::find(seen.begin(), seen.end(), on[r]) == seen.end()) {
                seen.push_back(on[r]);
            }
        }
        if (seen.size() >= 2) return true;
    }
    return false;
}

/// Two subnets {a1..a4} {b1..b4}: NICs `nic`, uplinks `uplink` (bytes/s), queues `q`.
Network two_subnets(double nic, double uplink, Queues q) {
    const std::size_t n = 8;
    std::vector<std::string> names{"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"};
    Matrix lat(n, std::vector<double>(n, 0)), bw(n, std::vector<double>(n, 1e12));
    Network net = Network::parametric(names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
    net.set_subnets({{0, 1, 2, 3}, {4, 5, 6, 7}});
    Capacities c{std::vector<double>(n, nic), std::vector<double>(n, nic), std::vector<double>(n, inf), {uplink, uplink}};
    c.queues = q;
    net.set_capacities(c);
    return net;
}

/// a1 sends `m` bytes to each of `to` at once.
Schedule fan_out(const std::vector<NodeId>& to, double m) {
    std::vector<Message> msgs;
    for (NodeId d : to) msgs.push_back({0, m, {d}});
    Schedule s("fan-out", 8, msgs);
    for (std::size_t k = 0; k < to.size(); ++k) s.add_transfer(static_cast<MessageId>(k), 0, to[k]);
    return s;
}

double completion_of(const Timeline& tl, NodeId to) {
    for (const auto& t : tl.transfers) {
        if (t.to == to) return t.complete;
    }
    return -1;
}

}  // namespace

TEST_CASE("FIFO sharing: in a parking lot the flow through both FIFO bottlenecks gets a weighted share, not max-min's") {
    // Resources 0 and 1 (40 each): flow 0 crosses both, flow 1 only 0, flow 2 only 1.
    const std::vector<double> cap{40, 40};
    const std::vector<FlowPath> flows{{{0, 1}, inf}, {{0}, inf}, {{1}, inf}};
    CHECK(max_min_rates(cap, flows) == std::vector<double>{20, 20, 20});
    CHECK(sharing_rates(cap, {0, 0}, flows) == std::vector<double>{20, 20, 20});
    CHECK(sharing_rates(cap, {}, flows) == std::vector<double>{20, 20, 20});
    const auto fifo = sharing_rates(cap, {1, 1}, flows);
    CHECK(fifo[0] == doctest::Approx(40 * w / (1 + w)));
    CHECK(fifo[1] == doctest::Approx(40 / (1 + w)));
    CHECK(fifo[2] == doctest::Approx(40 / (1 + w)));
    // One of the two fair: the long flow has one FIFO bottleneck, max-min again.
    CHECK(sharing_rates(cap, {1, 0}, flows) == std::vector<double>{20, 20, 20});
    // Two links in series carrying the same flows are one bottleneck.
    const std::vector<FlowPath> series{{{0, 1}, inf}, {{0, 1}, inf}};
    CHECK(sharing_rates(cap, {1, 1}, series) == std::vector<double>{20, 20});
}

TEST_CASE("FIFO sharing: a flow limited downstream keeps its max-min rate while its share of the FIFO is far above it") {
    // One NIC (200, FIFO) with a local flow and a remote one through an uplink (40, FIFO).
    const std::vector<double> cap{200, 40};
    const std::vector<FlowPath> one{{{0}, inf}, {{0, 1}, inf}};
    CHECK(sharing_rates(cap, {1, 1}, one) == max_min_rates(cap, one));
    // Three local flows: the remote one's share of the NIC (200/4) is near its 40, and it
    // loses to them, as a flat tree's source flow to another subnet did on FIFO links.
    const std::vector<FlowPath> three{{{0}, inf}, {{0}, inf}, {{0}, inf}, {{0, 1}, inf}};
    const auto r = sharing_rates(cap, {1, 1}, three);
    CHECK(r[3] == doctest::Approx(200 * w / (3 + w)));
    CHECK(r[3] < 40);
    CHECK(r[0] == doctest::Approx(200 / (3 + w)));
}

TEST_CASE("FIFO sharing property: within capacities, every flow at its cap or on a full resource, max-min without two FIFO bottlenecks") {
    std::mt19937_64 rng(23);
    int weighted = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        const Instance in = random_instance(rng);
        const auto rate = sharing_rates(in.cap, in.fifo, in.flows);
        const auto mm = max_min_rates(in.cap, in.flows);
        std::vector<double> used(in.cap.size(), 0);
        for (std::size_t f = 0; f < in.flows.size(); ++f) {
            CHECK(rate[f] > 0);
            CHECK(rate[f] <= in.flows[f].cap * (1 + 1e-9));
            for (std::size_t r : in.flows[f].resources) used[r] += rate[f];
        }
        for (std::size_t r = 0; r < in.cap.size(); ++r) CHECK(used[r] <= in.cap[r] * (1 + 1e-9));
        for (std::size_t f = 0; f < in.flows.size(); ++f) {
            bool held = close(rate[f], in.flows[f].cap);
            for (std::size_t r : in.flows[f].resources) held = held || close(used[r], in.cap[r]);
            CHECK_MESSAGE(held, "trial " << trial << " flow " << f);
        }
        if (two_fifo_bottlenecks(in, mm)) {
            ++weighted;
        } else {
            CHECK(rate == mm);
        }
        // All fair: max-min, whatever the flows.
        CHECK(sharing_rates(in.cap, std::vector<char>(in.cap.size(), 0), in.flows) == mm);
    }
    CHECK(weighted > 300);  // the rule was exercised, not only its max-min case
}

TEST_CASE("FIFO sharing property: scaling every capacity and cap scales every rate, and on fair links more capacity never lowers the least rate") {
    std::mt19937_64 rng(29);
    for (int trial = 0; trial < 2000; ++trial) {
        Instance in = random_instance(rng);
        const auto rate = sharing_rates(in.cap, in.fifo, in.flows);
        Instance big = in;
        for (auto& c : big.cap) c *= 3;
        for (auto& p : big.flows) p.cap *= 3;
        const auto scaled = sharing_rates(big.cap, big.fifo, big.flows);
        for (std::size_t f = 0; f < rate.size(); ++f) CHECK(scaled[f] == doctest::Approx(3 * rate[f]));
        const std::vector<char> fair(in.cap.size(), 0);
        const auto mm = sharing_rates(in.cap, fair, in.flows);
        Instance more = in;
        more.cap[rng() % more.cap.size()] *= 1 + static_cast<double>(rng() % 100) / 50;
        const auto grown = sharing_rates(more.cap, fair, more.flows);
        CHECK_MESSAGE(*std::min_element(grown.begin(), grown.end()) >= *std::min_element(mm.begin(), mm.end()) * (1 - 1e-9),
                      "trial " << trial);
    }
}

TEST_CASE("FIFO sharing: more capacity elsewhere can lower a flow once a second queue fills, as on the wire") {
    // The parking lot, with the flow through c only (resource 2, fair, its sender's NIC)
    // at 18: uplink c (resource 1) is not full, so the long flow has one FIFO bottleneck
    // and gets max-min's 20. Give that sender 40: c fills, and the long flow drops.
    const std::vector<char> fifo{1, 1, 0};
    const std::vector<FlowPath> flows{{{0, 1}, inf}, {{0}, inf}, {{1, 2}, inf}};
    CHECK(sharing_rates({40, 40, 18}, fifo, flows) == std::vector<double>{20, 20, 18});
    const auto more = sharing_rates({40, 40, 40}, fifo, flows);
    CHECK(more[0] == doctest::Approx(40 * w / (1 + w)));
    CHECK(more[2] == doctest::Approx(40 / (1 + w)));
}

TEST_CASE("flow simulator on FIFO links: a flat tree's source flow to another subnet is slowed by three local ones") {
    const double mbit = 1e6 / 8, m = 8e6;
    const Schedule s = fan_out({1, 2, 3, 4}, m);
    const Timeline fair = simulate_flows(two_subnets(200 * mbit, 40 * mbit, Queues::fair), s);
    const Timeline realistic = simulate_flows(two_subnets(200 * mbit, 40 * mbit, Queues::realistic), s);
    const Timeline fifo = simulate_flows(two_subnets(200 * mbit, 40 * mbit, Queues::fifo), s);
    CHECK(completion_of(fair, 4) == doctest::Approx(m / (40 * mbit)));
    // The host's own egress is fair (fq_codel): the same as max-min.
    CHECK(completion_of(realistic, 4) == doctest::Approx(completion_of(fair, 4)));
    // All FIFO: b1's flow runs at 200 w / (3 + w) until the local ones end, then at 40.
    const double local_end = m / (200 * mbit / (3 + w));
    const double expect = local_end + (m - local_end * 200 * mbit * w / (3 + w)) / (40 * mbit);
    CHECK(completion_of(fifo, 4) == doctest::Approx(expect));
    CHECK(completion_of(fifo, 4) > 1.2 * completion_of(fair, 4));
    CHECK(completion_of(fifo, 1) < completion_of(fair, 1));
}

TEST_CASE("network files: capacity.queues is read, written back, and a bad value is one line") {
    const std::string base = "nodes: [a, b, c]\nlatency: 0\nbandwidth: 1e6\nsubnets: [[a, b], [c]]\ncapacity:\n  nic: 1e6\n  uplink: [5e5, 5e5]\n";
    CHECK(parse_network(base, "t.yaml").capacities()->queues == Queues::realistic);
    for (const auto& [text, q] : {std::pair{"fifo", Queues::fifo}, {"fair", Queues::fair}, {"realistic", Queues::realistic}}) {
        const Network net = parse_network(base + "  queues: " + text + "\n", "t.yaml");
        CHECK(net.capacities()->queues == q);
        CHECK(parse_network(format_network(net), "back.yaml").capacities()->queues == q);
    }
    try {
        (void)parse_network(base + "  queues: wfq\n", "t.yaml");
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()) == "t.yaml:8:11: capacity.queues: expected realistic, fifo or fair, got 'wfq'");
    }
}


TEST_CASE("auto: among plans within 3% of the least prediction, the one that loses least when every link is a FIFO") {
    // Two subnets of four 200 Mbit/s hosts behind 40 Mbit/s uplinks, 32 MiB: a flat tree's
    // source sends to its subnet and across at once and is predicted at the bound with a
    // fair NIC, but 1.24x that with a FIFO one; an lcf chain of subnets is 0.001% slower
    // and does not care.
    const Network net = test::lab_network({{40, test::lab_hosts("a", 4)}, {40, test::lab_hosts("b", 4)}});
    Network fifo = net;
    Capacities c = *net.capacities();
    c.queues = Queues::fifo;
    fifo.set_capacities(c);
    std::vector<NodeId> dests{1, 2, 3, 4, 5, 6, 7};
    const PlanRequest req = make_request(net, 0, dests, 32.0 * (1 << 20), ExecModel::nonblocking);
    const AutoChoice choice = plan_auto_explained(net, req);
    double least = inf;
    for (const auto& [name, t] : choice.predicted) least = std::min(least, t);
    // auto's predictions are weighed: simulate() plus what pieces cost beyond it.
    const double mine = weighed_completion(net, choice.best, req.model);
    CHECK(mine <= least * 1.03);
    const double robust = weighed_completion(fifo, choice.best, req.model);
    CHECK(robust == doctest::Approx(mine));
    const Schedule flat_tree = find_algorithm("flat-tree+ct").plan(net, req);
    CHECK(weighed_completion(net, flat_tree, req.model) <= mine);
    CHECK(weighed_completion(fifo, flat_tree, req.model) > 1.2 * robust);
    // With every link a FIFO already, a near-tie wins when the FIFOs' lottery costs it less
    // (sim/lottery.hpp); none of the near-ties loses less to it than the pick.
    const AutoChoice all_fifo = plan_auto_explained(fifo, req);
    double least_fifo = inf;
    for (const auto& [name, t] : all_fifo.predicted) least_fifo = std::min(least_fifo, t);
    CHECK(weighed_completion(fifo, all_fifo.best, req.model) <= least_fifo * 1.03);
    const double picked = lottery_weighed_completion(fifo, all_fifo.best, req.model);
    for (const auto& [name, t] : all_fifo.predicted) {
        if (t > least_fifo * 1.03) continue;
        const Schedule s = find_algorithm(name).plan(fifo, req);
        CHECK_MESSAGE(lottery_weighed_completion(fifo, s, req.model) >= picked * (1 - 1e-9), name);
    }
}
