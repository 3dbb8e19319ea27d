#include "hetcast/map/probe.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "hetcast/error.hpp"
#include "hetcast/map/eco.hpp"
#include "prober.hpp"

namespace hetcast {
namespace probing {
namespace {

/// `pending` in sets of at most `size` flows in which no host sends twice or receives twice
/// and no host pair goes both ways (like the pair rounds), first fit.
std::vector<std::vector<FlowPair>> pack(const std::vector<FlowPair>& pending, std::size_t size) {
    std::vector<std::vector<FlowPair>> sets;
    for (const FlowPair& f : pending) {
        const auto fits = [&](const std::vector<FlowPair>& s) {
            return s.size() < size && std::none_of(s.begin(), s.end(), [&](const FlowPair& g) {
                       return g.first == f.first || g.second == f.second || (g.first == f.second && g.second == f.first);
                   });
        };
        const auto it = std::find_if(sets.begin(), sets.end(), fits);
        (it == sets.end() ? sets.emplace_back() : *it).push_back(f);
    }
    return sets;
}

}  // namespace

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

ProbeResult Prober::run() {
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
    // Hosts ECO placed that receive much faster than they send: their ingress from their
    // own subnets, all in one measurement, from senders that receive none of it (7a)...
    std::vector<FlowPair> refresh;
    std::vector<char> hinted(n_, 0), sending(n_, 0);
    for (NodeId h = 0; h < n_; ++h) {
        if (!informative[h] || found.size() < 2 || model_.subnet[h] == none || !(in_[h] > (1 + opt_.tolerance) * eg_[h])) continue;
        // ... and slower than the others of its subnet receive: else nothing held it back.
        std::vector<double> others;
        for (NodeId j : found[model_.subnet[h]]) {
            if (j != h) others.push_back(in_[j]);
        }
        hinted[h] = !others.empty() && in_[h] * (1 + opt_.tolerance) < median(others);
    }
    for (NodeId h = 0; h < n_; ++h) {
        if (!hinted[h] || model_.subnet[h] == none) continue;
        for (NodeId j : fastest(found[model_.subnet[h]], eg_)) {
            if (hinted[j] || sending[j]) continue;
            refresh.emplace_back(j, h);
            sending[j] = 1;
            break;
        }
    }
    // One pass: a reading load elsewhere lowered raises nothing (the larger counts).
    if (!refresh.empty()) receive_only(refresh, 1);
    split_hidden(found, informative);
    finish(found);
    return std::move(out_);
}

std::vector<double> measure_once(const MeasureFlows& measure, const ProbeOptions& opt, ProbeResult& out,
                                 const std::vector<FlowPair>& flows, std::string_view phase, double scale) {
    if (opt.progress) opt.progress(phase, out.measurements);
    std::vector<double> r = measure(flows, opt.seconds * scale);
    ++out.measurements;
    out.measured_seconds += opt.seconds * scale;
    out.flows += flows.size();
    if (r.size() != flows.size()) {
        throw Error("probe: a measurement of " + std::to_string(flows.size()) + " flows returned " +
                    std::to_string(r.size()) + " rates");
    }
    const auto name = [&](NodeId i) { return i < opt.names.size() ? opt.names[i] : std::to_string(i); };
    for (std::size_t k = 0; k < r.size(); ++k) {
        if (r[k] == 0 || !rated(r[k])) {
            r[k] = std::nan("");
        } else if (!std::isfinite(r[k]) || r[k] < 0) {
            throw Error("probe: flow " + name(flows[k].first) + " -> " + name(flows[k].second) + " measured " +
                        std::to_string(r[k]) + " bytes/s, not a rate (0 or NaN: not measured)");
        }
    }
    if (opt.record) opt.record(phase, flows, r);
    return r;
}

/// One call of the callback, checked; a flow it could not rate (0 or NaN) is NaN.
std::vector<double> Prober::once(const std::vector<FlowPair>& flows, std::string_view phase, double scale) {
    return measure_once(measure_, opt_, out_, flows, phase, scale);
}

/// Every set measured `count` times (default: `repeats`), windows `scale` times the
/// usual, the passes one after the other so that what disturbs the network for a while
/// hits different sets: [set][pass][flow].
std::vector<std::vector<std::vector<double>>> Prober::passes(const std::vector<std::vector<FlowPair>>& sets,
                                                             std::string_view phase, double scale, int count) {
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
void Prober::measure_pairs() {
    for (std::size_t r = 1; r < n_; ++r) {
        // Half way round (even n) every pair would go both ways: two rounds of half each.
        const bool halves = 2 * r == n_;
        for (std::size_t half = 0; half < (halves ? 2 : 1); ++half) {
            auto& s = sets_.emplace_back();
            for (std::size_t i = 0; i < n_; ++i) {
                if (!halves || (i < r) == (half == 0)) s.emplace_back(static_cast<NodeId>(i), static_cast<NodeId>((i + r) % n_));
            }
        }
    }
    const auto got = passes(sets_, "pairs");
    g_.assign(n_, std::vector<double>(n_, std::nan("")));
    top_ = g_;
    with_.assign(n_, std::vector<std::size_t>(n_, none));
    std::vector<FlowPair> failed;
    std::size_t largest = 0;
    for (std::size_t s = 0; s < sets_.size(); ++s) {
        for (std::size_t f = 0; f < sets_[s].size(); ++f) {
            std::vector<double> v;
            for (const auto& pass : got[s]) v.push_back(pass[f]);
            const auto [i, j] = sets_[s][f];
            // A flow that starved in one pass may have crawled in the others: all of its
            // readings are measured again.
            if (std::all_of(v.begin(), v.end(), rated)) {
                g_[i][j] = median(v);
                top_[i][j] = *std::max_element(v.begin(), v.end());
                with_[i][j] = s;
            } else {
                failed.push_back(sets_[s][f]);
                largest = std::max(largest, sets_[s].size());
            }
        }
    }
    if (!failed.empty()) again(failed, largest);
}

// 1b. Flows a round could not rate, in rounds of half the size, then alone: on FIFO links
// a crowd can leave one TCP flow with nothing in its window. Alone, one reading of the
// passes is enough; a flow none rates stays NaN (estimated in finish()).
void Prober::again(std::vector<FlowPair> pending, std::size_t size) {
    while (!pending.empty() && size > 1) {
        size = std::max<std::size_t>(1, size / 2);
        const auto sets = pack(pending, size);
        const auto got = passes(sets, "again");
        pending.clear();
        for (std::size_t s = 0; s < sets.size(); ++s) {
            const std::size_t index = sets_.size();
            sets_.push_back(sets[s]);
            for (std::size_t f = 0; f < sets[s].size(); ++f) {
                std::vector<double> v;
                for (const auto& pass : got[s]) {
                    if (rated(pass[f])) v.push_back(pass[f]);
                }
                const auto [i, j] = sets[s][f];
                if (v.size() == got[s].size() || (size == 1 && !v.empty())) {
                    g_[i][j] = median(v);
                    top_[i][j] = *std::max_element(v.begin(), v.end());
                    with_[i][j] = index;
                } else {
                    pending.push_back(sets[s][f]);
                }
            }
        }
    }
    for (const FlowPair& f : pending) out_.unmeasured.push_back(f);
}

// 2. A host's best partners are in its own subnet: only the NICs limit those pairs. The
// median of the pairs near the best, not the best: the largest of several noisy
// readings of one rate is too large.
void Prober::nic_rates() {
    const auto estimate = [&](NodeId h, bool out) {
        std::vector<double> v;
        for (NodeId j = 0; j < n_; ++j) {
            if (j != h && rated(out ? g_[h][j] : g_[j][h])) v.push_back(out ? g_[h][j] : g_[j][h]);
        }
        if (v.empty()) {
            throw Error("probe: no flow " + std::string(out ? "out of " : "into ") + name(h) +
                        " could be measured, alone either");
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

/// How much of what the NICs allow a pair gets, the worse direction measured; orders the
/// candidate subnets of a host set aside.
void Prober::affinities() {
    aff_.assign(n_, std::vector<double>(n_, 1));
    for (NodeId i = 0; i < n_; ++i) {
        for (NodeId j = 0; j < n_; ++j) {
            if (i == j) continue;
            if (measured(i, j)) aff_[i][j] = std::min(aff_[i][j], g_[i][j] / std::min(eg_[i], in_[j]));
            if (measured(j, i)) aff_[i][j] = std::min(aff_[i][j], g_[j][i] / std::min(eg_[j], in_[i]));
        }
    }
}

/// The time to move the representative message i→j over what the NICs alone allow (NaN
/// when the pair was not measured).
double Prober::normalised(NodeId i, NodeId j) const {
    const double r = std::min(eg_[i], in_[j]);
    return lat_[i][j] * r / opt_.message + r / top_[i][j];
}

// 3. An entry below 1 (a pair above its NICs' medians) is noise. A direction not measured
// leaves the other; a pair measured neither way costs what the cheapest path between them
// costs at its dearest edge (the subnets ECO finds are the same with and without it).
void Prober::costs() {
    cost_.assign(n_, std::vector<double>(n_, 0));
    std::vector<FlowPair> blind;
    for (NodeId i = 0; i < n_; ++i) {
        for (NodeId j = 0; j < n_; ++j) {
            if (i == j) continue;
            const double a = normalised(i, j), b = normalised(j, i);
            cost_[i][j] = rated(a) && rated(b) ? std::max(a, b) : rated(a) ? a : b;
            if (!rated(cost_[i][j])) {
                cost_[i][j] = inf;
                blind.emplace_back(i, j);
            }
        }
    }
    for (const auto& [i, j] : blind) {
        double best = inf;
        for (NodeId k = 0; k < n_; ++k) {
            if (k != i && k != j) best = std::min(best, std::max(cost_[i][k], cost_[k][j]));
        }
        cost_[i][j] = std::isfinite(best) ? best : 1;
    }
}

// 4. A host near two hosts that are not near each other is NIC-bound on both sides of
// an uplink: its rates cannot say where it is, and ECO would join the subnets through
// it. Near is ECO's own test (within 1 + tolerance of both hosts' cheapest edge). The
// worst goes first (ties: the one near more hosts, then the slower), so that one such
// host does not cost its neighbours their place.
std::vector<char> Prober::set_aside() const {
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

/// `found` becomes the model's subnets, with no uplink measured yet.
void Prober::use(const Subnets& found) {
    model_ = Model{eg_, in_, std::vector<std::size_t>(n_, none), std::vector<double>(found.size(), inf)};
    for (std::size_t k = 0; k < found.size(); ++k) {
        for (NodeId h : found[k]) model_.subnet[h] = k;
    }
}

// 6b. A subnet needs a reason: an uplink that limits flows out of or into it, or
// latency that sets it apart. One that has neither was set apart by noise in its pair
// rates (a busy machine, a reading too high for a NIC): its hosts are placed like those
// set aside; none left with a reason: one subnet. Whether anything changed.
bool Prober::dissolve(Subnets& found, std::vector<char>& informative) {
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
        if (found[k].size() == 1 && set_apart_.count(found[k][0])) return true;
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
Matrix Prober::latency_costs(const std::vector<char>& informative) const {
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
Subnets Prober::partition(const std::vector<char>& informative) const {
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

// 8. Canonical order, capacities, and B_ij.
void Prober::finish(Subnets& found) {
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
        std::string doubt;
        for (NodeId h : found[k]) {
            const auto it = doubt_.find(h);
            if (it != doubt_.end()) doubt += (doubt.empty() ? "" : "; ") + it->second;
        }
        out_.doubts.push_back(std::move(doubt));
        uplink.push_back(model_.uplink[k]);
    }
    std::vector<std::size_t> sub(n_);
    for (std::size_t k = 0; k < out_.subnets.size(); ++k) {
        for (NodeId h : out_.subnets[k]) sub[h] = k;
    }
    estimate_unmeasured(sub, uplink);
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
            // Read while its receiver sent too, into a host whose ingress 7a then measured
            // receiving only: behind a FIFO NIC that host's ACKs waited behind its own data,
            // so the reading is what it takes in while sending. Inside a subnet nothing else
            // limits the pair. (netlab's random --seed 20, all-FIFO: a5, 100 Mbit/s in and
            // 13 out, read 12-18 from its subnet's hosts, and pipeline fed it from a relay at
            // half that relay's NIC: 1.41x the bound.) Other pairs keep their readings, which
            // behind FIFO NICs carry what the capacities do not (seed 4: 1.01x on them, 1.23x
            // on the capacities' view).
            if (sub[i] == sub[j] && alone_.count(j) && measured(i, j) && !receiving_.count(with_[i][j])) {
                out_.bandwidth[i][j] = std::max(g_[i][j], std::min(eg_[i], in_[j]));
            }
        }
    }
}

}  // namespace probing

namespace {

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
    probing::check_options(opt, n);
}

}  // namespace

namespace probing {

void check_options(const ProbeOptions& opt, std::size_t n) {
    if (!(opt.tolerance >= 0 && opt.tolerance <= 10)) throw InputError("probe: tolerance must be between 0 and 10");
    if (opt.repeats < 1 || opt.repeats > 100) throw InputError("probe: repeats must be between 1 and 100");
    if (!(opt.seconds > 0 && opt.seconds <= 60)) throw InputError("probe: seconds must be above 0 and at most 60");
    if (!(opt.message > 0 && std::isfinite(opt.message))) throw InputError("probe: the message size must be positive");
    if (!opt.names.empty() && opt.names.size() != n) throw InputError("probe: one name per host");
}

}  // namespace probing

ProbeResult probe_capacities(const Matrix& latency, const MeasureFlows& measure, const ProbeOptions& options) {
    if (options.structure_hosts > 0 && latency.size() >= options.structure_hosts) {
        return probe_structure(latency.size(), measure, options, latency);
    }
    check(latency, options);
    if (!measure) throw InputError("probe: no way to measure");
    return probing::Prober(latency, measure, options).run();
}

Matrix latency_by_kind(const Matrix& latency, const Subnets& subnets) {
    const std::size_t n = latency.size();
    constexpr std::size_t none = ~std::size_t{0};
    std::vector<std::size_t> sub(n, none);
    for (std::size_t k = 0; k < subnets.size(); ++k) {
        for (NodeId h : subnets[k]) {
            if (h >= n) throw InputError("latency_by_kind: host " + std::to_string(h) + " is not in the matrix");
            sub[h] = k;
        }
    }
    const auto inside = [&](std::size_t i, std::size_t j) { return sub[i] != none && sub[i] == sub[j]; };
    std::vector<double> in, across;
    for (std::size_t i = 0; i < n; ++i) {
        if (latency[i].size() != n) throw InputError("latency_by_kind: the matrix is not square");
        for (std::size_t j = 0; j < n; ++j) {
            if (i != j && !std::isnan(latency[i][j])) (inside(i, j) ? in : across).push_back(latency[i][j]);
        }
    }
    const double m_in = in.empty() ? 0 : probing::median(in);
    const double m_across = across.empty() ? m_in : probing::median(across);
    Matrix out(n, std::vector<double>(n, 0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i != j) out[i][j] = inside(i, j) ? m_in : m_across;
        }
    }
    return out;
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
