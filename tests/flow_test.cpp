// The flow-level model of shared capacities: max-min fair sharing, the flow simulator, the
// capacity lower bound, and capacities in network files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "hetcast/error.hpp"
#include "hetcast/model/generators.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sched/wu.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/simulate.hpp"
#include "support.hpp"

using namespace hetcast;

namespace {

/// No resource carried more than its capacity over the time it was in use: `busy[r]` the
/// intervals of the flows that crossed resource r, `bytes[r]` what they carried.
void check_within_capacities(const std::vector<double>& caps, std::vector<std::vector<std::pair<double, double>>>& busy,
                             const std::vector<double>& bytes) {
    for (std::size_t r = 0; r < caps.size(); ++r) {
        if (!std::isfinite(caps[r])) continue;
        auto& iv = busy[r];
        std::sort(iv.begin(), iv.end());
        double covered = 0, from = -std::numeric_limits<double>::infinity(), to = from;
        for (auto [a, b] : iv) {
            if (a > to) {
                if (to > from) covered += to - from;
                from = a;
                to = b;
            } else {
                to = std::max(to, b);
            }
        }
        if (to > from) covered += to - from;
        CHECK(bytes[r] <= caps[r] * covered * (1 + 1e-6) + 1e-6);
    }
}

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr std::size_t none_flow = std::numeric_limits<std::size_t>::max();

bool close(double a, double b, double rel = 1e-9) { return std::abs(a - b) <= rel * std::max({1.0, std::abs(a), std::abs(b)}); }

/// n hosts in `subnets` groups (round robin), uniform latency and pair bandwidth, and the
/// given NIC and uplink rates (bytes/s; infinity for none).
Network capacity_net(std::size_t n, std::size_t groups, double pair_bw, double nic, double uplink,
                     double latency = 0, Overhead send = {}, Overhead recv = {}) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) names.push_back("h" + std::to_string(i));
    Matrix lat(n, std::vector<double>(n, latency)), bw(n, std::vector<double>(n, pair_bw));
    Network net = Network::parametric(names, lat, bw, std::vector<Overhead>(n, send), std::vector<Overhead>(n, recv));
    Subnets sub(groups);
    for (NodeId i = 0; i < n; ++i) sub[i % groups].push_back(i);
    net.set_subnets(sub);
    Capacities c{std::vector<double>(n, nic), std::vector<double>(n, nic), std::vector<double>(n, inf),
                 std::isfinite(uplink) ? std::vector<double>(groups, uplink) : std::vector<double>{}};
    net.set_capacities(c);
    return net;
}

/// A random network with random capacities (some infinite), random subnets and overheads.
Network random_capacity_net(std::mt19937_64& rng, std::size_t n) {
    std::uniform_real_distribution<double> rate(1e6, 1e8), lat(0, 1e-3), fixed(0, 1e-4), per_byte(0, 1e-9);
    std::vector<std::string> names;
    Matrix l(n, std::vector<double>(n)), b(n, std::vector<double>(n));
    std::vector<Overhead> send(n), recv(n);
    for (std::size_t i = 0; i < n; ++i) {
        names.push_back("n" + std::to_string(i));
        send[i] = {fixed(rng), per_byte(rng)};
        recv[i] = {fixed(rng), per_byte(rng)};
        for (std::size_t j = 0; j < n; ++j) {
            l[i][j] = lat(rng);
            b[i][j] = rate(rng);
        }
    }
    Network net = Network::parametric(names, l, b, send, recv);
    test::add_random_capacities(rng, net, rate);
    return net;
}

/// A random algorithm's schedule, store-and-forward.
Schedule random_plan(std::mt19937_64& rng, const Network& net) {
    const NodeId root = static_cast<NodeId>(rng() % net.size());
    std::vector<NodeId> dests;
    for (NodeId i = 0; i < net.size(); ++i) {
        if (i != root) dests.push_back(i);
    }
    const auto& algos = algorithms();
    for (;;) {
        const Algorithm& a = algos[rng() % algos.size()];
        PlanRequest req = make_request(net, root, dests, 1e5 + static_cast<double>(rng() % 10'000'000), ExecModel::nonblocking);
        if (a.name == "auto" || a.name == "optimal" || (a.applies && !a.applies(net, req))) continue;
        Schedule s = a.plan(net, req);
        s.relay = Relay::store_and_forward;  // pipeline and chain cut through large messages
        return s;
    }
}

/// One message per destination, from node 0, of the given sizes: all start at once.
Schedule fan_out(std::size_t n, const std::vector<double>& sizes) {
    std::vector<Message> msgs;
    for (std::size_t k = 0; k < sizes.size(); ++k) msgs.push_back({0, sizes[k], {static_cast<NodeId>(k + 1)}});
    Schedule s("fan-out", n, msgs);
    for (std::size_t k = 0; k < sizes.size(); ++k) s.add_transfer(static_cast<MessageId>(k), 0, static_cast<NodeId>(k + 1));
    return s;
}

}  // namespace

TEST_CASE("max-min rates: a fair share that fills some resource of every flow, and never more than a resource holds") {
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 2000; ++trial) {
        const std::size_t resources = 1 + rng() % 6, flows = 1 + rng() % 8;
        std::vector<double> cap(resources);
        for (auto& c : cap) c = 1 + static_cast<double>(rng() % 100);
        std::vector<FlowPath> f(flows);
        for (auto& p : f) {
            for (std::size_t r = 0; r < resources; ++r) {
                if (rng() % 2) p.resources.push_back(r);
            }
            p.cap = rng() % 3 == 0 ? 1 + static_cast<double>(rng() % 100) : inf;
            if (p.resources.empty() && !std::isfinite(p.cap)) p.cap = 50;
        }
        const auto rate = max_min_rates(cap, f);
        std::vector<double> used(resources, 0);
        for (std::size_t i = 0; i < flows; ++i) {
            CHECK(rate[i] > 0);
            CHECK(rate[i] <= f[i].cap * (1 + 1e-9));
            for (std::size_t r : f[i].resources) used[r] += rate[i];
        }
        for (std::size_t r = 0; r < resources; ++r) CHECK(used[r] <= cap[r] * (1 + 1e-9));
        // Max-min fairness: every flow is held back by its cap, or by a full resource on
        // which no other flow gets more than it does.
        for (std::size_t i = 0; i < flows; ++i) {
            bool bottleneck = close(rate[i], f[i].cap);
            for (std::size_t r : f[i].resources) {
                if (!close(used[r], cap[r])) continue;
                bool largest = true;
                for (std::size_t j = 0; j < flows; ++j) {
                    const bool crosses = std::find(f[j].resources.begin(), f[j].resources.end(), r) != f[j].resources.end();
                    if (crosses && rate[j] > rate[i] * (1 + 1e-9)) largest = false;
                }
                bottleneck = bottleneck || largest;
            }
            CHECK_MESSAGE(bottleneck, "trial " << trial << " flow " << i);
        }
    }
}

TEST_CASE("max-min rates: n equal flows through one NIC each get 1/n of it") {
    for (std::size_t n = 1; n <= 16; ++n) {
        const auto rate = max_min_rates({120.0}, std::vector<FlowPath>(n, FlowPath{{0}, inf}));
        for (double r : rate) CHECK(r == doctest::Approx(120.0 / static_cast<double>(n)));
    }
}

TEST_CASE("max-min rates: a flow that follows another is frozen with it") {
    // Resource 0 (cap 10) carries flows 0 and 1, resource 1 (cap 30) flows 1 and 2; flow 2
    // follows flow 0. Without the link: 5, 5, 25. With it flow 2 stops at 5, and flow 1
    // still gets no more than resource 0 leaves it.
    const std::vector<double> cap{10, 30};
    const std::vector<FlowPath> flows{{{0}, inf}, {{0, 1}, inf}, {{1}, inf}};
    CHECK(max_min_rates(cap, flows) == std::vector<double>{5, 5, 25});
    CHECK(max_min_rates(cap, flows, {none_flow, none_flow, 0}) == std::vector<double>{5, 5, 5});
    // A chain of followers freezes together at the first one's bottleneck.
    const std::vector<FlowPath> chain{{{0}, 2}, {{1}, inf}, {{1}, inf}};
    CHECK(max_min_rates(cap, chain, {none_flow, 0, 1}) == std::vector<double>{2, 2, 2});
}

TEST_CASE("flow simulator: one transfer takes S + L + m / bottleneck + R") {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> rate(1e6, 1e9);
    for (int trial = 0; trial < 300; ++trial) {
        const double pair = rate(rng), nic = rate(rng), up = rate(rng), m = 1 + static_cast<double>(rng() % 100'000'000);
        const Overhead s{1e-4, 1e-9}, r{2e-4, 2e-9};
        const Network net = capacity_net(4, 2, pair, nic, up, 1e-3, s, r);
        for (NodeId to : {NodeId{1}, NodeId{2}}) {  // h1 is in the other subnet, h2 in h0's
            PlanRequest req = make_request(net, 0, {to}, m, ExecModel::nonblocking);
            const Schedule sched = find_algorithm("flat").plan(net, req);
            const Timeline tl = simulate(net, sched, ExecModel::nonblocking);
            const double bottleneck = to == 1 ? std::min({pair, nic, up}) : std::min(pair, nic);
            CHECK(tl.completion == doctest::Approx(s.at(m) + 1e-3 + m / bottleneck + r.at(m)).epsilon(1e-9));
        }
    }
}

TEST_CASE("flow simulator: flows that start together through one NIC finish when it has carried their sum") {
    std::mt19937_64 rng(5);
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t k = 1 + rng() % 7;
        std::vector<double> sizes;
        for (std::size_t i = 0; i < k; ++i) sizes.push_back(1e3 + static_cast<double>(rng() % 50'000'000));
        const double nic = 1e6 + static_cast<double>(rng() % 100'000'000);
        const Network net = capacity_net(k + 1, 1, 1e15, nic, inf);
        const Timeline tl = simulate_flows(net, fan_out(k + 1, sizes));
        double total = 0;
        for (double x : sizes) total += x;
        CHECK(tl.completion == doctest::Approx(total / nic).epsilon(1e-9));
        // The smallest message is done first, at the time k equal shares carried k copies of it.
        const double smallest = *std::min_element(sizes.begin(), sizes.end());
        double first = inf;
        for (const auto& t : tl.transfers) first = std::min(first, t.arrival);
        CHECK(first == doctest::Approx(smallest * static_cast<double>(k) / nic).epsilon(1e-9));
    }
}

TEST_CASE("flow simulator: with infinite capacities it is the per-pair non-blocking model") {
    std::mt19937_64 rng(3);
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t n = 2 + rng() % 9;
        const Network base = random_capacity_net(rng, n);
        Network open = Network::parametric(base.names(), base.latency(), base.bandwidth(), base.send_overheads(),
                                           base.recv_overheads());
        open.set_subnets(*base.subnets());
        const Schedule s = random_plan(rng, open);
        const Timeline want = simulate(open, s, ExecModel::nonblocking);
        Capacities none{std::vector<double>(n, inf), std::vector<double>(n, inf), std::vector<double>(n, inf),
                        std::vector<double>(base.subnets()->size(), inf)};
        open.set_capacities(none);
        const Timeline got = simulate(open, s, ExecModel::nonblocking);
        REQUIRE(got.transfers.size() == want.transfers.size());
        CHECK(got.completion == doctest::Approx(want.completion).epsilon(1e-9));
        for (std::size_t i = 0; i < got.transfers.size(); ++i) {
            CHECK(got.transfers[i].complete == doctest::Approx(want.transfers[i].complete).epsilon(1e-9));
        }
    }
}

// A job sends to a peer on one lane (one TCP stream, messages in the order they are sent).
// The per-pair model above gives every message its own pipe; the flow model queues them.
TEST_CASE("flow simulator: messages to the same peer go one after another, in the order they were sent") {
    std::mt19937_64 rng(23);
    for (int trial = 0; trial < 200; ++trial) {
        const double pair = 1e6 + static_cast<double>(rng() % 100'000'000), lat = 1e-3;
        const Network net = capacity_net(3, 1, pair, inf, inf, lat);
        const std::size_t k = 2 + rng() % 4;
        std::vector<Message> msgs;
        for (std::size_t i = 0; i < k; ++i) msgs.push_back({0, 1e3 + static_cast<double>(rng() % 10'000'000), {1}});
        // A third message elsewhere runs beside the lane, not behind it.
        msgs.push_back({0, 1e6, {2}});
        Schedule s("lane", 3, msgs);
        for (std::size_t i = 0; i <= k; ++i) s.add_transfer(static_cast<MessageId>(i), 0, i < k ? 1 : 2);
        const Timeline tl = simulate_flows(net, s);
        double sent = 0;
        for (std::size_t i = 0; i < k; ++i) {
            sent += msgs[i].size;
            const auto t = std::find_if(tl.transfers.begin(), tl.transfers.end(), [&](const Transfer& x) { return x.message == i; });
            REQUIRE(t != tl.transfers.end());
            CHECK(t->arrival == doctest::Approx(sent / pair + lat).epsilon(1e-9));
        }
        const auto other = std::find_if(tl.transfers.begin(), tl.transfers.end(), [&](const Transfer& x) { return x.to == 2; });
        CHECK(other->arrival == doctest::Approx(1e6 / pair + lat).epsilon(1e-9));
    }
}

TEST_CASE("flow simulator property: random patterns, stored and forwarded, never run two flows of one pair at once") {
    // Flows of a pair do not overlap: after one's last byte, the next needs its own bytes at
    // no more than its path's rate. Two at once would end within less of each other.
    std::mt19937_64 rng(29);
    std::size_t queued = 0;
    for (int trial = 0; trial < 150; ++trial) {
        const std::size_t n = 3 + rng() % 6;
        const Network net = random_capacity_net(rng, n);
        PatternRequest req = test::all_to_all(n, 1e5 + static_cast<double>(rng() % 4'000'000));
        const auto& algos = pattern_algorithms();
        const PatternAlgorithm& a = algos[rng() % algos.size()];
        CAPTURE(a.name);
        Schedule s = a.plan(net, req);
        s.relay = Relay::store_and_forward;  // no flow waits for its relay's bytes
        const Timeline tl = simulate_flows(net, s);
        std::map<std::pair<NodeId, NodeId>, std::vector<const Transfer*>> pairs;
        for (const Transfer& t : tl.transfers) pairs[{t.from, t.to}].push_back(&t);
        for (auto& [pair, ts] : pairs) {
            std::sort(ts.begin(), ts.end(), [](const Transfer* x, const Transfer* y) { return x->arrival < y->arrival; });
            for (std::size_t i = 1; i < ts.size(); ++i) {
                const double m = s.messages[ts[i]->message].size;
                const double fastest = flow_path(net, pair.first, pair.second).cap;
                CHECK(ts[i]->arrival - ts[i - 1]->arrival >= m / fastest * (1 - 1e-9));
                ++queued;
            }
        }
    }
    CHECK(queued > 100);
}

// A relay that cuts through sends a message as its bytes come in; while that one waits for
// them, its lane carries the next message (else a slow supply would hold the lane idle).
TEST_CASE("flow simulator: a lane whose message waits for its relay's bytes carries the next one meanwhile") {
    const double slow = 1e6, fast = 1e8;
    Matrix lat(3, std::vector<double>(3, 0)), bw(3, std::vector<double>(3, fast));
    bw[0][1] = slow;
    Network net = Network::parametric({"a", "r", "b"}, lat, bw, std::vector<Overhead>(3), std::vector<Overhead>(3));
    const std::vector<Message> msgs{{0, 10e6, {1, 2}}, {1, 1e6, {2}}};
    for (const bool cut : {true, false}) {
        CAPTURE(cut);
        Schedule s("lane", 3, msgs);
        s.add_transfer(0, 0, 1);
        s.add_transfer(0, 1, 2);
        s.add_transfer(1, 1, 2);
        s.relay = cut ? Relay::cut_through : Relay::store_and_forward;
        s.piece = 100'000;
        const Timeline tl = simulate_flows(net, s);
        const auto arrival = [&](MessageId m, NodeId to) {
            for (const Transfer& t : tl.transfers) {
                if (t.message == m && t.to == to) return t.arrival;
            }
            return inf;
        };
        // a → r takes 10 s; cut through, r → b of message 0 follows it a piece behind (its last
        // piece at 100 MB/s), and message 1 goes beside.
        CHECK(arrival(0, 1) == doctest::Approx(10.0).epsilon(1e-9));
        if (cut) {
            CHECK(arrival(0, 2) == doctest::Approx(10.0 + 100'000 / fast).epsilon(1e-9));
            CHECK(arrival(1, 2) < 0.2);
        } else {
            CHECK(arrival(0, 2) == doctest::Approx(10.1).epsilon(1e-9));
            CHECK(arrival(1, 2) == doctest::Approx(10.11).epsilon(1e-9));
        }
    }
}

TEST_CASE("flow simulator: no resource carries more than its capacity over the time it is in use") {
    // Each transfer's bytes cross its resources between its flow start (sender_free) and
    // its last byte (arrival − L); a resource can carry at most capacity × the length of
    // the union of those intervals. And no capacity can make a schedule faster.
    std::mt19937_64 rng(17);
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t n = 2 + rng() % 9;
        const Network net = random_capacity_net(rng, n);
        const Schedule s = random_plan(rng, net);
        const Timeline tl = simulate(net, s, ExecModel::nonblocking);
        const auto caps = resource_capacities(net);
        std::vector<std::vector<std::pair<double, double>>> busy(caps.size());
        std::vector<double> bytes(caps.size(), 0);
        for (const auto& t : tl.transfers) {
            const double m = s.messages[t.message].size;
            const double end = t.arrival - net.wire(t.from, t.to, 0);
            const FlowPath p = flow_path(net, t.from, t.to);
            CHECK(end - t.sender_free >= m / p.cap * (1 - 1e-9));
            for (std::size_t r : p.resources) {
                CHECK(end - t.sender_free >= m / caps[r] * (1 - 1e-9));
                busy[r].emplace_back(t.sender_free, end);
                bytes[r] += m;
            }
        }
        check_within_capacities(caps, busy, bytes);
        Network open = Network::parametric(net.names(), net.latency(), net.bandwidth(), net.send_overheads(),
                                           net.recv_overheads());
        CHECK(tl.completion >= simulate(open, s, ExecModel::nonblocking).completion * (1 - 1e-9));
    }
}

TEST_CASE("a flat send from one NIC is not free: flat's prediction grows with the fan-out") {
    // 2 subnets × 4 hosts, 25 MB/s NICs, 5 MB/s uplinks (netlab's two-subnets).
    const Network net = capacity_net(8, 2, 25e6, 25e6, 5e6);
    const double m = 32 << 20;
    PlanRequest req = make_request(net, 0, {}, m, ExecModel::nonblocking);
    const double flat = simulate(net, find_algorithm("flat").plan(net, req), ExecModel::nonblocking).completion;
    // Seven copies leave h0's NIC, four of them through the 5 MB/s uplink: those four share
    // it, so flat can finish no sooner than 4 m / 5 MB/s.
    CHECK(flat >= 4 * m / 5e6 * (1 - 1e-9));
    CHECK(broadcast_lower_bound(net, 0, req.dests, m) == doctest::Approx(m / 5e6));
    const Schedule best = find_algorithm("auto").plan(net, req);
    CHECK(best.algorithm != "auto:flat");
    CHECK(simulate(net, best, ExecModel::nonblocking).completion < 0.6 * flat);
}

TEST_CASE("capacity lower bound: never above what any plan achieves in the flow model") {
    std::mt19937_64 rng(23);
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t n = 2 + rng() % 9;
        const Network net = random_capacity_net(rng, n);
        const Schedule s = random_plan(rng, net);
        const Timeline tl = simulate(net, s, ExecModel::nonblocking);
        const auto& msg = s.messages[0];
        CHECK(broadcast_lower_bound(net, msg.source, msg.dests, msg.size) <= tl.completion * (1 + 1e-9));
    }
}

TEST_CASE("network files: capacity in bytes/s or with units, written and read back") {
    const Network net = parse_network(R"(
nodes: [a1, a2, b1]
latency: 1e-4
bandwidth: 25e6
subnets: [[a1, a2], [b1]]
capacity:
  nic: 200Mbit
  ingress: {b1: 100Mbit}
  disk: [.inf, .inf, 10MB/s]
  uplink: [40Mbit, 5e6]
)", "t.yaml");
    REQUIRE(net.capacities());
    const auto& c = *net.capacities();
    CHECK(c.egress == std::vector<double>{25e6, 25e6, 25e6});
    CHECK(c.ingress[0] == 25e6);
    CHECK(c.ingress[2] == doctest::Approx(12.5e6));
    CHECK(c.disk[2] == doctest::Approx(10e6));
    CHECK(c.uplink == std::vector<double>{5e6, 5e6});
    const Network back = parse_network(format_network(net), "back.yaml");
    REQUIRE(back.capacities());
    CHECK(back.capacities()->egress == c.egress);
    CHECK(back.capacities()->ingress == c.ingress);
    CHECK(back.capacities()->disk == c.disk);
    CHECK(back.capacities()->uplink == c.uplink);
}

TEST_CASE("network files: a bad capacity is a one-line error with its place") {
    const auto error_of = [](const std::string& text) {
        try {
            (void)parse_network(text, "t.yaml");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string head = "nodes: [a, b]\nlatency: 0\nbandwidth: 1e6\n";
    CHECK(error_of(head + "capacity: {nic: 0}\n").find("t.yaml:4:") == 0);
    CHECK(error_of(head + "capacity: {nic: fast}\n").find("bad rate 'fast'") != std::string::npos);
    CHECK(error_of(head + "capacity: {uplink: 1e6}\n").find("needs 'subnets'") != std::string::npos);
    CHECK(error_of(head + "subnets: [[a], [b]]\ncapacity: {uplink: [1e6]}\n").find("expected 2 rates") !=
          std::string::npos);
    CHECK(error_of(head + "capacity: {egress: {c: 1e6}}\n").find("unknown node 'c'") != std::string::npos);
    CHECK(error_of("nodes: [a, b]\ncost: 1\ncapacity: {nic: 1e6}\n").find("only the parametric form") !=
          std::string::npos);
}

TEST_CASE("a new subnet map drops the uplinks of the old one") {
    Network net = capacity_net(4, 2, 1e6, 1e6, 1e5);
    net.set_subnets(*net.subnets());
    CHECK(net.capacities()->uplink.size() == 2);
    net.set_subnets({{0, 1, 2, 3}});
    CHECK(net.capacities()->uplink.empty());
    CHECK(net.capacities()->egress.size() == 4);
}

namespace {

/// k + 1 hosts h0 → h1 → … → hk, one message relayed down the chain.
Schedule chain_schedule(std::size_t k, double m, Relay relay, std::uint64_t piece = default_piece) {
    std::vector<NodeId> dests;
    for (NodeId i = 1; i <= k; ++i) dests.push_back(i);
    Schedule s("chain", k + 1, {Message{0, m, dests}});
    s.relay = relay;
    s.piece = piece;
    for (NodeId i = 0; i < k; ++i) s.add_transfer(0, i, i + 1);
    return s;
}

Schedule with_relay(Schedule s, Relay relay, std::uint64_t piece) {
    s.relay = relay;
    s.piece = piece;
    return s;
}

}  // namespace

TEST_CASE("cut-through: a chain of k equal hops takes m / B + (k − 1) piece / B, not k m / B") {
    const double bw = 25e6, m = 32 << 20, piece = default_piece;
    for (std::size_t k = 1; k <= 6; ++k) {
        CAPTURE(k);
        for (const double latency : {0.0, 1e-3}) {
            for (const bool capacities : {false, true}) {
                Network net = capacity_net(k + 1, 1, bw, capacities ? bw : inf, inf, latency);
                if (!capacities) {
                    net = Network::parametric(net.names(), net.latency(), net.bandwidth(), net.send_overheads(),
                                              net.recv_overheads());
                }
                const double ct = simulate(net, chain_schedule(k, m, Relay::cut_through), ExecModel::nonblocking).completion;
                const double kk = static_cast<double>(k);
                CHECK(ct == doctest::Approx(m / bw + (kk - 1) * (piece / bw + latency) + latency).epsilon(1e-9));
                const double sf = simulate(net, chain_schedule(k, m, Relay::store_and_forward), ExecModel::nonblocking).completion;
                CHECK(sf == doctest::Approx(kk * (m / bw + latency)).epsilon(1e-9));
            }
        }
    }
}

TEST_CASE("cut-through: a fast hop after a slow one runs at the slow one's rate once it has caught up") {
    // h0 → h1 at 1 MB/s, h1 → h2 at 10 MB/s: h2 gets the last byte a piece at 10 MB/s after
    // h1 does (h1 passes on a piece once it holds all of it).
    Network net = capacity_net(3, 1, 10e6, inf, inf);
    Matrix bw = net.bandwidth();
    bw[0][1] = 1e6;
    net = Network::parametric(net.names(), net.latency(), bw, net.send_overheads(), net.recv_overheads());
    const double m = 8 << 20;
    const Timeline tl = simulate(net, chain_schedule(2, m, Relay::cut_through, 1 << 20), ExecModel::nonblocking);
    REQUIRE(tl.transfers.size() == 2);
    CHECK(tl.transfers[0].arrival == doctest::Approx(m / 1e6));
    CHECK(tl.transfers[1].sender_free == doctest::Approx((1 << 20) / 1e6));
    CHECK(tl.transfers[1].arrival == doctest::Approx(m / 1e6 + (1 << 20) / 10e6));
}

TEST_CASE("cut-through: only the non-blocking model predicts it, and not on a cost matrix") {
    const Network net = capacity_net(3, 1, 1e6, 1e6, inf);
    const Schedule s = chain_schedule(2, 1e6, Relay::cut_through);
    CHECK_THROWS_AS((void)simulate(net, s, ExecModel::blocking), InputError);
    CHECK_THROWS_AS((void)simulate(net, s, ExecModel::postal), InputError);
    const Network costs = Network::from_costs({"a", "b", "c"}, {{0, 1, 1}, {1, 0, 1}, {1, 1, 0}});
    CHECK_THROWS_AS((void)simulate(costs, s, ExecModel::nonblocking), InputError);
}

TEST_CASE("cut-through property: random trees on random capacity networks") {
    // The same tree cut through: piece ≥ m gives the store-and-forward timeline; never below
    // what the capacities force, nor much above store-and-forward; no flow faster than what it crosses; no resource over its
    // capacity; a relayed flow ends no sooner than the one that feeds it.
    std::mt19937_64 rng(29);
    for (int trial = 0; trial < 300; ++trial) {
        CAPTURE(trial);
        const std::size_t n = 2 + rng() % 9;
        const Network net = random_capacity_net(rng, n);
        const Schedule sf = random_plan(rng, net);
        const auto& msg = sf.messages[0];
        const Timeline want = simulate(net, sf, ExecModel::nonblocking);
        const Timeline whole = simulate(net, with_relay(sf, Relay::cut_through, static_cast<std::uint64_t>(msg.size) + 1),
                                        ExecModel::nonblocking);
        REQUIRE(whole.transfers.size() == want.transfers.size());
        for (std::size_t i = 0; i < want.transfers.size(); ++i) {
            CHECK(whole.transfers[i].arrival == want.transfers[i].arrival);
            CHECK(whole.transfers[i].complete == want.transfers[i].complete);
        }

        const std::uint64_t piece = 1 + rng() % static_cast<std::uint64_t>(msg.size);
        const Schedule ct = with_relay(sf, Relay::cut_through, piece);
        const Timeline tl = simulate(net, ct, ExecModel::nonblocking);
        CHECK(tl.completion >= capacity_lower_bound(net, msg.source, msg.dests, msg.size) * (1 - 1e-9));
        // Relays that start early can take a shared resource from others for a while, but
        // the tree can lose no more than about a piece per hop at the slowest rate.
        double slow = inf;
        for (double c : resource_capacities(net)) slow = std::min(slow, c);
        for (NodeId i = 0; i < n; ++i) {
            for (NodeId j = 0; j < n; ++j) slow = i == j ? slow : std::min(slow, net.bandwidth()[i][j]);
        }
        CHECK(tl.completion <= want.completion * (1 + 1e-9) + static_cast<double>(n * piece) / slow);
        const auto caps = resource_capacities(net);
        std::vector<std::vector<std::pair<double, double>>> busy(caps.size());
        std::vector<double> bytes(caps.size(), 0);
        std::vector<const Transfer*> into(n, nullptr);
        for (const auto& t : tl.transfers) into[t.to] = &t;
        for (const auto& t : tl.transfers) {
            const double end = t.arrival - net.wire(t.from, t.to, 0);
            const FlowPath p = flow_path(net, t.from, t.to);
            CHECK(end - t.sender_free >= msg.size / p.cap * (1 - 1e-9));
            CHECK(t.complete >= t.arrival);
            if (const Transfer* feed = into[t.from]) {
                CHECK(t.arrival - net.wire(t.from, t.to, 0) >= feed->arrival * (1 - 1e-12));
                CHECK(t.sender_free >= feed->sender_free);
            }
            for (std::size_t r : p.resources) {
                CHECK(end - t.sender_free >= msg.size / caps[r] * (1 - 1e-9));
                busy[r].emplace_back(t.sender_free, end);
                bytes[r] += msg.size;
            }
        }
        check_within_capacities(caps, busy, bytes);
    }
}
