// Step 10 of the probe (map/probe.hpp): whether the hosts' own NICs queue in one FIFO or
// share fairly per flow (Capacities::queues).
#include <algorithm>
#include <cmath>
#include <optional>

#include "prober.hpp"

namespace hetcast::probing {
namespace {

/// What a flow held back twice gets, as a weight against the flows it meets in a full FIFO:
/// the flow model's rule (sim/flow.hpp, fifo_second_bottleneck_weight, fitted on netlab).
constexpr double second_bottleneck_weight = 0.45;

/// A test is made only where FIFO NICs would leave the watched flow at most this much of
/// what fair ones give it.
constexpr double conclusive = 0.7;

struct QueueTest {
    NodeId host = 0;
    NodeId across = 0;
    std::vector<NodeId> inside;
    double fair = 0;  ///< the flow across, host NICs fair: what the uplinks allow it
    double fifo = 0;  ///< the same where they are FIFO queues, by the flow model's rule
};

/// The most telling test: the fastest sender of a subnet sends across its uplink and, at
/// once, to as many hosts of its own subnet as its NIC can feed while a fair share would
/// still leave the flow across held back by the uplinks alone.
std::optional<QueueTest> plan_test(const Subnets& subnets, const Capacities& c, double tolerance) {
    std::optional<QueueTest> best;
    if (subnets.size() < 2 || c.uplink.size() != subnets.size()) return best;
    std::vector<std::size_t> sub(c.egress.size(), 0);
    for (std::size_t k = 0; k < subnets.size(); ++k) {
        for (NodeId h : subnets[k]) sub[h] = k;
    }
    for (std::size_t k = 0; k < subnets.size(); ++k) {
        if (subnets[k].size() < 2 || !std::isfinite(c.uplink[k])) continue;
        const NodeId h = fastest(subnets[k], c.egress).front();
        const double nic = c.egress[h];
        std::optional<NodeId> across;
        double fair = 0;
        for (std::size_t l = 0; l < subnets.size(); ++l) {
            if (l == k) continue;
            for (NodeId x : subnets[l]) {
                const double allowed = std::min({c.uplink[k], c.uplink[l], c.ingress[x]});
                if (allowed > fair) {
                    fair = allowed;
                    across = x;
                }
            }
        }
        if (!across || !(fair > 0)) continue;
        QueueTest t{h, *across, {}, fair, fair};
        for (NodeId j : fastest(subnets[k], c.ingress)) {
            if (j == h || c.ingress[j] * (1 + tolerance) < nic) continue;  // could not fill its share
            if (nic / static_cast<double>(t.inside.size() + 2) < (1 + tolerance) * fair) break;
            t.inside.push_back(j);
        }
        if (t.inside.empty()) continue;
        const auto m = static_cast<double>(t.inside.size());
        t.fifo = std::min(fair, second_bottleneck_weight / (m + second_bottleneck_weight) * nic);
        if (t.fifo > conclusive * t.fair) continue;
        if (!best || t.fifo / t.fair < best->fifo / best->fair) best = std::move(t);
    }
    return best;
}

}  // namespace

void measure_queues(const MeasureFlows& measure, const ProbeOptions& opt, ProbeResult& out) {
    const auto t = plan_test(out.subnets, out.capacities, opt.tolerance);
    if (!t) return;
    const auto name = [&](NodeId i) { return i < opt.names.size() ? opt.names[i] : std::to_string(i); };
    std::vector<FlowPair> flows{{t->host, t->across}};
    for (NodeId j : t->inside) flows.emplace_back(t->host, j);
    // The flow across alone, then beside the flows inside: their ratio does not hang on the
    // uplink as read before (all-FIFO netlab seed 1 read its 20 Mbit/s uplinks as 13.9).
    // Behind a FIFO the flow across gets anything from a tenth to all of its share, window
    // to window (docs/model.md, a-out3: 4-38 Mbit/s, 25 on average): the mean of two long
    // passes.
    const double alone = measure_once(measure, opt, out, {flows[0]}, "queues", uplink_window_scale)[0];
    double sum = 0;
    int passes = 0;
    for (int pass = 0; pass < 2; ++pass) {
        const double r = measure_once(measure, opt, out, flows, "queues", uplink_window_scale)[0];
        if (rated(r)) {
            sum += r;
            ++passes;
        }
    }
    const double beside = passes > 0 ? sum / passes : std::nan("");
    const std::string test = name(t->host) + " -> " + name(t->across) + " across, alone and beside " +
                             std::to_string(t->inside.size()) + " flows from " + name(t->host) + " inside its subnet";
    if (!rated(alone) || !rated(beside)) {
        out.notes.push_back("host NICs: not told (" + test + ": the flow across was not rated); taken as fair");
        return;
    }
    const double kept = beside / alone, fifo_kept = t->fifo / t->fair;
    const bool fifo = kept < (1 + fifo_kept) / 2;
    if (fifo) out.capacities.queues = Queues::fifo;
    out.notes.push_back("host NICs: " + std::string(fifo ? "FIFO queues" : "fair per flow") + " (" + test + ": " +
                        mbit(alone) + ", then " + mbit(beside) + ", " + percent(kept) + "; FIFO queues would keep " +
                        percent(fifo_kept) + ")");
}

}  // namespace hetcast::probing
