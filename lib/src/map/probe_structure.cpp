// Structure first (map/probe.hpp, probe_structure()): which hosts share a subnet, from
// tests inside blocks of neighbouring hosts and against each subnet found. The rates
// follow in probe_structure_rates.cpp.
#include "probe_structure.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "hetcast/error.hpp"
#include "prober.hpp"

namespace hetcast::probing {
namespace {

constexpr std::size_t block_size = 8;
/// Rounds of blocks and joins: the second blocks the hosts left over in their order, the
/// third in a shuffled one.
constexpr int block_passes = 3;

std::uint64_t key(NodeId i, NodeId j) { return (static_cast<std::uint64_t>(i) << 32) | j; }

}  // namespace

double pass_sum(const std::vector<double>& passes, std::size_t per_pass, std::size_t first, std::size_t count) {
    double best = 0;
    for (std::size_t p = 0; p + per_pass <= passes.size(); p += per_pass) {
        double sum = 0;
        for (std::size_t f = first; f < first + count; ++f) {
            if (!std::isnan(passes[p + f])) sum += passes[p + f];
        }
        best = std::max(best, sum);
    }
    return best;
}

namespace {

}  // namespace

double Structure::reading(NodeId i, NodeId j) const {
    const auto it = read_.find(key(i, j));
    return it == read_.end() ? std::nan("") : it->second;
}

std::vector<double> Structure::run_flows(const std::vector<FlowPair>& flows, std::string_view phase, double scale) {
    return run_sets({flows}, phase, scale)[0];
}

std::vector<std::vector<double>> Structure::run_sets(const std::vector<std::vector<FlowPair>>& sets,
                                                     std::string_view phase, double scale,
                                                     std::vector<std::vector<double>>* pass_readings) {
    std::vector<std::vector<double>> best(sets.size()), least(sets.size());
    std::vector<int> passes(sets.size(), 0);
    if (pass_readings) pass_readings->assign(sets.size(), {});
    for (std::size_t s = 0; s < sets.size(); ++s) {
        best[s].assign(sets[s].size(), std::nan(""));
        least[s].assign(sets[s].size(), std::nan(""));
    }
    // Passes one after the other, so that what disturbs the network for a while hits different sets.
    std::vector<std::size_t> order;
    for (int pass = 0; pass < std::min(opt_.repeats, 2); ++pass) {
        for (std::size_t s = 0; s < sets.size(); ++s) {
            if (!sets[s].empty()) order.push_back(s);
        }
    }
    for (std::size_t at = 0; at < order.size(); ++at) {
        const std::size_t s = order[at];
        if (opt_.prepare && at + 1 < order.size()) opt_.prepare(sets[order[at + 1]]);
        const std::vector<double> r = measure_once(measure_, opt_, out_, sets[s], phase, scale);
        if (spent_.empty() || spent_.back().first != phase) spent_.push_back({std::string(phase), {0, 0.0}});
        ++spent_.back().second.first;
        spent_.back().second.second += opt_.seconds * scale;
        ++passes[s];
        for (std::size_t f = 0; f < r.size(); ++f) {
            if (pass_readings) (*pass_readings)[s].push_back(r[f]);
            if (std::isnan(r[f])) continue;  // not rated: no reading
            if (!(best[s][f] >= r[f])) best[s][f] = r[f];
            if (!(least[s][f] <= r[f])) least[s][f] = r[f];
        }
    }
    for (std::size_t s = 0; s < sets.size(); ++s) {
        for (std::size_t f = 0; f < sets[s].size(); ++f) {
            if (!std::isnan(best[s][f]) && !std::isnan(least[s][f]) && least[s][f] > 0 && passes[s] == 2) {
                pass_ratio_.emplace_back(key(sets[s][f].first, sets[s][f].second), best[s][f] / least[s][f]);
            }
            if (std::isnan(best[s][f])) continue;
            auto [it, fresh] = read_.emplace(key(sets[s][f].first, sets[s][f].second), best[s][f]);
            if (!fresh) it->second = std::max(it->second, best[s][f]);
        }
    }
    return best;
}

std::vector<NodeId> Structure::by_rate(const std::vector<NodeId>& g, const std::vector<double>& rate) const {
    std::vector<NodeId> out = g;
    std::stable_sort(out.begin(), out.end(), [&](NodeId a, NodeId b) { return rate[a] > rate[b]; });
    return out;
}

ProbeResult Structure::run() {
    std::vector<NodeId> pending(n_);
    std::iota(pending.begin(), pending.end(), NodeId{0});
    const auto left = [&] {
        pending.clear();
        for (NodeId h = 0; h < n_; ++h) {
            if (sub_[h] == none) pending.push_back(h);
        }
    };
    for (int pass = 0; pass < block_passes && pending.size() >= 2; ++pass) {
        const std::size_t before = pending.size();
        Subnets found = blocks(pending, pass == 2);
        if (pass > 0) {
            // Once uplinks are known, a group is a subnet only if some pair in it read more
            // than any uplink carries: two hosts slower than the uplinks (hosts-96's b5 and
            // f3, 10 Mbit/s NICs behind 10-15 Mbit/s uplinks) read alike from anywhere, and
            // testing them as a group cost another 26 measurements for nothing. They are
            // the sharing test's (place_rest).
            const double floor = tol() * fastest_uplink();
            std::erase_if(found, [&](const std::vector<NodeId>& g) {
                for (NodeId a : g) {
                    for (NodeId b : g) {
                        if (a != b && reading(a, b) > floor) return false;
                    }
                }
                return floor > 0;
            });
            if (found.empty()) {
                end_passes(pending);
                left();
                break;
            }
        }
        groups(std::move(found));
        if (subs_.size() >= 2) {
            uplinks();
            reverify();
        }
        left();
        if (!subs_.empty() && !pending.empty()) join(pending);
        left();
        if (pending.size() == before && pass > 0) break;
    }
    // Joined pieces' uplinks were tested while their other pieces shared them: again. Else
    // the uplinks found after the groups stand: hosts joined since only add flows to an
    // uplink its test already filled (measuring them again was a sixth of a 48-host probe).
    const bool merged = merge();
    if (merged) uplinks();
    place_rest(pending);
    nics();
    if (merged || up_.empty() || std::any_of(up_.begin(), up_.end(), [](double u) { return !std::isfinite(u); })) uplinks();
    finish();
    return std::move(out_);
}

// The passes end with no group left to find: the uplinks measured once more, and a host
// that read faster than any uplink with someone, which failed its join by a reading short
// of the tolerance, joins once more (netlab's g11 in one 96-host run, then placed by
// latency into f).
void Structure::end_passes(std::vector<NodeId> pending) {
    uplinks();
    const double floor = tol() * fastest_uplink();
    std::vector<double> best(n_, 0);
    for (const auto& [k, x] : read_) {
        best[k >> 32] = std::max(best[k >> 32], x);
        best[k & 0xffffffffu] = std::max(best[k & 0xffffffffu], x);
    }
    std::erase_if(pending, [&](NodeId h) { return !(best[h] > floor); });
    if (!pending.empty()) join(pending);
}

// Blocks of neighbouring hosts (in the operator's order: a site numbers its machines by
// room), every pair inside a block both ways, all blocks at once: flows inside a subnet
// never share anything but their NICs, so a pair limited by its NICs alone is a pair
// inside a subnet. ECO's test on the block's readings, its hosts near hosts that are not
// near each other set aside (probe.hpp, step 4). Returns the groups of two or more.
Subnets Structure::blocks(std::vector<NodeId> hosts, bool shuffle) {
    if (shuffle) std::shuffle(hosts.begin(), hosts.end(), std::mt19937_64(hosts.size() * 7919 + n_));
    std::vector<std::vector<NodeId>> blocks;
    for (std::size_t b = 0; b < hosts.size(); b += block_size) {
        blocks.emplace_back(hosts.begin() + static_cast<std::ptrdiff_t>(b),
                            hosts.begin() + static_cast<std::ptrdiff_t>(std::min(hosts.size(), b + block_size)));
    }
    if (blocks.size() >= 2 && blocks.back().size() < 2) {
        blocks[blocks.size() - 2].push_back(blocks.back()[0]);
        blocks.pop_back();
    }
    std::size_t largest = 0;
    for (const auto& b : blocks) largest = std::max(largest, b.size());
    // Round r: the host at i sends to the host at i + r of its block; half way round (an
    // even block) every pair would go both ways, so that round is two.
    std::vector<std::vector<FlowPair>> sets;
    for (std::size_t r = 1; r < largest; ++r) {
        for (std::size_t half = 0; half < 2; ++half) {
            auto& s = sets.emplace_back();
            for (const auto& b : blocks) {
                const std::size_t m = b.size();
                if (r >= m) continue;
                const bool halves = 2 * r == m;
                if (!halves && half == 1) continue;
                for (std::size_t i = 0; i < m; ++i) {
                    if (!halves || (i < r) == (half == 0)) s.emplace_back(b[i], b[(i + r) % m]);
                }
            }
            if (s.empty()) sets.pop_back();
        }
    }
    (void)run_sets(sets, "blocks");
    Subnets found;
    for (const auto& b : blocks) {
        const std::size_t m = b.size();
        Matrix rd(m, std::vector<double>(m, 0));
        std::vector<double> out(m, 0), in(m, 0);
        for (std::size_t a = 0; a < m; ++a) {
            for (std::size_t c = 0; c < m; ++c) {
                if (a == c) continue;
                const double x = reading(b[a], b[c]);
                rd[a][c] = std::isnan(x) ? 0 : x;
                out[a] = std::max(out[a], rd[a][c]);
                in[c] = std::max(in[c], rd[a][c]);
            }
        }
        const auto near_within = [&](std::size_t a, std::size_t c, double t) {
            return rd[a][c] > 0 && rd[c][a] > 0 && rd[a][c] * t >= std::min(out[a], in[c]) &&
                   rd[c][a] * t >= std::min(out[c], in[a]);
        };
        const auto near = [&](std::size_t a, std::size_t c) { return near_within(a, c, tol()); };
        std::vector<char> on(m, 1);
        for (;;) {
            std::size_t worst = m, worst_bad = 0;
            for (std::size_t h = 0; h < m; ++h) {
                if (!on[h]) continue;
                std::vector<std::size_t> close;
                for (std::size_t c = 0; c < m; ++c) {
                    if (c != h && on[c] && near(h, c)) close.push_back(c);
                }
                // Apart: not near even at the tolerance squared. A host that bridges two
                // subnets joins hosts whose readings across shared an uplink; a pair inside
                // one that read a fifth low is noise (at 48 netlab hosts, all measuring at
                // once on two cores, pairs read 14-17 of 20 Mbit/s in both passes, and the
                // set-aside left a subnet without a group in 2 of 7 probes).
                std::size_t bad = 0;
                for (std::size_t x = 0; x < close.size(); ++x) {
                    for (std::size_t y = x + 1; y < close.size(); ++y) bad += near_within(close[x], close[y], tol() * tol()) ? 0 : 1;
                }
                if (bad > worst_bad) {
                    worst = h;
                    worst_bad = bad;
                }
            }
            if (worst == m) break;
            on[worst] = 0;
        }
        UnionFind uf(m);
        for (std::size_t a = 0; a < m; ++a) {
            for (std::size_t c = a + 1; c < m; ++c) {
                if (on[a] && on[c] && near(a, c)) uf.unite(a, c);
            }
        }
        std::vector<std::vector<NodeId>> comp(m);
        for (std::size_t a = 0; a < m; ++a) {
            if (on[a]) comp[uf.find(a)].push_back(b[a]);
        }
        for (auto& g : comp) {
            if (g.size() >= 2) found.push_back(std::move(g));
        }
    }
    return found;
}

// The subnets known and the new groups in a ring by lowest member (a subnet cut by a block
// border is two neighbours), each sending from its core to the group 1, 2 and 3 further
// on, all groups at once: each uplink carries one test each way. A test whose flows are
// limited by their NICs alone joins the two groups; else its sum bounds both uplinks.
// Then each member must show that it is inside: a reading with another member more than
// 1 + tolerance times what the uplink carried (a host ECO joined to a group in its block
// on rates of flows that all crossed uplinks does not).
void Structure::groups(Subnets candidates) {
    Subnets all = subs_;
    std::vector<double> up = up_;
    for (auto& g : candidates) {
        all.push_back(std::move(g));
        up.push_back(inf);
    }
    const std::size_t count = all.size();
    if (count == 0) return;
    std::vector<std::size_t> ring(count);
    std::iota(ring.begin(), ring.end(), std::size_t{0});
    std::sort(ring.begin(), ring.end(), [&](std::size_t a, std::size_t b) {
        return *std::min_element(all[a].begin(), all[a].end()) < *std::min_element(all[b].begin(), all[b].end());
    });
    // Rates within each group: what its members' flows inside it carried.
    std::vector<double> out_rate(n_, 0), in_rate(n_, 0);
    for (const auto& g : all) {
        for (NodeId a : g) {
            for (NodeId b : g) {
                const double x = a == b ? std::nan("") : reading(a, b);
                if (std::isnan(x)) continue;
                out_rate[a] = std::max(out_rate[a], x);
                in_rate[b] = std::max(in_rate[b], x);
            }
        }
    }
    // A group's core: the members near at least half of the others (a host joined to it by
    // one reading is not one).
    std::vector<std::vector<NodeId>> core(count);
    for (std::size_t k = 0; k < count; ++k) {
        for (NodeId a : all[k]) {
            std::size_t close = 0;
            for (NodeId b : all[k]) {
                if (a == b) continue;
                const double x = reading(a, b), y = reading(b, a);
                if (x * tol() >= std::min(out_rate[a], in_rate[b]) && y * tol() >= std::min(out_rate[b], in_rate[a])) ++close;
            }
            if (2 * close + 1 >= all[k].size()) core[k].push_back(a);
        }
        if (core[k].empty()) core[k] = all[k];
    }
    UnionFind uf(count);
    struct Test {
        std::size_t from, to;
        std::vector<FlowPair> flows;
    };
    const std::size_t shifts = std::min<std::size_t>(3, count - 1);
    std::vector<std::vector<Test>> tests(shifts);
    std::vector<std::vector<FlowPair>> sets(shifts);
    for (std::size_t t = 1; t <= shifts; ++t) {
        for (std::size_t p = 0; p < count; ++p) {
            const std::size_t k = ring[p], j = ring[(p + t) % count];
            const auto senders = by_rate(core[k], out_rate), takers = by_rate(core[j], in_rate);
            const std::size_t m = std::min(senders.size(), takers.size());
            // Half way round both groups test each other: receivers one further on, so no
            // host pair goes both ways.
            const std::size_t skew = 2 * t == count && m > 1 ? 1 : 0;
            Test test{k, j, {}};
            for (std::size_t f = 0; f < m; ++f) test.flows.emplace_back(senders[f], takers[(f + skew) % m]);
            sets[t - 1].insert(sets[t - 1].end(), test.flows.begin(), test.flows.end());
            tests[t - 1].push_back(std::move(test));
        }
    }
    std::vector<std::vector<double>> raw;
    // These tests cross uplinks with many flows, and their sums bound the uplinks that
    // uplinks() only raises: as long as its tests (0.6 s windows read hosts-48's 10-12
    // Mbit/s uplinks as 13.6-14.6 here, where the uplink tests read at most 12.3).
    const auto got = run_sets(sets, "groups", uplink_window_scale, &raw);
    // Each group's uplink bound: the sums of its tests whose flows fell short of their NICs.
    std::vector<double> bound(count, 0);
    std::vector<std::pair<std::size_t, std::size_t>> same;
    for (std::size_t k = 0; k < count; ++k) bound[k] = std::isfinite(up[k]) ? up[k] : 0;
    for (std::size_t t = 0; t < shifts; ++t) {
        std::size_t at = 0;
        const std::size_t per_pass = sets[t].size();
        for (const Test& test : tests[t]) {
            std::size_t high = 0;
            for (const auto& [a, b] : test.flows) {
                const double x = got[t][at++];
                if (!std::isnan(x) && x * tol() >= std::min(out_rate[a], in_rate[b])) ++high;
            }
            const double sum = pass_sum(raw[t], per_pass, at - test.flows.size(), test.flows.size());
            if (2 * high > test.flows.size()) {
                same.emplace_back(test.from, test.to);
            } else if (high == 0) {
                // Mixed: a fragment of one subnet that is not all inside; it bounds nothing.
                bound[test.from] = std::max(bound[test.from], sum);
                bound[test.to] = std::max(bound[test.to], sum);
            }
        }
    }
    const auto inside = [&](NodeId h, const std::vector<NodeId>& g) {
        double best = 0;
        for (NodeId o : g) {
            if (o == h) continue;
            const double x = reading(h, o), y = reading(o, h);
            if (x > best) best = x;
            if (y > best) best = y;
        }
        return best;
    };
    // A group stays with its members that read inside above its bound; a group whose every
    // test carried what its (maybe crossing) flows allowed has no bound: it is kept only as
    // the one group there is.
    // Against the largest bound: one uplink's bound can be low (its tests met slower ones).
    const std::size_t widest = static_cast<std::size_t>(std::max_element(bound.begin(), bound.end()) - bound.begin());
    const double largest = bound[widest];
    std::vector<char> kept_group(count, 0);
    std::string dropped;
    for (std::size_t k = 0; k < count; ++k) {
        if (bound[k] <= 0) continue;
        std::vector<NodeId> members;
        double best = 0;
        for (NodeId h : all[k]) {
            const double x = inside(h, all[k]);
            best = std::max(best, x);
            if (x > tol() * largest) members.push_back(h);
        }
        if (members.size() >= 2) {
            all[k] = std::move(members);
            kept_group[k] = 1;
        } else {
            dropped += (dropped.empty() ? "" : ", ") + name(all[k][0]) + "'s (" + std::to_string(all[k].size()) +
                       " hosts, best inside " + mbit(best) + ", own bound " + mbit(bound[k]) + ")";
        }
    }
    if (!dropped.empty()) {
        out_.notes.push_back("groups: dissolved " + dropped + ": a member must read inside more than " +
                             mbit(tol() * largest) + ", 1 + tolerance times the largest uplink bound (" +
                             name(all[widest][0]) + "'s group)");
    }
    // Two groups kept whose test carried what the NICs allow are one subnet. No group with
    // a bound: no uplink limits anything seen, the groups are one subnet.
    const bool any = std::find(kept_group.begin(), kept_group.end(), 1) != kept_group.end();
    if (!any) std::fill(kept_group.begin(), kept_group.end(), 1);
    for (const auto& [a, b] : same) {
        if (kept_group[a] && kept_group[b]) uf.unite(a, b);
    }
    std::vector<std::size_t> slot(count, none);
    subs_.clear();
    up_.clear();
    std::fill(sub_.begin(), sub_.end(), none);
    for (std::size_t p = 0; p < count; ++p) {
        const std::size_t k = ring[p];
        if (!kept_group[k]) continue;
        const std::size_t root = uf.find(k);
        if (slot[root] == none) {
            slot[root] = subs_.size();
            subs_.emplace_back();
            up_.push_back(0);
        }
        auto& g = subs_[slot[root]];
        g.insert(g.end(), all[k].begin(), all[k].end());
        up_[slot[root]] = std::max(up_[slot[root]], bound[k]);
    }
    for (std::size_t k = 0; k < subs_.size(); ++k) {
        if (up_[k] <= 0) up_[k] = inf;
        for (NodeId h : subs_[k]) sub_[h] = k;
    }
}

// With the uplinks measured: a member whose readings inside no longer exceed what crosses
// them leaves its subnet (it joins again, or is placed, later); a subnet left with one goes.
void Structure::reverify() {
    std::vector<std::vector<NodeId>> kept;
    std::vector<double> up;
    for (std::size_t k = 0; k < subs_.size(); ++k) {
        std::vector<NodeId> members;
        for (NodeId h : subs_[k]) {
            if (evidence(h, k) > 1) members.push_back(h);
        }
        if (members.size() < 2) continue;
        kept.push_back(std::move(members));
        up.push_back(up_[k]);
    }
    subs_ = std::move(kept);
    up_ = std::move(up);
    std::fill(sub_.begin(), sub_.end(), none);
    for (std::size_t k = 0; k < subs_.size(); ++k) {
        for (NodeId h : subs_[k]) sub_[h] = k;
    }
}

double Structure::fastest_uplink() const {
    double fastest = 0;
    for (double u : up_) {
        if (std::isfinite(u)) fastest = std::max(fastest, u);
    }
    return fastest;
}

std::pair<std::size_t, double> Structure::best_subnet(NodeId h) const {
    std::pair<std::size_t, double> best{none, 0.0};
    for (std::size_t k = 0; k < subs_.size(); ++k) {
        if (const double e = evidence(h, k); e > best.second) best = {k, e};
    }
    return best;
}

/// How far inside subnet k host h's best reading with its members is: its ratio to 1 +
/// tolerance times the uplink (above 1: no flow across the uplink could have carried it).
double Structure::evidence(NodeId h, std::size_t k) const {
    double best = 0;
    // Against the fastest uplink found, so that an uplink underestimated lets no flow in.
    const double fastest = fastest_uplink();
    if (fastest <= 0) {
        // No uplink found to limit anything: a reading within tolerance of the member's NIC.
        for (NodeId o : subs_[k]) {
            if (o == h) continue;
            const double x = reading(h, o), y = reading(o, h);
            if (x > 0 && in_[o] > 0) best = std::max(best, x * tol() / in_[o]);
            if (y > 0 && eg_[o] > 0) best = std::max(best, y * tol() / eg_[o]);
        }
        return best;
    }
    for (NodeId o : subs_[k]) {
        if (o == h) continue;
        const double x = reading(h, o), y = reading(o, h);
        if (x > best) best = x;
        if (y > best) best = y;
    }
    return best / (tol() * fastest);
}

}  // namespace hetcast::probing
