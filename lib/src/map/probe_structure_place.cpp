// Structure first (map/probe.hpp, probe_structure(), steps c and d): hosts the groups left,
// joined to a subnet by a reading, else by a sharing test, else by latency.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "probe_structure.hpp"
#include "prober.hpp"

namespace hetcast::probing {

// Each host not in a subnet yet against the subnets, nearest in the operator's order first:
// a flow to a member and one from another, all such hosts at once (each member takes one
// flow each way per measurement), until a reading places it or it has met every subnet.
void Structure::join(std::vector<NodeId> pending) {
    const std::vector<NodeId> asked = pending;
    nic_estimates();
    std::vector<std::vector<std::size_t>> order(n_);
    std::vector<std::size_t> next(n_, 0);
    for (NodeId h : pending) {
        auto& o = order[h];
        o.resize(subs_.size());
        std::iota(o.begin(), o.end(), std::size_t{0});
        std::vector<std::size_t> dist(subs_.size(), none);
        for (std::size_t k = 0; k < subs_.size(); ++k) {
            for (NodeId m : subs_[k]) dist[k] = std::min<std::size_t>(dist[k], m > h ? m - h : h - m);
        }
        std::stable_sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return dist[a] < dist[b]; });
    }
    std::vector<std::vector<double>> failed(n_);  // readings of each host's tries that did not place it
    std::vector<double> best(n_, 0);                // each host's largest reading, out or in
    for (const auto& [key, x] : read_) {
        best[key >> 32] = std::max(best[key >> 32], x);
        best[key & 0xffffffffu] = std::max(best[key & 0xffffffffu], x);
    }
    std::vector<std::vector<NodeId>> senders(subs_.size()), takers(subs_.size());
    for (std::size_t k = 0; k < subs_.size(); ++k) {
        senders[k] = by_rate(subs_[k], eg_);
        takers[k] = by_rate(subs_[k], in_);
    }
    struct Try {
        NodeId h;
        std::size_t k, out, in;  // its flows' indices (in: none when the taker sends too)
    };
    while (!pending.empty()) {
        std::vector<FlowPair> flows;
        std::vector<Try> tried;
        std::vector<std::size_t> sent(subs_.size(), 0), taken(subs_.size(), 0);
        for (NodeId h : pending) {
            const std::size_t k = order[h][next[h]];
            if (sent[k] >= senders[k].size() || taken[k] >= takers[k].size()) continue;  // next measurement
            NodeId x = takers[k][taken[k]], y = senders[k][sent[k]];
            if (x == y && senders[k].size() > sent[k] + 1) y = senders[k][sent[k] + 1], ++sent[k];
            ++taken[k];
            ++sent[k];
            flows.emplace_back(h, x);
            if (y != x) flows.emplace_back(y, h);
            tried.push_back({h, k, flows.size() - (y != x ? 2 : 1), y != x ? flows.size() - 1 : none});
            tried_with_[h].push_back(x);
        }
        if (flows.empty()) break;
        const std::vector<double> got = run_flows(flows, "joining");
        for (std::size_t f = 0; f < flows.size(); ++f) {
            if (std::isnan(got[f])) continue;
            best[flows[f].first] = std::max(best[flows[f].first], got[f]);
            best[flows[f].second] = std::max(best[flows[f].second], got[f]);
        }
        std::vector<char> was_tried(n_, 0);
        for (const auto& [h, k, out, in] : tried) {
            was_tried[h] = 1;
            for (std::size_t f = 0; f < flows.size(); ++f) {
                if ((flows[f].first == h || flows[f].second == h) && !std::isnan(got[f])) failed[h].push_back(got[f]);
            }
            if (evidence(h, k) > 1) {
                sub_[h] = k;
                // A partner for the hosts still to test: with few members found (on a busy
                // netlab, 48 hosts took 17 rounds two or three at a time), their number grows.
                subs_[k].push_back(h);
                senders[k].push_back(h);
                takers[k].push_back(h);
                failed[h].clear();
            } else {
                ++next[h];
                // Two subnets that read alike, at the host's best rate anywhere: its own NIC
                // limits every flow of it, and no reading will place it (hosts-24's b3 tried
                // all four subnets, 8 of the probe's 44 measurements; netlab's hosts-96 b5 and
                // f3 all eight). The sharing test's.
                if (failed[h].size() >= 4) {
                    const auto [lo, hi] = std::minmax_element(failed[h].begin(), failed[h].end());
                    if (*hi <= *lo * tol() && *lo * tol() >= best[h]) next[h] = order[h].size();
                }
                if (in != none && next[h] < order[h].size()) {
                    const double cap = own_limit(k, {flows[out].second, got[out]}, {flows[in].first, got[in]},
                                                 best[h], tried.size());
                    if (cap > 0) {
                        limit_[h] = limit_[h] > 0 ? std::min(limit_[h], cap) : cap;
                        auto& o = order[h];
                        o.erase(std::remove_if(o.begin() + static_cast<std::ptrdiff_t>(next[h]), o.end(),
                                               [&](std::size_t j) { return !may_hold(h, j); }),
                                o.end());
                    }
                }
            }
        }
        std::erase_if(pending, [&](NodeId h) { return sub_[h] != none || (was_tried[h] && next[h] >= order[h].size()); });
    }
    // A host that tried subnet k before another host joined it can read above the uplinks
    // with that one (their block put them together): inside k by the same rule, no
    // measurement needed (netlab's hosts-96 left a1, f4 and h5 so, at 1.07-1.18).
    for (bool more = true; more;) {
        more = false;
        for (NodeId h : asked) {
            if (sub_[h] != none) continue;
            const auto [k, e] = best_subnet(h);
            if (e <= 1) continue;
            sub_[h] = k;
            subs_[k].push_back(h);
            more = true;
        }
    }
    // Why a probe ran long: a join that leaves many hosts sends a block pass after them.
    std::string left;
    std::size_t placed = 0, named = 0;
    for (NodeId h : asked) {
        if (sub_[h] != none) {
            ++placed;
            continue;
        }
        if (named++ < 6) {
            char buf[32];
            std::snprintf(buf, sizeof buf, " %.2f", best_subnet(h).second);
            left += (left.empty() ? "" : ", ") + name(h) + buf;
        }
    }
    if (placed < asked.size()) {
        out_.notes.push_back("joining: " + std::to_string(placed) + " of " + std::to_string(asked.size()) +
                             " hosts placed against uplinks up to " + mbit(fastest_uplink()) +
                             "; left, with their best reading over what placing needs: " + left +
                             (named > 6 ? ", ..." : ""));
    }
    for (NodeId h = 0; h < n_; ++h) {
        if (sub_[h] != none && std::find(subs_[sub_[h]].begin(), subs_[sub_[h]].end(), h) == subs_[sub_[h]].end()) {
            subs_[sub_[h]].push_back(h);
        }
    }
}

// A failed try of h into subnet k, its flow out to `to` and in from `from` (partner,
// reading), `hosts` hosts tried at once: when both readings were alike, no faster than h
// ever read, and below what k's uplink and the partners carry (each uplink shared by all
// tried), h's own NIC limited them, or its own subnet's uplink if that carries less than
// the bound returned (0: no such conclusion). Only a subnet behind such an uplink, or one
// it tried, can hold h: hosts-24's b3 (25 Mbit/s behind uplinks of 30-45) read 24 with
// every subnet and tried all four, then the sharing test tried four (16 measurements).
double Structure::own_limit(std::size_t k, std::pair<NodeId, double> to, std::pair<NodeId, double> from, double best,
                            std::size_t hosts) const {
    if (!(to.second > 0 && from.second > 0)) return 0;  // a flow not rated
    const double lo = std::min(to.second, from.second), hi = std::max(to.second, from.second);
    if (hi > lo * tol() || hi * tol() < best) return 0;
    const double cap = hi * tol() * static_cast<double>(hosts);
    if (!std::isfinite(up_[k]) || cap >= up_[k] || hi * tol() >= in_[to.first] || hi * tol() >= eg_[from.first]) return 0;
    return cap;
}

bool Structure::may_hold(NodeId h, std::size_t k) const {
    if (!(limit_[h] > 0) || !std::isfinite(up_[k]) || up_[k] <= limit_[h]) return true;
    return std::any_of(tried_with_[h].begin(), tried_with_[h].end(), [&](NodeId x) { return sub_[x] == k; });
}

// Hosts no reading places (a host slower than the uplinks both ways reads the same inside
// and across; a host alone in its subnet has no partner): a sharing test first, else the
// subnet nearest by latency, else the one its readings came closest to placing it in; its
// subnet's doubt then says so.
void Structure::place_rest(const std::vector<NodeId>& rest) {
    if (subs_.empty()) {
        if (rest.empty()) return;
        subs_.emplace_back(rest);
        up_.push_back(inf);
        for (NodeId h : rest) sub_[h] = 0;
        out_.notes.push_back("no pair of hosts showed a subnet apart from the others: one subnet");
        return;
    }
    if (rest.empty()) return;
    const auto lat = latency_to_subnets(rest);
    std::vector<char> pinged(rest.size(), 0);
    std::vector<std::vector<std::size_t>> ranked(rest.size());
    std::vector<std::size_t> first(rest.size(), 4);
    for (std::size_t i = 0; i < rest.size(); ++i) {
        const NodeId h = rest[i];
        // By latency when every subnet has some; else by the readings.
        pinged[i] = std::none_of(lat[i].begin(), lat[i].end(), [](double x) { return std::isnan(x); });
        std::vector<double> score(subs_.size(), 0);
        for (std::size_t k = 0; k < subs_.size(); ++k) {
            if (pinged[i]) {
                score[k] = -lat[i][k];
            } else {
                score[k] = std::isfinite(evidence(h, k)) ? evidence(h, k) : 0;
            }
        }
        auto& r = ranked[i];
        r.resize(subs_.size());
        std::iota(r.begin(), r.end(), std::size_t{0});
        std::stable_sort(r.begin(), r.end(), [&](std::size_t a, std::size_t b) { return score[a] > score[b]; });
        // The subnets its joins left possible first, tested alone unless none keeps it.
        const auto held = std::stable_partition(r.begin(), r.end(), [&](std::size_t k) { return may_hold(h, k); });
        if (held != r.end()) first[i] = std::max<std::size_t>(2, static_cast<std::size_t>(held - r.begin()));
    }
    const std::vector<std::size_t> shared = sharing(rest, ranked, first);
    for (std::size_t i = 0; i < rest.size(); ++i) {
        const NodeId h = rest[i];
        const std::size_t k = shared[i] != none ? shared[i] : ranked[i][0];
        sub_[h] = k;
        subs_[k].push_back(h);
        if (shared[i] == none) {
            why_[h] = name(h) + " placed by " + (pinged[i] ? "latency" : "its best reading") +
                      " alone (no reading told inside from across)";
        }
    }
}

std::vector<std::vector<double>> Structure::latency_to_subnets(const std::vector<NodeId>& hosts) {
    const auto key = [](NodeId a, NodeId b) { return (static_cast<std::uint64_t>(a) << 32) | b; };
    const auto known = [&](NodeId a, NodeId b) {
        if (!lat_.empty() && !std::isnan(lat_[a][b])) return lat_[a][b];
        if (!lat_.empty() && !std::isnan(lat_[b][a])) return lat_[b][a];
        const auto it = pinged_.find(key(a, b));
        return it == pinged_.end() ? std::nan("") : it->second;
    };
    // Pings on a busy LAN are noisy: a median over a handful (hosts-96's b5 went wrong by
    // latency with 2-5 per subnet). These are the few hosts no reading placed.
    constexpr std::size_t want = 8;
    if (opt_.ping) {
        std::vector<FlowPair> ask;
        for (NodeId h : hosts) {
            for (const auto& g : subs_) {
                std::size_t have = 0;
                for (NodeId m : g) have += m != h && !std::isnan(known(h, m)) ? 1 : 0;
                for (NodeId m : g) {
                    if (have >= want) break;
                    if (m == h || !std::isnan(known(h, m)) || pinged_.count(key(h, m))) continue;
                    ask.emplace_back(h, m);
                    ++have;
                }
            }
        }
        if (!ask.empty()) {
            const std::vector<double> got = opt_.ping(ask);
            for (std::size_t p = 0; p < ask.size(); ++p) pinged_[key(ask[p].first, ask[p].second)] = p < got.size() ? got[p] : std::nan("");
        }
    }
    std::vector<std::vector<double>> out(hosts.size(), std::vector<double>(subs_.size(), std::nan("")));
    if (lat_.empty() && !opt_.ping) return out;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        for (std::size_t k = 0; k < subs_.size(); ++k) {
            std::vector<double> l;
            for (NodeId m : subs_[k]) {
                const double x = m == hosts[i] ? std::nan("") : known(hosts[i], m);
                if (!std::isnan(x)) l.push_back(x);
            }
            if (!l.empty()) out[i][k] = median(l);
        }
    }
    return out;
}

// Host h is in candidate subnet k when its flows to and from k's members keep their rate
// while flows from the next subnet in a ring fill k's uplink both ways (each subnet's
// uplink filled at once): from anywhere else its flows would share a filled uplink. The
// candidates its joins left (two at least), else the likeliest four, one measurement each;
// the next four only for a host none of them kept (netlab's latency is mostly noise:
// hosts-96's b5 and g11 were in none of their four nearest and were placed by latency, wrong).
std::vector<std::size_t> Structure::sharing(const std::vector<NodeId>& rest,
                                            const std::vector<std::vector<std::size_t>>& ranked,
                                            const std::vector<std::size_t>& first) {
    const std::size_t s = subs_.size();
    std::vector<std::size_t> out(rest.size(), none);
    if (s < 2) return out;
    nic_estimates();
    std::vector<char> testing(n_, 0);
    for (NodeId h : rest) testing[h] = 1;
    // What the host carried at best either way: what its flows keep when they share nothing.
    std::vector<double> best_out(n_, 0), best_in(n_, 0);
    for (const auto& [k, x] : read_) {
        const auto from = static_cast<NodeId>(k >> 32), to = static_cast<NodeId>(k & 0xffffffffu);
        if (testing[from]) best_out[from] = std::max(best_out[from], x);
        if (testing[to]) best_in[to] = std::max(best_in[to], x);
    }
    // Per host and candidate: the least share of what the host carries elsewhere that its
    // flows kept (-1: not told).
    std::vector<std::vector<double>> kept(rest.size(), std::vector<double>(s, -1));
    std::vector<char> active(rest.size(), 1);
    // Per host, the ranks of this stage: its first `first[i]`, then four at a time.
    std::vector<std::size_t> lo(rest.size(), 0), hi(rest.size());
    for (std::size_t i = 0; i < rest.size(); ++i) hi[i] = std::min(s, first[i]);
    for (bool more = true; more;) {
        sharing_stage(rest, ranked, active, lo, hi, best_out, best_in, kept);
        // On to the next four only when every one tried told "outside": one it could not test
        // (no uplink bound) may be the host's, and more tries would only add false hits.
        more = false;
        for (std::size_t i = 0; i < rest.size(); ++i) {
            for (std::size_t t = 0; t < hi[i] && active[i]; ++t) {
                const double x = kept[i][ranked[i][t]];
                active[i] = x >= 0 && x < 0.5;
            }
            lo[i] = hi[i];
            hi[i] = std::min(s, hi[i] + 4);
            if (active[i] && lo[i] < hi[i]) more = true;
        }
    }
    // Inside, both flows keep the host's rate; from outside each fell to a share of a filled
    // uplink. Judged against each other (a busy host's readings wander by a fifth): the one
    // kept more than 1 + tolerance times as well as any other, by half at least.
    for (std::size_t i = 0; i < rest.size(); ++i) {
        std::size_t found = none;
        double first = -1, second = -1;
        for (std::size_t k = 0; k < s; ++k) {
            if (kept[i][k] > first) {
                second = first;
                first = kept[i][k];
                found = k;
            } else {
                second = std::max(second, kept[i][k]);
            }
        }
        if (first >= 0.5 && second >= 0 && first > tol() * second) out[i] = found;
    }
    return out;
}

// One measurement per candidate rank lo[i] .. hi[i] - 1 of each active host i, all with
// every uplink filled; what each host's flows kept goes into `kept`.
void Structure::sharing_stage(const std::vector<NodeId>& rest, const std::vector<std::vector<std::size_t>>& ranked,
                              const std::vector<char>& active, const std::vector<std::size_t>& lo,
                              const std::vector<std::size_t>& hi, const std::vector<double>& best_out,
                              const std::vector<double>& best_in, std::vector<std::vector<double>>& kept) {
    const std::size_t s = subs_.size();
    std::size_t tries = 0;
    for (std::size_t i = 0; i < rest.size(); ++i) {
        if (active[i] && hi[i] > lo[i]) tries = std::max(tries, hi[i] - lo[i]);
    }
    std::vector<char> testing(n_, 0);
    for (NodeId h : rest) testing[h] = 1;
    struct Test {
        std::size_t host, k;
        std::size_t to = none, from = none;  // indices of its flows in the set
    };
    std::vector<std::vector<Test>> tests(tries);
    std::vector<std::vector<FlowPair>> sets(tries);
    for (std::size_t t = 0; t < tries; ++t) {
        auto& flows = sets[t];
        std::vector<char> sends(n_, 0), takes(n_, 0);
        for (std::size_t i = 0; i < rest.size(); ++i) {
            if (!active[i] || lo[i] + t >= hi[i]) continue;
            const NodeId h = rest[i];
            const std::size_t k = ranked[i][lo[i] + t];
            if (!std::isfinite(up_[k])) continue;  // nothing limits what crosses it: no test
            Test test{i, k};
            NodeId taker = static_cast<NodeId>(n_);
            for (NodeId x : by_rate(subs_[k], in_)) {
                if (!takes[x]) {
                    taker = x;
                    break;
                }
            }
            if (taker < n_ && !sends[h]) {
                test.to = flows.size();
                flows.emplace_back(h, taker);
                sends[h] = takes[taker] = 1;
            }
            for (NodeId y : by_rate(subs_[k], eg_)) {
                if (!sends[y] && y != taker && !takes[h]) {
                    test.from = flows.size();
                    flows.emplace_back(y, h);
                    sends[y] = takes[h] = 1;
                    break;
                }
            }
            if (test.to != none || test.from != none) tests[t].push_back(test);
        }
        if (tests[t].empty()) {
            flows.clear();
            continue;
        }
        // The fills: from subnet k + 1 into k, enough flows that a flow across gets a share
        // well below what the slowest host tested carries.
        double slowest = inf;
        for (NodeId h : rest) slowest = std::min({slowest, best_out[h] > 0 ? best_out[h] : inf, best_in[h] > 0 ? best_in[h] : inf});
        for (std::size_t k = 0; k < s; ++k) {
            const std::size_t j = (k + 1) % s;
            const double u = std::min(up_[k], up_[j]);
            const std::size_t want = std::isfinite(u) && std::isfinite(slowest)
                                         ? std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(2 * tol() * u / slowest)), 2, 12)
                                         : 2;
            const auto senders = by_rate(subs_[j], eg_), takers = by_rate(subs_[k], in_);
            std::size_t a = 0, b = 0, made = 0;
            while (made < want && a < senders.size() && b < takers.size()) {
                if (sends[senders[a]] || testing[senders[a]]) {
                    ++a;
                } else if (takes[takers[b]] || testing[takers[b]]) {
                    ++b;
                } else {
                    flows.emplace_back(senders[a], takers[b]);
                    sends[senders[a++]] = takes[takers[b++]] = 1;
                    ++made;
                }
            }
        }
    }
    const auto got = run_sets(sets, "placing");
    for (std::size_t t = 0; t < tries; ++t) {
        for (const Test& test : tests[t]) {
            const NodeId h = rest[test.host];
            double least = inf;
            const auto judge = [&](std::size_t at, double alone) {
                if (at == none) return;
                const double x = got[t][at];
                if (!std::isnan(x) && alone > 0) least = std::min(least, x / alone);
            };
            if (test.to != none) judge(test.to, std::min(best_out[h], in_[sets[t][test.to].second]));
            if (test.from != none) judge(test.from, std::min(best_in[h], eg_[sets[t][test.from].first]));
            if (std::isfinite(least)) kept[test.host][test.k] = least;
        }
    }
}

}  // namespace hetcast::probing
