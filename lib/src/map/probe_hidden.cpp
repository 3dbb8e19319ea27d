// Step 9 of the probe (map/probe.hpp): uplinks no single flow fills. A subnet whose uplink is
// faster than any one flow through it (a 115 Mbit/s uplink in front of 265 Mbit/s NICs, when
// every host outside receives at 100 or less) reads like the hosts around it in every pair
// round, and ECO joins it to its neighbours. Only flows from several of its hosts at once
// show it: each subnet found is tested with concurrent flows between its rate classes.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "prober.hpp"

namespace hetcast::probing {
namespace {

constexpr std::size_t max_tested = 6;

/// Hosts of `group` by what they receive, fastest first, cut where the next is more than
/// `factor` slower: a subnet's hosts have one NIC rate, give or take noise. What a host
/// receives, not what it sends: a slow sender stays with its subnet.
std::vector<std::vector<NodeId>> classes(const std::vector<NodeId>& group, const std::vector<double>& in, double factor) {
    std::vector<NodeId> v = fastest(group, in);
    std::vector<std::vector<NodeId>> out;
    for (std::size_t k = 0; k < v.size(); ++k) {
        if (k == 0 || in[v[k - 1]] > factor * in[v[k]]) out.emplace_back();
        out.back().push_back(v[k]);
    }
    return out;
}

}  // namespace

// 9. Per subnet of three or more hosts with two rate classes or more of two hosts or more:
// one round in which every such host sends to a host of another class and receives from a
// third (the classes laid out in a ring, shifted by the largest, so that each class's hosts
// all send out of it and all receive into it at once: the most its uplink would ever carry).
// Alone on one switch every flow runs at what its NICs allow; a class whose flows out (or in)
// carried together clearly less (by half the tolerance) sits behind an uplink of its own.
// Behind FIFO NICs (ProbeOptions::fifo_nics) two rounds per class instead, its hosts
// sending only, then receiving only, so that no host sends and receives at once.
// One pass, a second when the first shows something (a pass that load elsewhere slowed must
// not count).
std::vector<Hidden> Prober::find_hidden(const Subnets& found) {
    const double factor = 1 + opt_.tolerance;
    std::vector<Hidden> groups;
    // Whether a flow counts for its sender's class going out, its receiver's coming in, or both.
    enum class Way : char { both, out, in };
    std::vector<std::vector<FlowPair>> rounds(2);
    std::vector<std::vector<Way>> ways(2);
    for (std::size_t k = 0; k < found.size(); ++k) {
        if (found[k].size() < 3) continue;
        Hidden g{k, classes(found[k], in_, factor), {}, {}};
        // Hosts alone in their class stay out: a slow host of the subnet would take a flow
        // that never leaves it.
        std::vector<std::vector<NodeId>> ring;
        for (const auto& c : g.classes) {
            if (c.size() >= 2) ring.push_back(c);
        }
        if (ring.size() < 2) continue;
        if (opt_.fifo_nics) {
            // Behind FIFO NICs a host that sends and receives at once is slowed by its own
            // ACKs, and every class would look held back: per class, a round in which its
            // hosts only send, to the others', and one in which they only receive from them
            // (the fastest to the fastest), each counting for that class alone.
            if (rounds.size() < 2 * ring.size()) {
                rounds.resize(2 * ring.size());
                ways.resize(2 * ring.size());
            }
            for (std::size_t c = 0; c < ring.size(); ++c) {
                std::vector<NodeId> rest;
                for (std::size_t d = 0; d < ring.size(); ++d) {
                    if (d != c) rest.insert(rest.end(), ring[d].begin(), ring[d].end());
                }
                const auto out = fastest(ring[c], eg_), to = fastest(rest, in_), from = fastest(rest, eg_), in = fastest(ring[c], in_);
                for (std::size_t k = 0; k < std::min(out.size(), to.size()); ++k) {
                    rounds[2 * c].emplace_back(out[k], to[k]);
                    ways[2 * c].push_back(Way::out);
                }
                for (std::size_t k = 0; k < std::min(in.size(), from.size()); ++k) {
                    rounds[2 * c + 1].emplace_back(from[k], in[k]);
                    ways[2 * c + 1].push_back(Way::in);
                }
            }
        } else {
            std::vector<NodeId> order;
            std::size_t largest = 0;
            for (const auto& c : ring) {
                largest = std::max(largest, c.size());
                order.insert(order.end(), c.begin(), c.end());
            }
            const std::size_t m = order.size(), shift = std::min(largest, m - 1);
            // No host pair both ways (see measure_pairs()): half way round, two rounds of half.
            for (std::size_t p = 0; p < m; ++p) {
                const std::size_t r = 2 * shift == m && p >= shift ? 1 : 0;
                rounds[r].emplace_back(order[p], order[(p + shift) % m]);
                ways[r].push_back(Way::both);
            }
        }
        groups.push_back(std::move(g));
    }
    if (groups.empty()) return {};
    std::vector<std::vector<std::vector<double>>> got;  // [pass][round][flow]
    const auto measure = [&] {
        auto& pass = got.emplace_back(rounds.size());
        for (std::size_t r = 0; r < rounds.size(); ++r) {
            if (!rounds[r].empty()) pass[r] = once(rounds[r], "hidden");
        }
    };
    // Per group, the classes behind an uplink of their own and what they carried. A sum over
    // several flows is steadier than one flow: half the tolerance (a 125 Mbit/s uplink behind
    // three 50 Mbit/s hosts carries 5/6 of what they send). Per pass, the pass in which they
    // carried the most counting: on FIFO links the flows through one split it unevenly, and
    // each one's best reading of several passes would add up to more than it carries.
    const double held = 1 + opt_.tolerance / 2;
    const auto judge = [&] {
        bool any = false;
        for (Hidden& g : groups) {
            const std::size_t nc = g.classes.size();
            std::vector<std::size_t> cls(n_, none);
            for (std::size_t c = 0; c < nc; ++c) {
                for (NodeId h : g.classes[c]) cls[h] = c;
            }
            // [class]: the best pass's share of what the NICs allow, out and in, and the most
            // that crossed its uplink in a pass.
            std::vector<double> out_share(nc, 0), in_share(nc, 0), carried(nc, 0);
            std::vector<double> out_of(nc, 0), in_of(nc, 0);
            for (const auto& pass : got) {
                std::vector<double> out_sum(nc, 0), out_max(nc, 0), in_sum(nc, 0), in_max(nc, 0), out_all(nc, 0), in_all(nc, 0);
                for (std::size_t q = 0; q < rounds.size(); ++q) {
                    for (std::size_t f = 0; f < pass[q].size(); ++f) {
                        const auto [i, j] = rounds[q][f];
                        const double r = pass[q][f];
                        if (cls[i] == none || cls[j] == none || cls[i] == cls[j] || !rated(r)) continue;
                        const bool out = ways[q][f] != Way::in, in = ways[q][f] != Way::out;
                        if (out) out_all[cls[i]] += r;
                        if (in) in_all[cls[j]] += r;
                        // A slow sender receives slower while it sends (its ACKs wait behind its
                        // data): flows into one say nothing.
                        if (in_[j] > factor * eg_[j]) continue;
                        const double e = std::min(eg_[i], in_[j]);
                        if (out) {
                            out_sum[cls[i]] += r;
                            out_max[cls[i]] += e;
                        }
                        if (in) {
                            in_sum[cls[j]] += r;
                            in_max[cls[j]] += e;
                        }
                    }
                }
                for (std::size_t c = 0; c < nc; ++c) {
                    if (out_max[c] > 0 && out_sum[c] / out_max[c] > out_share[c]) {
                        out_share[c] = out_sum[c] / out_max[c];
                        out_of[c] = out_max[c];
                    }
                    if (in_max[c] > 0 && in_sum[c] / in_max[c] > in_share[c]) {
                        in_share[c] = in_sum[c] / in_max[c];
                        in_of[c] = in_max[c];
                    }
                    carried[c] = std::max({carried[c], out_all[c], in_all[c]});
                }
            }
            g.behind.assign(nc, 0);
            g.carried.assign(nc, inf);
            for (std::size_t c = 0; c < nc; ++c) {
                if (g.classes[c].size() < 2) continue;
                const bool held_out = out_of[c] > 0 && out_share[c] * held < 1;
                const bool held_in = in_of[c] > 0 && in_share[c] * held < 1;
                if (!held_out && !held_in) continue;
                const double share = std::min(held_out ? out_share[c] : 1.0, held_in ? in_share[c] : 1.0);
                g.behind[c] = share * factor < 1 ? 2 : 1;
                g.carried[c] = carried[c];
                any = true;
                out_.notes.push_back("hosts like " + name(g.classes[c][0]) + " carried " +
                                     mbit((held_out ? out_share[c] : in_share[c]) * (held_out ? out_of[c] : in_of[c])) +
                                     (held_out ? " out to" : " in from") + " others of the subnet ECO found, of " +
                                     mbit(held_out ? out_of[c] : in_of[c]) +
                                     " their NICs allow: an uplink of their own that no single flow fills");
            }
        }
        return any;
    };
    measure();
    const std::size_t notes = out_.notes.size();
    if (!judge()) return {};
    out_.notes.resize(notes);
    measure();
    if (!judge()) return {};
    std::erase_if(groups, [](const Hidden& g) { return std::none_of(g.behind.begin(), g.behind.end(), [](char b) { return b; }); });
    return groups;
}

// 9a. Classes are cut by rate alone, and a host of another subnet can have the rate of a
// class (a 55 Mbit/s host of a beside two of b's 50 Mbit/s). Per class of three or more
// behind an uplink: the class sends out with all its hosts, and without each in turn. A host
// behind the uplink takes a share of what the others already fill; one beside it adds what
// it sends alone. Only where the others fill something without it (their sum held back by
// half the tolerance): else its flow adds to a link with room wherever it is. The larger
// sum of two passes with all counts; a host that seems beside the uplink is measured
// without once more (a pass that load elsewhere slowed must not move a host): m + 2
// measurements for a class of m, one more per host that seems beside; classes of more than
// six are left as they are.
std::vector<NodeId> Prober::beside_uplink(const std::vector<NodeId>& cls, const std::vector<NodeId>& group) {
    std::vector<NodeId> receivers;
    for (NodeId h : group) {
        if (std::find(cls.begin(), cls.end(), h) == cls.end()) receivers.push_back(h);
    }
    if (cls.size() < 3 || cls.size() > max_tested || receivers.empty()) return {};
    receivers = fastest(receivers, in_);
    std::vector<FlowPair> all;
    std::vector<double> alone, taken(n_, 0);
    for (std::size_t k = 0; k < cls.size(); ++k) {
        const NodeId i = cls[k], j = receivers[k % receivers.size()];
        all.emplace_back(i, j);
        alone.push_back(std::min(eg_[i], in_[j]));
        taken[j] += alone.back();
    }
    // Receivers that would hold the flows back say nothing of an uplink.
    for (NodeId j : receivers) {
        if (taken[j] > in_[j]) return {};
    }
    const auto sum = [](const std::vector<double>& pass) {
        double t = 0;
        for (double r : pass) t += rated(r) ? r : 0;
        return t;
    };
    double with = 0;
    const auto got = passes({all}, "hidden", 1, 2);
    for (const auto& pass : got[0]) with = std::max(with, sum(pass));
    const double held = 1 + opt_.tolerance / 2;
    const double total = std::accumulate(alone.begin(), alone.end(), 0.0);
    std::vector<NodeId> out;
    for (std::size_t k = 0; k < cls.size(); ++k) {
        std::vector<FlowPair> others = all;
        others.erase(others.begin() + static_cast<std::ptrdiff_t>(k));
        const auto beside = [&](double without) {
            return without * held < total - alone[k] && with * held >= without + alone[k];
        };
        double without = sum(once(others, "hidden"));
        if (!beside(without)) continue;
        without = std::max(without, sum(once(others, "hidden")));
        if (!beside(without)) continue;
        out.push_back(cls[k]);
        out_.notes.push_back(name(cls[k]) + ": not behind the uplink of hosts like " + name(cls[k == 0 ? 1 : 0]) +
                             ", though as fast: their flows out carried " + mbit(without) + " without it and " +
                             mbit(with) + " with its " + mbit(alone[k]));
    }
    return out;
}

// 9b. Each class behind an uplink of its own becomes a subnet, the round's aggregate its
// uplink unless its own measurement finds one; the other classes of two or more hosts stay
// together; hosts alone in their class are placed again, like those set aside.
void Prober::split_hidden(Subnets& found, std::vector<char>& informative) {
    std::vector<Hidden> hidden = find_hidden(found);
    if (hidden.empty()) return;
    std::vector<NodeId> again;
    for (Hidden& g : hidden) {
        for (std::size_t c = 0; c < g.classes.size(); ++c) {
            if (!g.behind[c]) continue;
            for (NodeId h : beside_uplink(g.classes[c], found[g.index])) {
                std::erase(g.classes[c], h);
                again.push_back(h);
            }
        }
    }
    std::map<std::vector<NodeId>, std::pair<double, bool>> carried;  // and whether by the whole tolerance
    Subnets next;
    std::vector<char> split(found.size(), 0);
    for (const Hidden& g : hidden) {
        split[g.index] = 1;
        std::vector<NodeId> rest;
        for (std::size_t c = 0; c < g.classes.size(); ++c) {
            if (g.behind[c]) {
                next.push_back(g.classes[c]);
                carried[g.classes[c]] = {g.carried[c], g.behind[c] == 2};
            } else if (g.classes[c].size() >= 2) {
                rest.insert(rest.end(), g.classes[c].begin(), g.classes[c].end());
            } else {
                informative[g.classes[c][0]] = 0;
            }
        }
        if (!rest.empty()) next.push_back(rest);
    }
    for (std::size_t k = 0; k < found.size(); ++k) {
        if (!split[k]) next.push_back(found[k]);
    }
    for (const auto& sub : next) {
        for (NodeId h : sub) informative[h] = 1;
    }
    for (NodeId h : again) informative[h] = 0;
    found = std::move(next);
    use(found);
    // The hosts placed again get new notes.
    std::erase_if(doubt_, [&](const auto& d) { return model_.subnet[d.first] == none; });
    std::erase_if(out_.notes, [&](const std::string& note) {
        for (NodeId h = 0; h < n_; ++h) {
            if (model_.subnet[h] == none && note.rfind(name(h) + ": NIC-bound", 0) == 0) return true;
        }
        return false;
    });
    const auto uplinks = [&] {
        measure_uplinks(found);
        // A class split off keeps an uplink when the round held it back by the whole
        // tolerance, or its own measurement shows it held back by more than the NICs and the
        // other uplinks allow (a sum: by half the tolerance): one direction NIC-bound is not
        // the end of it here (100 + 10 Mbit/s of NICs behind 105 send what the NICs allow,
        // while two hosts receiving 100 each fill it), and on FIFO links a host's ACKs queued
        // behind its own data lower a round's sums without any uplink.
        for (std::size_t k = 0; k < found.size(); ++k) {
            const auto it = carried.find(found[k]);
            if (it == carried.end()) continue;
            // With two subnets one run measures both (see measure_uplinks()).
            const std::size_t j = found.size() == 2 ? 0 : k;
            const auto run = std::find_if(runs_.begin(), runs_.end(), [&](const UplinkRun& r) { return r.subnet == found[j]; });
            const bool held = it->second.second || (run != runs_.end() && held_back(*run, j, 1 + opt_.tolerance / 2));
            model_.uplink[k] = !held ? inf : std::isfinite(model_.uplink[k]) ? model_.uplink[k] : it->second.first;
        }
    };
    if (found.size() >= 2) {
        uplinks();
        if (dissolve(found, informative) && found.size() >= 2) uplinks();
    }
    const Subnets core = found;
    for (NodeId h = 0; h < n_; ++h) {
        if (model_.subnet[h] == none) place(h, core, found);
    }
}

}  // namespace hetcast::probing
