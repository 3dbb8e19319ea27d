// Structure first (map/probe.hpp, probe_structure()), once the subnets are known: one NIC
// test per host, uplink tests between subnets, the result; and a host joining a mapped site.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <set>

#include "hetcast/error.hpp"
#include "probe_structure.hpp"
#include "prober.hpp"

namespace hetcast {
namespace probing {

// A host's NIC rates: the most its flows inside its subnet carried (those share nothing
// but the NICs).
void Structure::nic_estimates() {
    std::fill(eg_.begin(), eg_.end(), 0.0);
    std::fill(in_.begin(), in_.end(), 0.0);
    for (const auto& g : subs_) {
        for (NodeId a : g) {
            for (NodeId b : g) {
                const double x = a == b ? std::nan("") : reading(a, b);
                if (std::isnan(x)) continue;
                eg_[a] = std::max(eg_[a], x);
                in_[b] = std::max(in_[b], x);
            }
        }
    }
}

// NIC tests: a host whose best flow out went no faster than some member of its subnet
// receives sends to the fastest such receiver free in this measurement (likewise into it,
// from the fastest sender): a reading that does not rise then is its own NIC's. Every
// subnet at once, each host one flow each way per measurement, flows that cross no uplink;
// again (at most eight times) while a host has a faster partner left.
void Structure::nics() {
    nic_estimates();
    const double margin = 1 + opt_.tolerance / 4;
    std::set<std::uint64_t> tried;
    // A host whose reading stayed below its faster partner's rate has shown its own NIC.
    std::vector<char> done_out(n_, 0), done_in(n_, 0);
    const auto pair_key = [](NodeId a, NodeId b) { return (static_cast<std::uint64_t>(a) << 32) | b; };
    // Hosts that read alike with half their subnet or more, at its top rate, tie: a flow
    // between two of them cannot tell which limits it, and partner after partner (eight
    // each, two passes: a third of a 48-host probe) read the same. Their rate is what their
    // subnet can show.
    // Alike: within a quarter of the tolerance (half of it left two NICs of 5000 wrong), or
    // within the noise where readings are noisier, up to half of it: the median ratio of a
    // flow's two passes inside a subnet. On netlab at 48 hosts that is 1.08-1.13 (the
    // estimates, each the largest of a dozen readings, spread 19-21.6 for 20 Mbit/s NICs,
    // and none tied: 16 measurements that found nothing); the flow model's 5% noise, 1.03.
    std::vector<double> noise;
    for (const auto& [k, ratio] : pass_ratio_) {
        const std::size_t a = sub_[k >> 32], b = sub_[k & 0xffffffffu];
        if (a != none && a == b) noise.push_back(ratio);
    }
    double typical = 1;
    if (!noise.empty()) {
        std::nth_element(noise.begin(), noise.begin() + static_cast<std::ptrdiff_t>(noise.size() / 2), noise.end());
        typical = noise[noise.size() / 2];
    }
    const double alike_within = std::clamp(typical, margin, 1 + opt_.tolerance / 2);
    // Per subnet, the top rate each way (the tied hosts' level).
    std::vector<double> top_out(subs_.size(), 0), top_in(subs_.size(), 0);
    for (const bool out : {true, false}) {
        const auto& rate = out ? eg_ : in_;
        auto& done = out ? done_out : done_in;
        for (std::size_t k = 0; k < subs_.size(); ++k) {
            const auto& g = subs_[k];
            double& top = out ? top_out[k] : top_in[k];
            for (NodeId h : g) top = std::max(top, rate[h]);
            if (g.size() < 3) continue;
            for (NodeId h : g) {
                const auto alike = std::count_if(g.begin(), g.end(), [&](NodeId o) {
                    return rate[o] <= rate[h] * alike_within && rate[h] <= rate[o] * alike_within;
                });
                if (rate[h] * alike_within >= top && 2 * static_cast<std::size_t>(alike) >= g.size()) done[h] = 1;
            }
        }
    }
    for (int round = 0; round < 8; ++round) {
        std::vector<FlowPair> flows;
        std::set<std::uint64_t> in_call;
        std::vector<char> sends(n_, 0), takes(n_, 0);
        const auto add = [&](NodeId a, NodeId b) {
            if (a == b || sends[a] || takes[b] || tried.count(pair_key(a, b)) || in_call.count(pair_key(b, a))) return false;
            flows.emplace_back(a, b);
            in_call.insert(pair_key(a, b));
            tried.insert(pair_key(a, b));
            sends[a] = takes[b] = 1;
            return true;
        };
        for (const auto& g : subs_) {
            if (g.size() < 2) continue;
            // What a partner may carry: a NIC that has not shown its own limit (no fast partner
            // reached it yet) may be faster than it read either way.
            std::vector<double> can_in(n_, 0), can_out(n_, 0);
            for (NodeId h : g) {
                can_in[h] = done_in[h] ? in_[h] : 2 * std::max(eg_[h], in_[h]);
                can_out[h] = done_out[h] ? eg_[h] : 2 * std::max(eg_[h], in_[h]);
            }
            const auto receivers = by_rate(g, can_in), senders = by_rate(g, can_out);
            for (NodeId h : senders) {
                if (done_out[h]) continue;
                for (NodeId j : receivers) {
                    if (!(can_in[j] > eg_[h] * margin)) break;
                    if (add(h, j)) break;
                }
            }
            for (NodeId h : receivers) {
                if (done_in[h]) continue;
                for (NodeId j : senders) {
                    if (!(can_out[j] > in_[h] * margin)) break;
                    if (add(j, h)) break;
                }
            }
        }
        if (flows.empty()) break;
        const std::vector<double> cap_in = in_, cap_out = eg_;
        const std::vector<char> was_out = done_out, was_in = done_in;
        const auto got = run_flows(flows, "nics");
        for (std::size_t f = 0; f < flows.size(); ++f) {
            const auto [a, b] = flows[f];
            if (std::isnan(got[f])) continue;
            // Below what the partner was already seen to carry that way: this host's own limit.
            if (got[f] * tol() < cap_in[b]) done_out[a] = 1;
            if (got[f] * tol() < cap_out[a]) done_in[b] = 1;
            // No more than before, within the noise, with a partner tied at the subnet's top:
            // no partner shows more, so this is what the host's NIC or its subnet allows.
            const std::size_t k = sub_[a];
            if (was_in[b] && cap_in[b] * alike_within >= top_in[k] && got[f] <= cap_out[a] * alike_within) done_out[a] = 1;
            if (was_out[a] && cap_out[a] * alike_within >= top_out[k] && got[f] <= cap_in[b] * alike_within) done_in[b] = 1;
        }
        nic_estimates();
        // A round that raised no host beyond the noise found nothing a next one would.
        bool rose = false;
        for (NodeId h = 0; h < n_; ++h) rose = rose || eg_[h] > cap_out[h] * alike_within || in_[h] > cap_in[h] * alike_within;
        if (!rose) break;
    }
    for (const auto& g : subs_) {
        if (g.size() >= 2) continue;
        // Alone in its subnet: the most any flow carried.
        const NodeId h = g[0];
        for (const auto& [k, x] : read_) {
            const auto from = static_cast<NodeId>(k >> 32), to = static_cast<NodeId>(k & 0xffffffffu);
            if (from == h) eg_[h] = std::max(eg_[h], x);
            if (to == h) in_[h] = std::max(in_[h], x);
        }
        if (why_[h].empty()) why_[h] = name(h) + " is alone in its subnet: its NIC rates are what flows across carried";
    }
}

// Uplinks: subnets ranked by what was seen to cross them, paired first to second, third to
// fourth, ..., then second to third, ...: each one meets a faster one, whose uplink hides
// nothing of its own. Each pair tests both ways at once, as many flows each way as the
// smaller has hosts (an uplink faster than any one host fills only with several), every
// uplink in one test per measurement. A sum the NICs alone explain limits nothing. The
// ranking is made again, twice at most, when the readings changed it.
void Structure::uplinks() {
    const std::size_t s = subs_.size();
    if (s < 2) return;
    nic_estimates();
    std::vector<std::pair<std::size_t, std::size_t>> unlimited;
    std::vector<double> seen(s, 0), open(s, 0);
    for (std::size_t k = 0; k < s; ++k) seen[k] = std::isfinite(up_[k]) ? up_[k] : 0;
    std::vector<std::size_t> previous;
    for (int iteration = 0; iteration < 2; ++iteration) {
        std::vector<std::size_t> rank(s);
        std::iota(rank.begin(), rank.end(), std::size_t{0});
        std::stable_sort(rank.begin(), rank.end(), [&](std::size_t a, std::size_t b) {
            return std::max(seen[a], open[a]) > std::max(seen[b], open[b]);
        });
        if (rank == previous) break;
        previous = rank;
        struct Test {
            std::size_t from, to;
            std::vector<FlowPair> flows;
        };
        std::vector<std::vector<Test>> tests(2);
        std::vector<std::vector<FlowPair>> sets(2);
        for (std::size_t shift = 0; shift < 2; ++shift) {
            for (std::size_t p = shift; p + 1 < s; p += 2) {
                const std::size_t a = rank[p], b = rank[p + 1];
                const auto a_out = by_rate(subs_[a], eg_), a_in = by_rate(subs_[a], in_);
                const auto b_out = by_rate(subs_[b], eg_), b_in = by_rate(subs_[b], in_);
                const std::size_t m = std::min(subs_[a].size(), subs_[b].size());
                Test ab{a, b, {}}, ba{b, a, {}};
                for (std::size_t f = 0; f < m; ++f) {
                    ab.flows.emplace_back(a_out[f], b_in[f]);
                    // Into a, each flow to the host after the one it would have come from.
                    ba.flows.emplace_back(b_out[f], a_in[(f + (m > 1 ? 1 : 0)) % m]);
                }
                for (Test* t : {&ab, &ba}) {
                    sets[shift].insert(sets[shift].end(), t->flows.begin(), t->flows.end());
                    tests[shift].push_back(std::move(*t));
                }
            }
        }
        std::vector<std::vector<double>> raw;
        (void)run_sets(sets, "uplinks", uplink_window_scale, &raw);
        for (std::size_t shift = 0; shift < 2; ++shift) {
            std::size_t at = 0;
            bool carried_before = false;
            for (std::size_t x = 0; x < tests[shift].size(); ++x) {
                const Test& t = tests[shift][x];
                double nic = 0;
                for (const auto& [i, j] : t.flows) nic += std::min(eg_[i], in_[j]);
                const double sum = pass_sum(raw[shift], sets[shift].size(), at, t.flows.size());
                at += t.flows.size();
                // Tests come in pairs, a to b then b to a: open both ways, nothing between them.
                const bool carried = sum * (1 + opt_.tolerance / 2) >= nic;
                if (x % 2 == 1 && carried && carried_before) unlimited.emplace_back(t.from, t.to);
                carried_before = carried;
                double& slot = sum * (1 + opt_.tolerance / 2) < nic ? seen[t.from] : open[t.from];
                slot = std::max(slot, sum);
                double& other = sum * (1 + opt_.tolerance / 2) < nic ? seen[t.to] : open[t.to];
                other = std::max(other, sum);
            }
        }
    }
    // Two subnets whose flows both ways carried what their NICs allow, as many as the smaller
    // has hosts, share no uplink: one subnet that the groups' tests did not join (netlab's
    // c5 and c6, whose test with the rest of c went through c7, a 5 Mbit/s sender, and read
    // it a third low). Joined, the uplinks are measured again.
    if (!unlimited.empty() && unite(unlimited)) {
        uplinks();
        return;
    }
    uplink_doubt_.assign(s, "");
    for (std::size_t k = 0; k < s; ++k) {
        if (seen[k] > 0 && seen[k] * (1 + opt_.tolerance / 2) >= open[k]) {
            up_[k] = seen[k];
        } else {
            up_[k] = inf;
            if (open[k] > 0) {
                uplink_doubt_[k] = "no test filled its uplink (" + mbit(open[k]) + " crossed it, as much as the NICs allow)";
            }
        }
    }
}

bool Structure::unite(const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
    UnionFind uf(subs_.size());
    for (const auto& [a, b] : pairs) uf.unite(a, b);
    Subnets subs;
    std::vector<double> up;
    std::vector<std::size_t> slot(subs_.size(), none);
    for (std::size_t k = 0; k < subs_.size(); ++k) {
        const std::size_t r = uf.find(k);
        if (slot[r] == none) {
            slot[r] = subs.size();
            subs.emplace_back();
            up.push_back(up_[k]);
        }
        subs[slot[r]].insert(subs[slot[r]].end(), subs_[k].begin(), subs_[k].end());
        if (r != k) up[slot[r]] = inf;
    }
    if (subs.size() == subs_.size()) return false;
    subs_ = std::move(subs);
    up_ = std::move(up);
    std::fill(sub_.begin(), sub_.end(), none);
    for (std::size_t k = 0; k < subs_.size(); ++k) {
        for (NodeId h : subs_[k]) sub_[h] = k;
    }
    return true;
}

// Canonical order (by lowest member, members ascending), capacities, how sure each subnet
// is, and the pair matrices when asked for.
void Structure::finish() {
    for (auto& g : subs_) std::sort(g.begin(), g.end());
    std::vector<std::size_t> order(subs_.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return subs_[a][0] < subs_[b][0]; });
    std::vector<double> uplink;
    std::vector<std::size_t> sub(n_, 0);
    for (std::size_t k : order) {
        const auto& g = subs_[k];
        for (NodeId h : g) sub[h] = out_.subnets.size();
        out_.subnets.push_back(g);
        uplink.push_back(up_[k]);
        std::string doubt;
        for (NodeId h : g) {
            if (!why_[h].empty()) doubt += (doubt.empty() ? "" : "; ") + why_[h];
        }
        if (k < uplink_doubt_.size() && !uplink_doubt_[k].empty()) {
            doubt += (doubt.empty() ? "" : "; ") + uplink_doubt_[k];
        }
        out_.doubts.push_back(std::move(doubt));
        if (subs_.size() >= 2 && std::isfinite(up_[k])) {
            // The weakest member: how far its best reading inside is above what crosses the uplink.
            double weakest = inf;
            for (NodeId h : g) {
                if (!why_[h].empty()) continue;
                double best = 0;
                for (NodeId o : g) {
                    if (o != h) best = std::max({best, reading(h, o) > 0 ? reading(h, o) : 0.0, reading(o, h) > 0 ? reading(o, h) : 0.0});
                }
                weakest = std::min(weakest, best / up_[k]);
            }
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.2f", weakest);
            out_.notes.push_back("subnet of " + name(g[0]) + " (" + std::to_string(g.size()) + " hosts): uplink " +
                                 mbit(up_[k]) + "; every member read " + buf +
                                 "x that or more inside (1 + tolerance needed)");
        }
    }
    std::string spent;
    for (const auto& [phase, cost] : spent_) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s%s %zu (%.1f s)", spent.empty() ? "" : ", ", phase.c_str(), cost.first, cost.second);
        spent += buf;
    }
    if (!spent.empty()) out_.notes.push_back("measurements by step: " + spent);
    out_.capacities = Capacities{eg_, in_, std::vector<double>(n_, inf), {}};
    if (out_.subnets.size() >= 2) out_.capacities.uplink = uplink;
    if (!opt_.pair_matrices) return;
    out_.goodput.assign(n_, std::vector<double>(n_, std::nan("")));
    out_.bandwidth.assign(n_, std::vector<double>(n_, 0));
    for (const auto& [k, x] : read_) out_.goodput[k >> 32][k & 0xffffffffu] = x;
    for (NodeId i = 0; i < n_; ++i) {
        for (NodeId j = 0; j < n_; ++j) {
            if (i == j) continue;
            double b = std::min(eg_[i], in_[j]);
            if (sub[i] != sub[j] && out_.subnets.size() >= 2) b = std::min({b, uplink[sub[i]], uplink[sub[j]]});
            out_.bandwidth[i][j] = b;
            if (std::isnan(out_.goodput[i][j])) out_.goodput[i][j] = b;
        }
    }
}

// A joining host: one measurement per subnet, a flow to its fastest receiver and one from
// its fastest sender; a reading above 1 + tolerance times the uplink places it (the first
// that does, nearest subnets first is the caller's order).
std::size_t Structure::join_one(NodeId host, const Subnets& known, const std::vector<double>& uplink,
                                const std::vector<double>& egress, const std::vector<double>& ingress) {
    subs_ = known;
    up_ = uplink;
    if (up_.size() != subs_.size()) up_.assign(subs_.size(), inf);
    eg_ = egress;
    in_ = ingress;
    std::size_t best = none;
    double best_evidence = 0;
    for (std::size_t k = 0; k < subs_.size(); ++k) {
        const auto takers = by_rate(subs_[k], in_), senders = by_rate(subs_[k], eg_);
        std::vector<FlowPair> flows{{host, takers[0]}};
        if (senders[0] != takers[0]) {
            flows.emplace_back(senders[0], host);
        } else if (senders.size() > 1) {
            flows.emplace_back(senders[1], host);
        }
        (void)run_flows(flows, "joining");
        // A subnet of one: its flow back in a measurement of its own (no pair both ways at
        // once), else the host would have no ingress from it.
        if (flows.size() == 1) (void)run_flows({{senders[0], host}}, "joining");
        const double e = evidence(host, k);
        if (e > best_evidence) {
            best_evidence = e;
            best = k;
        }
        if (std::isfinite(up_[k]) && e > 1) break;
    }
    double eg = 0, in = 0;
    if (best != none) {
        for (NodeId o : subs_[best]) {
            eg = std::max(eg, reading(host, o) > 0 ? reading(host, o) : 0.0);
            in = std::max(in, reading(o, host) > 0 ? reading(o, host) : 0.0);
        }
    }
    eg_.assign(n_, 0);
    in_.assign(n_, 0);
    eg_[host] = eg;
    in_[host] = in;
    if (best != none && best_evidence <= 1) {
        out_.doubts.push_back(name(host) + " placed by its best reading alone (" + std::to_string(best_evidence) +
                              " of what tells inside from across)");
    }
    return best;
}

// One subnet's uplink again: as many flows out of it as it has hosts (three at least) to the
// fastest receivers of the other subnets in turn, and as many into it from their fastest
// senders, all at once (they cross the uplink in opposite directions). A direction whose
// sum in its best pass falls short (by half the tolerance) of what the NICs and the other
// uplinks, as the map has them, allow it filled this uplink.
double Structure::uplink_one(std::size_t k, const Subnets& known, const std::vector<double>& uplink,
                             const std::vector<double>& egress, const std::vector<double>& ingress, std::string& doubt) {
    subs_ = known;
    up_ = uplink;
    eg_ = egress;
    in_ = ingress;
    const std::size_t count = std::max<std::size_t>(3, subs_[k].size());
    const auto senders = by_rate(subs_[k], eg_), takers = by_rate(subs_[k], in_);
    const auto to = spread(subs_, k, in_, count), from = spread(subs_, k, eg_, count);
    std::vector<FlowPair> flows;
    for (std::size_t f = 0; f < to.size(); ++f) flows.emplace_back(senders[f % senders.size()], to[f]);
    const std::size_t outs = flows.size();
    // Into it, each flow to the host after the one it would have sent to: no pair both ways.
    for (std::size_t f = 0; f < from.size(); ++f) {
        flows.emplace_back(from[f], takers[(f + (takers.size() > 1 ? 1 : 0)) % takers.size()]);
    }
    std::vector<std::vector<double>> raw;
    (void)run_sets({flows}, "uplinks", uplink_window_scale, &raw);
    // What the flows could carry if k's uplink held nothing: the NICs, and the other
    // uplinks as the map has them.
    Model free{eg_, in_, std::vector<std::size_t>(n_, none), up_};
    for (std::size_t l = 0; l < subs_.size(); ++l) {
        for (NodeId h : subs_[l]) free.subnet[h] = l;
    }
    free.uplink[k] = inf;
    // With two subnets every flow out of one goes into the other: only the slower uplink
    // shows, and the reading is both's (as in step 6).
    if (subs_.size() == 2) free.uplink.assign(2, inf);
    double seen = 0, open = 0;
    for (int dir = 0; dir < 2; ++dir) {
        const std::size_t first = dir == 0 ? 0 : outs, size = dir == 0 ? outs : flows.size() - outs;
        if (size == 0) continue;
        const std::vector<FlowPair> way(flows.begin() + static_cast<std::ptrdiff_t>(first),
                                        flows.begin() + static_cast<std::ptrdiff_t>(first + size));
        const auto allowed = free.rates(way);
        const double nic = std::accumulate(allowed.begin(), allowed.end(), 0.0);
        const double sum = pass_sum(raw[0], flows.size(), first, size);
        double& slot = sum * (1 + opt_.tolerance / 2) < nic ? seen : open;
        slot = std::max(slot, sum);
    }
    doubt.clear();
    if (seen > 0 && seen * (1 + opt_.tolerance / 2) >= open) return seen;
    if (open > 0) doubt = "no test filled its uplink (" + mbit(open) + " crossed it, as much as the NICs and the other uplinks allow)";
    return inf;
}

}  // namespace probing

UplinkResult probe_uplink(std::size_t hosts, std::size_t subnet, const Subnets& subnets, const Capacities& capacities,
                          const MeasureFlows& measure, const ProbeOptions& options) {
    if (subnets.size() < 2) throw InputError("probe: an uplink is measured against other subnets: the map has one");
    if (subnet >= subnets.size()) throw InputError("probe: no subnet " + std::to_string(subnet));
    if (capacities.egress.size() != hosts || capacities.ingress.size() != hosts) {
        throw InputError("probe: the map's capacities are not one per host");
    }
    if (!capacities.uplink.empty() && capacities.uplink.size() != subnets.size()) {
        throw InputError("probe: the map's uplinks are not one per subnet");
    }
    for (const auto& g : subnets) {
        if (g.empty()) throw InputError("probe: an empty subnet");
        for (NodeId h : g) {
            if (h >= hosts) throw InputError("probe: a subnet names host " + std::to_string(h) + " of " + std::to_string(hosts));
        }
    }
    probing::check_options(options, hosts);
    if (!measure) throw InputError("probe: no way to measure");
    const Matrix no_latency;
    probing::Structure s(hosts, no_latency, measure, options);
    const std::vector<double> uplink =
        capacities.uplink.empty() ? std::vector<double>(subnets.size(), std::numeric_limits<double>::infinity()) : capacities.uplink;
    UplinkResult out;
    out.uplink = s.uplink_one(subnet, subnets, uplink, capacities.egress, capacities.ingress, out.doubt);
    const ProbeResult r = s.result();
    out.measurements = r.measurements;
    out.measured_seconds = r.measured_seconds;
    out.flows = r.flows;
    return out;
}

ProbeResult probe_structure(std::size_t hosts, const MeasureFlows& measure, const ProbeOptions& options,
                            const Matrix& latency) {
    if (hosts < 2) throw InputError("probe: at least two hosts");
    if (!latency.empty() && latency.size() != hosts) throw InputError("probe: the latency matrix is not one row per host");
    for (std::size_t i = 0; i < latency.size(); ++i) {
        if (latency[i].size() != hosts) throw InputError("probe: the latency matrix is not square");
        for (std::size_t j = 0; j < hosts; ++j) {
            const double x = latency[i][j];
            if (i != j && !std::isnan(x) && !(std::isfinite(x) && x >= 0)) {
                throw InputError("probe: latency[" + std::to_string(i) + "][" + std::to_string(j) +
                                 "] must be non-negative and finite, or NaN (not pinged)");
            }
        }
    }
    if (hosts > 0xffffffffu) throw InputError("probe: too many hosts");
    probing::check_options(options, hosts);
    if (!measure) throw InputError("probe: no way to measure");
    return probing::Structure(hosts, latency, measure, options).run();
}

JoinResult probe_join(std::size_t hosts, NodeId host, const Subnets& subnets, const Capacities& capacities,
                      const MeasureFlows& measure, const ProbeOptions& options) {
    if (host >= hosts) throw InputError("probe: the joining host is not one of the hosts");
    if (capacities.egress.size() != hosts || capacities.ingress.size() != hosts) {
        throw InputError("probe: the map's capacities are not one per host");
    }
    if (!capacities.uplink.empty() && capacities.uplink.size() != subnets.size()) {
        throw InputError("probe: the map's uplinks are not one per subnet");
    }
    Subnets known;
    std::vector<double> uplink;
    for (std::size_t k = 0; k < subnets.size(); ++k) {
        std::vector<NodeId> g;
        for (NodeId h : subnets[k]) {
            if (h >= hosts) throw InputError("probe: a subnet names host " + std::to_string(h) + " of " + std::to_string(hosts));
            if (h != host) g.push_back(h);
        }
        if (g.empty()) continue;
        known.push_back(std::move(g));
        uplink.push_back(capacities.uplink.empty() ? std::numeric_limits<double>::infinity() : capacities.uplink[k]);
    }
    if (known.empty()) throw InputError("probe: the map has no other host to join");
    probing::check_options(options, hosts);
    if (!measure) throw InputError("probe: no way to measure");
    const Matrix no_latency;
    probing::Structure s(hosts, no_latency, measure, options);
    JoinResult out;
    const std::size_t k = s.join_one(host, known, uplink, capacities.egress, capacities.ingress);
    // The map's subnet index: `known` skipped subnets that held only the host.
    if (k != probing::none) {
        for (std::size_t j = 0, seen = 0; j < subnets.size(); ++j) {
            if (std::any_of(subnets[j].begin(), subnets[j].end(), [&](NodeId h) { return h != host; })) {
                if (seen++ == k) out.subnet = j;
            }
        }
    }
    out.egress = s.egress(host);
    out.ingress = s.ingress(host);
    ProbeResult r = s.result();
    out.doubt = r.doubts.empty() ? "" : r.doubts[0];
    out.measurements = r.measurements;
    out.measured_seconds = r.measured_seconds;
    out.flows = r.flows;
    return out;
}

}  // namespace hetcast
