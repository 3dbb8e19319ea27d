#include "hetcast/map/probe.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>

#include "hetcast/error.hpp"
#include "hetcast/map/eco.hpp"
#include "probe_model.hpp"

namespace hetcast {
namespace {

using namespace probing;

/// Candidate subnets a host set aside is tested against, at most (by affinity, then latency).
constexpr std::size_t max_tested = 2;
/// Uplink runs measure this many times longer than the others, in at most two passes (see measure_uplinks).
constexpr double uplink_window_scale = 2;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t k = v.size();
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

std::string mbit(double bytes_per_s) {
    if (!std::isfinite(bytes_per_s)) return "unlimited";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1f Mbit/s", bytes_per_s * 8 / 1e6);
    return buf;
}

std::string percent(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", 100 * x);
    return buf;
}

/// One measurement of a subnet's uplink: `outs` flows out of it, then flows into it, and
/// every pass's rates.
struct UplinkRun {
    std::vector<NodeId> subnet;
    std::vector<FlowPair> flows;
    std::size_t outs = 0;
    std::vector<std::vector<double>> passes;
};

class Prober {
public:
    Prober(const Matrix& latency, const MeasureFlows& measure, const ProbeOptions& opt)
        : lat_(latency), measure_(measure), opt_(opt), n_(latency.size()) {}

    ProbeResult run() {
        measure_pairs();
        nic_rates();
        affinities();
        costs();
        std::vector<char> informative = set_aside();
        Subnets found = partition(informative);
        use(found);
        if (found.size() >= 2) {
            measure_uplinks(found);
            // Flows to or from a dissolved subnet's hosts may not have crossed an uplink.
            if (dissolve(found, informative) && found.size() >= 2) measure_uplinks(found);
        }
        const Subnets core = found;
        for (NodeId h = 0; h < n_; ++h) {
            if (!informative[h]) place(h, core, found);
        }
        finish(found);
        return std::move(out_);
    }

private:
    [[nodiscard]] std::string name(NodeId i) const {
        return i < opt_.names.size() ? opt_.names[i] : std::to_string(i);
    }
    [[nodiscard]] std::string flow_name(const FlowPair& f) const { return name(f.first) + " -> " + name(f.second); }

    /// One call of the callback, checked.
    std::vector<double> once(const std::vector<FlowPair>& flows, std::string_view phase, double scale = 1) {
        if (opt_.progress) opt_.progress(phase, out_.measurements);
        std::vector<double> r = measure_(flows, opt_.seconds * scale);
        ++out_.measurements;
        out_.measured_seconds += opt_.seconds * scale;
        if (r.size() != flows.size()) {
            throw Error("probe: a measurement of " + std::to_string(flows.size()) + " flows returned " +
                        std::to_string(r.size()) + " rates");
        }
        for (std::size_t k = 0; k < r.size(); ++k) {
            if (!std::isfinite(r[k]) || r[k] <= 0) {
                throw Error("probe: flow " + flow_name(flows[k]) + " measured " + std::to_string(r[k]) +
                            " bytes/s, not a positive rate");
            }
        }
        return r;
    }

    /// Every set measured `count` times (default: `repeats`), windows `scale` times the
    /// usual, the passes one after the other so that what disturbs the network for a while
    /// hits different sets: [set][pass][flow].
    std::vector<std::vector<std::vector<double>>> passes(const std::vector<std::vector<FlowPair>>& sets,
                                                         std::string_view phase, double scale = 1, int count = 0) {
        std::vector<std::vector<std::vector<double>>> out(sets.size());
        for (int p = 0; p < (count > 0 ? count : opt_.repeats); ++p) {
            for (std::size_t s = 0; s < sets.size(); ++s) {
                if (!sets[s].empty()) out[s].push_back(once(sets[s], phase, scale));
            }
        }
        return out;
    }

    // 1. Round r: every host i sends to i + r (mod n). Each NIC carries one flow each way,
    // and no host pair both ways: the ACKs of a fast flow would wait behind the data of a
    // slow one going back in the same queue, and a handshake behind either.
    void measure_pairs() {
        std::vector<std::vector<FlowPair>> sets;
        for (std::size_t r = 1; r < n_; ++r) {
            // Half way round (even n) every pair would go both ways: two rounds of half each.
            const bool halves = 2 * r == n_;
            for (std::size_t half = 0; half < (halves ? 2 : 1); ++half) {
                auto& s = sets.emplace_back();
                for (std::size_t i = 0; i < n_; ++i) {
                    if (!halves || (i < r) == (half == 0)) s.emplace_back(static_cast<NodeId>(i), static_cast<NodeId>((i + r) % n_));
                }
            }
        }
        const auto got = passes(sets, "pairs");
        g_.assign(n_, std::vector<double>(n_, 0));
        for (std::size_t s = 0; s < sets.size(); ++s) {
            for (std::size_t f = 0; f < sets[s].size(); ++f) {
                std::vector<double> v;
                for (const auto& pass : got[s]) v.push_back(pass[f]);
                g_[sets[s][f].first][sets[s][f].second] = median(v);
            }
        }
    }

    // 2. A host's best partners are in its own subnet: only the NICs limit those pairs. The
    // median of the pairs near the best, not the best: the largest of several noisy
    // readings of one rate is too large.
    void nic_rates() {
        const auto estimate = [&](NodeId h, bool out) {
            std::vector<double> v;
            for (NodeId j = 0; j < n_; ++j) {
                if (j != h) v.push_back(out ? g_[h][j] : g_[j][h]);
            }
            const double best = *std::max_element(v.begin(), v.end());
            std::erase_if(v, [&](double x) { return x * (1 + opt_.tolerance / 4) < best; });
            return median(v);
        };
        eg_.assign(n_, 0);
        in_.assign(n_, 0);
        for (NodeId h = 0; h < n_; ++h) {
            eg_[h] = estimate(h, true);
            in_[h] = estimate(h, false);
        }
    }

    /// How much of what the NICs allow a pair gets, the worse direction; orders the
    /// candidate subnets of a host set aside.
    void affinities() {
        aff_.assign(n_, std::vector<double>(n_, 1));
        for (NodeId i = 0; i < n_; ++i) {
            for (NodeId j = 0; j < n_; ++j) {
                if (i == j) continue;
                const double there = g_[i][j] / std::min(eg_[i], in_[j]);
                const double back = g_[j][i] / std::min(eg_[j], in_[i]);
                aff_[i][j] = std::min({1.0, there, back});
            }
        }
    }

    /// The time to move the representative message i→j over what the NICs alone allow.
    [[nodiscard]] double normalised(NodeId i, NodeId j) const {
        const double r = std::min(eg_[i], in_[j]);
        return lat_[i][j] * r / opt_.message + r / g_[i][j];
    }

    // 3. An entry below 1 (a pair above its NICs' medians) is noise.
    void costs() {
        cost_.assign(n_, std::vector<double>(n_, 0));
        for (NodeId i = 0; i < n_; ++i) {
            for (NodeId j = 0; j < n_; ++j) {
                if (i != j) cost_[i][j] = std::max(normalised(i, j), normalised(j, i));
            }
        }
    }

    // 4. A host near two hosts that are not near each other is NIC-bound on both sides of
    // an uplink: its rates cannot say where it is, and ECO would join the subnets through
    // it. Near is ECO's own test (within 1 + tolerance of both hosts' cheapest edge). The
    // worst goes first (ties: the one near more hosts, then the slower), so that one such
    // host does not cost its neighbours their place.
    std::vector<char> set_aside() const {
        std::vector<char> on(n_, 1);
        for (;;) {
            std::vector<double> least(n_, inf);
            for (NodeId i = 0; i < n_; ++i) {
                for (NodeId j = 0; j < n_; ++j) {
                    if (i != j && on[i] && on[j]) least[i] = std::min(least[i], cost_[i][j]);
                }
            }
            const auto near = [&](NodeId i, NodeId j) {
                return cost_[i][j] <= (1 + opt_.tolerance) * std::min(least[i], least[j]);
            };
            NodeId worst = 0;
            std::size_t worst_bad = 0, worst_near = 0;
            for (NodeId h = 0; h < n_; ++h) {
                if (!on[h]) continue;
                std::vector<NodeId> close;
                for (NodeId j = 0; j < n_; ++j) {
                    if (j != h && on[j] && near(h, j)) close.push_back(j);
                }
                std::size_t bad = 0;
                for (std::size_t a = 0; a < close.size(); ++a) {
                    for (std::size_t b = a + 1; b < close.size(); ++b) bad += near(close[a], close[b]) ? 0 : 1;
                }
                const bool worse = bad > worst_bad || (bad == worst_bad && bad > 0 &&
                                                       (close.size() > worst_near ||
                                                        (close.size() == worst_near && nic(h) < nic(worst))));
                if (worse) {
                    worst = h;
                    worst_bad = bad;
                    worst_near = close.size();
                }
            }
            if (worst_bad == 0) return on;
            on[worst] = 0;
        }
    }

    [[nodiscard]] double nic(NodeId h) const { return std::min(eg_[h], in_[h]); }

    /// `found` becomes the model's subnets, with no uplink measured yet.
    void use(const Subnets& found) {
        model_ = Model{eg_, in_, std::vector<std::size_t>(n_, none), std::vector<double>(found.size(), inf)};
        for (std::size_t k = 0; k < found.size(); ++k) {
            for (NodeId h : found[k]) model_.subnet[h] = k;
        }
    }

    // 6b. A subnet needs a reason: an uplink that limits flows out of or into it, or
    // latency that sets it apart. One that has neither was set apart by noise in its pair
    // rates (a busy machine, a reading too high for a NIC): its hosts are placed like those
    // set aside; none left with a reason: one subnet. Whether anything changed.
    bool dissolve(Subnets& found, std::vector<char>& informative) {
        std::vector<std::size_t> group(n_, none);  // by latency alone
        std::vector<NodeId> ids;
        for (NodeId h = 0; h < n_; ++h) {
            if (informative[h]) ids.push_back(h);
        }
        const Subnets by_latency = eco_partition(latency_costs(informative), opt_.tolerance);
        for (std::size_t g = 0; g < by_latency.size(); ++g) {
            for (NodeId a : by_latency[g]) group[ids[a]] = g;
        }
        const auto apart = [&](std::size_t k) {
            for (NodeId h : found[k]) {
                for (NodeId j = 0; j < n_; ++j) {
                    if (informative[j] && model_.subnet[j] != k && group[j] == group[h]) return false;
                }
            }
            return true;
        };
        Subnets kept, gone;
        for (std::size_t k = 0; k < found.size(); ++k) {
            (std::isfinite(model_.uplink[k]) || apart(k) ? kept : gone).push_back(found[k]);
        }
        if (gone.empty()) return false;
        if (kept.empty()) {
            out_.notes.push_back("no uplink limits the flows between the " + std::to_string(found.size()) +
                                 " subnets the pair rates suggested, nor does latency set them apart: one subnet");
            kept.emplace_back();
            for (const auto& g : gone) kept[0].insert(kept[0].end(), g.begin(), g.end());
        } else {
            for (const auto& g : gone) {
                out_.notes.push_back("subnet of " + name(g[0]) +
                                     ": neither its uplink nor latency sets it apart; its hosts are placed like those set aside");
                for (NodeId h : g) informative[h] = 0;
            }
        }
        found = std::move(kept);
        use(found);
        return true;
    }

    /// The cost without the bandwidth term, over the informative hosts: the latency part of
    /// moving the message, on top of the time the NICs allow.
    [[nodiscard]] Matrix latency_costs(const std::vector<char>& informative) const {
        Matrix out;
        for (NodeId i = 0; i < n_; ++i) {
            if (!informative[i]) continue;
            auto& row = out.emplace_back();
            for (NodeId j = 0; j < n_; ++j) {
                if (!informative[j]) continue;
                const auto part = [&](NodeId a, NodeId b) { return lat_[a][b] * std::min(eg_[a], in_[b]) / opt_.message; };
                row.push_back(i == j ? 0 : 1 + std::max(part(i, j), part(j, i)));
            }
        }
        return out;
    }

    // 5. ECO (§4.1) over the informative hosts.
    Subnets partition(const std::vector<char>& informative) const {
        std::vector<NodeId> ids;
        for (NodeId h = 0; h < n_; ++h) {
            if (informative[h]) ids.push_back(h);
        }
        const std::size_t m = ids.size();
        Matrix sub(m, std::vector<double>(m, 0));
        for (std::size_t a = 0; a < m; ++a) {
            for (std::size_t b = 0; b < m; ++b) sub[a][b] = cost_[ids[a]][ids[b]];
        }
        Subnets found;
        for (const auto& group : eco_partition(sub, opt_.tolerance)) {
            auto& out = found.emplace_back();
            for (NodeId a : group) out.push_back(ids[a]);
        }
        return found;
    }

    /// Up to `count` hosts outside subnet k, from the other subnets in turn (each one's
    /// fastest first), so that one slow uplink elsewhere does not hide a fast one here.
    static std::vector<NodeId> spread(const Subnets& subs, std::size_t k, const std::vector<double>& rate,
                                      std::size_t count) {
        std::vector<std::vector<NodeId>> lists;
        for (std::size_t l = 0; l < subs.size(); ++l) {
            if (l != k) lists.push_back(fastest(subs[l], rate));
        }
        std::vector<NodeId> out;
        for (std::size_t depth = 0; out.size() < count; ++depth) {
            bool any = false;
            for (const auto& list : lists) {
                if (depth < list.size() && out.size() < count) {
                    out.push_back(list[depth]);
                    any = true;
                }
            }
            if (!any) break;
        }
        return out;
    }

    static double sum_of(const std::vector<double>& v, std::size_t from, std::size_t to) {
        return std::accumulate(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to),
                               0.0);
    }

    // 6. Flows out of and into subnet k at once (they cross its uplink in opposite
    // directions); each aggregate is bounded by the uplink or by the other side.
    void measure_uplinks(const Subnets& found) {
        // With two subnets every flow out of one goes into the other: one measurement.
        for (std::size_t k = 0; k < (found.size() == 2 ? 1 : found.size()); ++k) {
            if (std::any_of(runs_.begin(), runs_.end(), [&](const UplinkRun& r) { return r.subnet == found[k]; })) continue;
            const auto senders = fastest(found[k], eg_), takers = fastest(found[k], in_);
            const auto outside_in = spread(found, k, in_, 3), outside_eg = spread(found, k, eg_, 3);
            UplinkRun run{found[k], {}, outside_in.size(), {}};
            for (std::size_t f = 0; f < outside_in.size(); ++f) run.flows.emplace_back(senders[f % senders.size()], outside_in[f]);
            // Into the subnet, each flow to the host after the one it would have sent to:
            // no host pair both ways (see design()).
            for (std::size_t f = 0; f < outside_eg.size(); ++f) {
                run.flows.emplace_back(outside_eg[f], takers[(f + (takers.size() > 1 ? 1 : 0)) % takers.size()]);
            }
            // Several flows share one slow link here, each measured over its own window: short
            // windows let their sum overshoot (a 30 Mbit/s uplink read up to 5% high in 0.3 s
            // windows, within 1% in windows twice as long). Fewer, longer passes.
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
    /// may have turned out to be in the same subnet after all: see dissolve()).
    double uplink_of(const UplinkRun& run, std::size_t k, const Subnets& found) {
        const auto crosses = [&](const FlowPair& f) {
            const std::size_t a = model_.subnet[f.first], b = model_.subnet[f.second];
            return a != none && b != none && a != b;
        };
        std::vector<FlowPair> out_flows, in_flows;
        std::vector<double> outs(run.passes.size(), 0), ins(run.passes.size(), 0);
        for (std::size_t f = 0; f < run.flows.size(); ++f) {
            if (!crosses(run.flows[f])) continue;
            (f < run.outs ? out_flows : in_flows).push_back(run.flows[f]);
            for (std::size_t p = 0; p < run.passes.size(); ++p) (f < run.outs ? outs : ins)[p] += run.passes[p][f];
        }
        if (out_flows.empty() && in_flows.empty()) return inf;
        const Model nics{eg_, in_, std::vector<std::size_t>(n_, none), {}};
        const auto nic_out = nics.rates(out_flows), nic_in = nics.rates(in_flows);
        // A capacity: the most the link carried in a pass. Load elsewhere only lowers a
        // pass, and the long windows keep one from overshooting (see measure_uplinks).
        const double agg_out = *std::max_element(outs.begin(), outs.end());
        const double agg_in = *std::max_element(ins.begin(), ins.end()), slack = 1 + opt_.tolerance;
        const bool nic_bound = (!out_flows.empty() && agg_out * slack >= sum_of(nic_out, 0, nic_out.size())) ||
                               (!in_flows.empty() && agg_in * slack >= sum_of(nic_in, 0, nic_in.size()));
        if (nic_bound) {
            out_.notes.push_back("subnet of " + name(found[k][0]) + ": flows out of and into it reached what the NICs allow (" +
                                 mbit(agg_out) + " out, " + mbit(agg_in) + " in): its uplink is not a bottleneck");
        }
        return nic_bound ? inf : std::max(agg_out, agg_in);
    }

    // 7. Candidates by affinity, then latency: pairs inside the host's own subnet are never
    // slowed by other pairs of their round, those across often are. The first test that
    // shows sharing places the host; none: the first candidate, and a note says so.
    void place(NodeId h, const Subnets& core, Subnets& found) {
        std::vector<std::size_t> order(core.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::vector<double> near(core.size());
        std::vector<long> fit(core.size());
        for (std::size_t k = 0; k < core.size(); ++k) {
            std::vector<double> l;
            double a = 0;
            for (NodeId j : core[k]) {
                l.push_back(std::min(lat_[h][j], lat_[j][h]));
                a += aff_[h][j] / static_cast<double>(core[k].size());
            }
            near[k] = median(l);
            fit[k] = std::lround(a * 50);  // steps of 0.02: within the noise, latency decides
        }
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return fit[a] != fit[b] ? fit[a] > fit[b] : near[a] < near[b];
        });
        std::size_t where = order[0];
        std::string why = core.size() == 1 ? "(the only subnet)"
                                           : "by affinity and latency: too slow for a sharing test to show an uplink";
        // The own subnet is nearly always one of the first two (pairs inside it are never
        // slowed by others of their round): testing the rest costs more than it finds.
        const std::vector<std::size_t> tested(order.begin(), order.begin() + std::min<std::size_t>(order.size(), max_tested));
        for (std::size_t a : core.size() >= 2 ? tested : std::vector<std::size_t>{}) {
            const auto d = design(model_, h, a, core);
            if (!d) continue;
            why = "by affinity and latency: no sharing test (of the first two) showed an uplink";
            // Passes until most of them agree on which side of half the predicted drop the
            // drop is (the side of their median); a baseline measured for another host is reused.
            auto& base = baselines_[d->base];
            std::vector<double> drops;
            std::size_t shared = 0;
            for (int p = 0; p < opt_.repeats; ++p) {
                if (base.size() <= static_cast<std::size_t>(p)) base.push_back(once(d->base, "placing"));
                const auto with = once(d->test, "placing");
                double s = 0;
                for (std::size_t f = 0; f < d->base.size(); ++f) s += std::log(with[f] / base[p][f]);
                drops.push_back(s);
                shared += s / d->log_drop > 0.5 ? 1 : 0;
                const auto half = static_cast<std::size_t>(opt_.repeats) / 2;
                if (shared > half || drops.size() - shared > half) break;
            }
            if (shared * 2 > drops.size()) {
                const auto watched = static_cast<double>(d->base.size());
                where = a;
                why = "by a sharing test: " + flow_name(d->base[0]) + (d->base.size() > 1 ? " and " + flow_name(d->base[1]) : "") +
                      " kept " + percent(std::exp(median(drops) / watched)) + " of their rate with its flows (" +
                      percent(std::exp(d->log_drop / watched)) + " predicted)";
                break;
            }
        }
        found[where].push_back(h);
        model_.subnet[h] = where;
        out_.notes.push_back(name(h) + ": NIC-bound (" + mbit(eg_[h]) + " out, " + mbit(in_[h]) +
                             " in) towards hosts on both sides of an uplink; placed with " + name(core[where][0]) +
                             " " + why);
    }

    // 8. Canonical order, capacities, and B_ij.
    void finish(Subnets& found) {
        std::vector<std::string> notes;  // an uplink evaluated twice says so once
        for (auto& note : out_.notes) {
            if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(std::move(note));
        }
        out_.notes = std::move(notes);
        std::vector<std::size_t> order(found.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        for (auto& sub : found) std::sort(sub.begin(), sub.end());
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return found[a][0] < found[b][0]; });
        out_.subnets.clear();
        std::vector<double> uplink;
        for (std::size_t k : order) {
            out_.subnets.push_back(found[k]);
            uplink.push_back(model_.uplink[k]);
        }
        std::vector<std::size_t> sub(n_);
        for (std::size_t k = 0; k < out_.subnets.size(); ++k) {
            for (NodeId h : out_.subnets[k]) sub[h] = k;
        }
        out_.capacities = Capacities{eg_, in_, std::vector<double>(n_, inf), {}};
        if (out_.subnets.size() >= 2) out_.capacities.uplink = uplink;
        out_.goodput = g_;
        out_.bandwidth.assign(n_, std::vector<double>(n_, 0));
        for (NodeId i = 0; i < n_; ++i) {
            for (NodeId j = 0; j < n_; ++j) {
                if (i == j) continue;
                // A pair across an uplink may have shared it in its round: the model's view.
                out_.bandwidth[i][j] = sub[i] == sub[j] ? g_[i][j]
                                                        : std::min({eg_[i], in_[j], uplink[sub[i]], uplink[sub[j]]});
            }
        }
    }

    const Matrix& lat_;
    const MeasureFlows& measure_;
    const ProbeOptions& opt_;
    const std::size_t n_;
    Matrix g_, aff_, cost_;
    std::vector<double> eg_, in_;
    Model model_;
    std::map<std::vector<FlowPair>, std::vector<std::vector<double>>> baselines_;  ///< [pass][flow]
    std::vector<UplinkRun> runs_;
    ProbeResult out_;
};

void check(const Matrix& latency, const ProbeOptions& opt) {
    const std::size_t n = latency.size();
    if (n < 2) throw InputError("probe: at least two hosts");
    for (std::size_t i = 0; i < n; ++i) {
        if (latency[i].size() != n) throw InputError("probe: the latency matrix is not square");
        for (std::size_t j = 0; j < n; ++j) {
            if (i != j && !(std::isfinite(latency[i][j]) && latency[i][j] >= 0)) {
                throw InputError("probe: latency[" + std::to_string(i) + "][" + std::to_string(j) +
                                 "] must be non-negative and finite");
            }
        }
    }
    if (!(opt.tolerance >= 0 && opt.tolerance <= 10)) throw InputError("probe: tolerance must be between 0 and 10");
    if (opt.repeats < 1 || opt.repeats > 100) throw InputError("probe: repeats must be between 1 and 100");
    if (!(opt.seconds > 0 && opt.seconds <= 60)) throw InputError("probe: seconds must be above 0 and at most 60");
    if (!(opt.message > 0 && std::isfinite(opt.message))) throw InputError("probe: the message size must be positive");
    if (!opt.names.empty() && opt.names.size() != n) throw InputError("probe: one name per host");
}

}  // namespace

ProbeResult probe_capacities(const Matrix& latency, const MeasureFlows& measure, const ProbeOptions& options) {
    check(latency, options);
    if (!measure) throw InputError("probe: no way to measure");
    return Prober(latency, measure, options).run();
}

std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> round_robin(std::uint32_t n) {
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> rounds;
    if (n < 2) return rounds;
    const std::uint32_t m = n % 2 ? n + 1 : n;  // a ghost player when n is odd
    std::vector<std::uint32_t> ring(m);
    for (std::uint32_t i = 0; i < m; ++i) ring[i] = i;
    for (std::uint32_t r = 0; r + 1 < m; ++r) {
        auto& round = rounds.emplace_back();
        for (std::uint32_t k = 0; k < m / 2; ++k) {
            const auto a = ring[k], b = ring[m - 1 - k];
            if (a < n && b < n) round.emplace_back(std::min(a, b), std::max(a, b));
        }
        std::rotate(ring.begin() + 1, ring.end() - 1, ring.end());  // player 0 stays put
    }
    return rounds;
}

}  // namespace hetcast
