// Step 6 of the probe (map/probe.hpp): what limits the flows out of and into each subnet.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "prober.hpp"

namespace hetcast::probing {
namespace {

double sum_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

}  // namespace

// 6. Flows out of and into subnet k at once (they cross its uplink in opposite
// directions); each aggregate is bounded by the uplink or by the other side.
void Prober::measure_uplinks(const Subnets& found) {
    // With two subnets every flow out of one goes into the other: one measurement.
    for (std::size_t k = 0; k < (found.size() == 2 ? 1 : found.size()); ++k) {
        if (std::any_of(runs_.begin(), runs_.end(), [&](const UplinkRun& r) { return r.subnet == found[k]; })) continue;
        const auto senders = fastest(found[k], eg_), takers = fastest(found[k], in_);
        // As many flows each way as the subnet has hosts, three at least: an uplink faster
        // than any two of its hosts (see probe_hidden.cpp) fills only with all of them.
        const std::size_t count = std::max<std::size_t>(3, found[k].size());
        const auto outside_in = spread(found, k, in_, count), outside_eg = spread(found, k, eg_, count);
        UplinkRun run{found[k], {}, outside_in.size(), {}};
        for (std::size_t f = 0; f < outside_in.size(); ++f) run.flows.emplace_back(senders[f % senders.size()], outside_in[f]);
        // Into the subnet, each flow to the host after the one it would have sent to:
        // no host pair both ways (see design()).
        for (std::size_t f = 0; f < outside_eg.size(); ++f) {
            run.flows.emplace_back(outside_eg[f], takers[(f + (takers.size() > 1 ? 1 : 0)) % takers.size()]);
        }
        // Fewer, longer passes (uplink_window_scale); the larger is kept.
        run.passes = passes({run.flows}, "uplinks", uplink_window_scale, std::min(opt_.repeats, 2))[0];
        runs_.push_back(std::move(run));
    }
    for (std::size_t k = 0; k < found.size(); ++k) {
        const auto run = std::find_if(runs_.begin(), runs_.end(), [&](const UplinkRun& r) { return r.subnet == found[k]; });
        if (run != runs_.end()) model_.uplink[k] = uplink_of(*run, k, found);
    }
    if (found.size() == 2) {
        model_.uplink[1] = model_.uplink[0];
        if (std::isfinite(model_.uplink[0])) {
            out_.notes.push_back("two subnets: only the slower uplink shows (" + mbit(model_.uplink[0]) +
                                 "); both are given it");
        }
    }
}

/// What a run says of subnet k's uplink, from its flows that still cross it (a partner
/// may have turned out to be in the same subnet after all: see dissolve()). A flow a pass
/// could not rate carried nothing the others did not take over: the pass's aggregate
/// counts the rest, and so does what the NICs would allow them.
double Prober::uplink_of(const UplinkRun& run, std::size_t k, const Subnets& found) {
    const auto crosses = [&](const FlowPair& f) {
        const std::size_t a = model_.subnet[f.first], b = model_.subnet[f.second];
        return a != none && b != none && a != b;
    };
    const Model nics{eg_, in_, std::vector<std::size_t>(n_, none), {}};
    const double slack = 1 + opt_.tolerance;
    // A capacity: the most the link carried in a pass. Load elsewhere only lowers a pass,
    // and the long windows keep one from overshooting (see measure_uplinks).
    double agg[2] = {0, 0};
    bool nic_bound = false, any = false;
    for (int dir = 0; dir < 2; ++dir) {
        double best_nics = 0;
        for (const auto& pass : run.passes) {
            std::vector<FlowPair> flows;
            double sum = 0;
            for (std::size_t f = 0; f < run.flows.size(); ++f) {
                if ((f < run.outs) != (dir == 0) || !crosses(run.flows[f]) || !rated(pass[f])) continue;
                flows.push_back(run.flows[f]);
                sum += pass[f];
            }
            if (flows.empty() || sum <= agg[dir]) continue;
            agg[dir] = sum;
            best_nics = sum_of(nics.rates(flows));
        }
        any = any || agg[dir] > 0;
        nic_bound = nic_bound || (agg[dir] > 0 && agg[dir] * slack >= best_nics);
    }
    if (!any) return inf;
    if (nic_bound) {
        out_.notes.push_back("subnet of " + name(found[k][0]) + ": flows out of and into it reached what the NICs allow (" +
                             mbit(agg[0]) + " out, " + mbit(agg[1]) + " in): its uplink is not a bottleneck");
    }
    return nic_bound ? inf : std::max(agg[0], agg[1]);
}

/// Whether some direction of subnet k's run carried less, by `factor`, than what the NICs and
/// the other subnets' uplinks found allow: what holds it back is k's own uplink.
bool Prober::held_back(const UplinkRun& run, std::size_t k, double factor) const {
    Model m = model_;
    m.uplink[k] = inf;
    for (int dir = 0; dir < 2; ++dir) {
        double best = 0, predicted = 0;
        for (const auto& pass : run.passes) {
            std::vector<FlowPair> flows;
            double sum = 0;
            for (std::size_t f = 0; f < run.flows.size(); ++f) {
                const std::size_t a = model_.subnet[run.flows[f].first], b = model_.subnet[run.flows[f].second];
                if ((f < run.outs) != (dir == 0) || a == none || b == none || a == b || !rated(pass[f])) continue;
                flows.push_back(run.flows[f]);
                sum += pass[f];
            }
            if (flows.empty() || sum <= best) continue;
            best = sum;
            predicted = sum_of(m.rates(flows));
        }
        if (best > 0 && best * factor < predicted) return true;
    }
    return false;
}

}  // namespace hetcast::probing
