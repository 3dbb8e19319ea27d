#include "hetcast/sim/pace.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

namespace hetcast {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

/// A network's links as flow_path() numbers them, each with the one whose FIFO carries its
/// flows' ACKs: a host's egress and its ingress (the switch's port to it), a subnet's uplink
/// out and in. Disks carry no ACKs and are left out.
struct Links {
    const Network& net;
    std::size_t n;
    std::vector<char> fifo;
    std::vector<double> caps;
    std::size_t subnets;
    std::vector<std::size_t> subnet_of;

    explicit Links(const Network& network)
        : net(network), n(network.size()), fifo(fifo_resources(network)), caps(resource_capacities(network)),
          subnets((caps.size() - 3 * n) / 2), subnet_of(network.subnet_of()) {}
    /// Every link a transfer crosses (its disk left out).
    [[nodiscard]] std::vector<std::size_t> on(NodeId from, NodeId to) const {
        std::vector<std::size_t> out;
        for (std::size_t r : flow_path(net, subnet_of, from, to).resources) {
            if (r < 2 * n || r >= 3 * n) out.push_back(r);
        }
        return out;
    }
    [[nodiscard]] std::size_t reverse(std::size_t r) const {
        if (r < n) return n + r;
        if (r < 2 * n) return r - n;
        return r < 3 * n + subnets ? r + subnets : r - subnets;
    }
    /// Whether the transfers on `r` may be paced: a finite FIFO, not a host's own egress
    /// (its qdisc, fair or not, is the sender's) and, for a host's ingress port, only with
    /// `k` ≥ 2 of them at once: one flow into a port is a chain's hop, which runs as
    /// predicted unpaced (README, "Cut-through"); several keep its FIFO full.
    /// Whether a link with `k` flows at once, busy or not both ways, sets a pace: not one a
    /// flow alone uses one way, where TCP finds its rate and a pace from the map's reading
    /// would hold the flow to it (a probe that read a 20 Mbit/s uplink as 17 held netlab
    /// random --seed 11's chain to 16.2 of 19.1 Mbit/s).
    [[nodiscard]] static bool sets_pace(std::size_t k, bool busy) { return k > 1 || busy; }
    [[nodiscard]] bool paceable(std::size_t r, std::size_t k) const {
        if (r < n || !fifo[r] || !(caps[r] < inf)) return false;
        return r >= 3 * n || k >= 2;
    }
};

/// `own`'s paces given the most pairs of its nodes on link r at once while the i-th runs
/// (`most_of(i, r)`) and the links that carry them while the link carrying their ACKs
/// carries some too (`two_way`); a transfer on neither such a link nor one another job's
/// flows use (either way) gets `idle` (none when negative). Other jobs make hosts' ports
/// busy only `live`.
template <class Most>
std::vector<Pace> paces(const Links& u, const std::vector<Transfer>& own, const std::vector<std::vector<std::size_t>>& crossed,
                        const Most& most_of, std::vector<char> two_way,
                        const std::vector<BackgroundFlow>& beside, double headroom, double idle, bool live) {
    std::vector<std::size_t> beside_on(u.caps.size(), 0);
    std::vector<char>& busy = two_way;
    for (const auto& f : beside) {
        for (std::size_t r : u.on(f.from, f.to)) {
            ++beside_on[r];
            for (std::size_t x : {r, u.reverse(r)}) {
                if (x >= 3 * u.n || live) busy[x] = 1;
            }
        }
    }
    std::vector<Pace> out;
    for (std::size_t i = 0; i < own.size(); ++i) {
        bool fifo = false, listed = false, shared = false;
        double rate = inf;
        for (std::size_t r : crossed[i]) {
            fifo = fifo || u.paceable(r, 2);
            const std::size_t k = std::max<std::size_t>(most_of(i, r), 1) + beside_on[r];
            if (!u.paceable(r, k)) continue;
            listed = true;
            shared = shared || busy[r] != 0;
            if (Links::sets_pace(k, busy[r] != 0)) rate = std::min(rate, u.caps[r] * headroom / static_cast<double>(k));
        }
        if (!listed || !shared) rate = idle;
        // Listed as idle too when it might be paced (its pace is lifted once it is alone).
        if (rate >= 0 && (listed || fifo)) out.push_back({own[i].message, own[i].from, own[i].to, rate});
    }
    return out;
}

}  // namespace

std::vector<Pace> crossing_paces(const Network& net, const Timeline& own, const std::vector<BackgroundFlow>& beside,
                                 double headroom) {
    if (!net.capacities() || own.transfers.empty()) return {};
    const Links u(net);
    // The most transfers on each link at once, and whether a link carries them while its
    // reverse does: a sweep over their intervals. Transfers between the same two nodes go
    // one after another on their lane (however the model overlaps them): a pair counts once
    // while any of its transfers runs.
    std::vector<std::vector<std::pair<double, int>>> events(u.caps.size());
    std::vector<std::vector<std::size_t>> crossed(own.transfers.size());
    std::map<std::pair<NodeId, NodeId>, std::vector<std::pair<double, double>>> by_pair;
    for (std::size_t i = 0; i < own.transfers.size(); ++i) {
        const Transfer& t = own.transfers[i];
        crossed[i] = u.on(t.from, t.to);
        by_pair[{t.from, t.to}].push_back({t.start, std::max(t.start, t.arrival)});
    }
    for (auto& [pair, spans] : by_pair) {
        std::sort(spans.begin(), spans.end());
        const auto on = u.on(pair.first, pair.second);
        for (std::size_t j = 0; j < spans.size();) {
            auto [from, to] = spans[j];
            for (++j; j < spans.size() && spans[j].first < to; ++j) to = std::max(to, spans[j].second);
            for (std::size_t r : on) {
                events[r].push_back({from, +1});
                events[r].push_back({to, -1});
            }
        }
    }
    const auto sweep = [](std::vector<std::pair<double, int>> e, auto&& at_each) {
        std::sort(e.begin(), e.end());  // an end before a start at the same moment
        for (const auto& ev : e) at_each(ev);
    };
    std::vector<std::size_t> most(u.caps.size(), 0);
    for (std::size_t r = 0; r < u.caps.size(); ++r) {
        long at = 0;
        sweep(events[r], [&](const auto& ev) {
            at += ev.second;
            most[r] = std::max<std::size_t>(most[r], static_cast<std::size_t>(std::max(at, 0L)));
        });
    }
    // Each transfer's share counts the most transfers on the link at once while it runs
    // (a port busy early in the job does not hold a transfer that comes late): the count
    // as a step function per link, its maximum over the transfer's interval.
    std::vector<std::vector<std::pair<double, std::size_t>>> steps(u.caps.size());
    for (std::size_t r = 0; r < u.caps.size(); ++r) {
        long at = 0;
        sweep(events[r], [&](const auto& ev) {
            at += ev.second;
            const auto c = static_cast<std::size_t>(std::max(at, 0L));
            if (!steps[r].empty() && steps[r].back().first == ev.first) {
                steps[r].back().second = c;
            } else {
                steps[r].push_back({ev.first, c});
            }
        });
    }
    const auto most_of = [&](std::size_t i, std::size_t r) {
        const Transfer& t = own.transfers[i];
        const auto& st = steps[r];
        auto it = std::upper_bound(st.begin(), st.end(), std::make_pair(t.start, std::numeric_limits<std::size_t>::max()));
        std::size_t m = it == st.begin() ? 0 : std::prev(it)->second;
        for (; it != st.end() && it->first < std::max(t.start, t.arrival); ++it) m = std::max(m, it->second);
        return m;
    };
    std::vector<char> two_way(u.caps.size(), 0);
    for (std::size_t r = 0; r < u.caps.size(); ++r) {
        if (r >= 2 * u.n && r < 3 * u.n) continue;
        const std::size_t back = u.reverse(r);
        if (most[r] == 0 || most[back] == 0) continue;
        std::vector<std::pair<double, int>> both = events[r];  // r: ±1, its reverse: ±2
        for (const auto& [when, d] : events[back]) both.push_back({when, 2 * d});
        long here = 0, there = 0;
        sweep(std::move(both), [&](const auto& ev) {
            (ev.second == 1 || ev.second == -1 ? here : there) += ev.second > 0 ? 1 : -1;
            if (here > 0 && there > 0) two_way[r] = 1;
        });
    }
    // Other jobs' flows into a host's port are paced only as they run (current_paces(),
    // max-min): an equal share fixed now would hold this job's flows to what flows held
    // back elsewhere cannot take.
    return paces(u, own.transfers, crossed, most_of, std::move(two_way), beside, headroom, -1, false);
}

std::vector<char> may_be_paced(const Network& net, const std::vector<Transfer>& transfers) {
    std::vector<char> out(transfers.size(), 0);
    if (!net.capacities()) return out;
    const Links u(net);
    for (std::size_t i = 0; i < transfers.size(); ++i) {
        const auto on = u.on(transfers[i].from, transfers[i].to);
        out[i] = std::any_of(on.begin(), on.end(), [&](std::size_t r) { return u.paceable(r, 2); });
    }
    return out;
}

std::vector<Pace> current_paces(const Network& net, const std::vector<Transfer>& running,
                                const std::vector<BackgroundFlow>& beside, double headroom) {
    if (!net.capacities() || running.empty()) return {};
    const Links u(net);
    std::vector<std::vector<std::size_t>> crossed(running.size());
    std::vector<std::size_t> most(u.caps.size(), 0);
    std::vector<FlowPath> flows;
    for (std::size_t i = 0; i < running.size(); ++i) {
        crossed[i] = u.on(running[i].from, running[i].to);
        for (std::size_t r : crossed[i]) ++most[r];
        flows.push_back(flow_path(net, u.subnet_of, running[i].from, running[i].to));
        // Nor the pair's bandwidth, a reading of what one flow between them carried.
        flows.back().cap = inf;
    }
    for (const auto& f : beside) {
        flows.push_back(flow_path(net, u.subnet_of, f.from, f.to));
        if (f.cap > 0) flows.back().cap = std::min(flows.back().cap, f.cap);
    }
    std::vector<char> two_way(u.caps.size(), 0);
    for (std::size_t r = 0; r < u.caps.size(); ++r) {
        if (r < 2 * u.n || r >= 3 * u.n) two_way[r] = most[r] > 0 && most[u.reverse(r)] > 0;
    }
    // Flows held back elsewhere leave their part of a link to the others: each is paced at
    // its max-min rate rather than an equal share, held back only by links that set paces.
    std::vector<std::size_t> users = most;
    for (const auto& f : beside) {
        for (std::size_t r : u.on(f.from, f.to)) ++users[r];
    }
    std::vector<double> caps = u.caps;
    for (std::size_t r = 0; r < caps.size(); ++r) {
        if (!Links::sets_pace(users[r], two_way[r] != 0)) caps[r] = inf;
    }
    const std::vector<double> fair = max_min_rates(caps, flows);
    std::map<std::tuple<MessageId, NodeId, NodeId>, double> fair_of;
    for (std::size_t i = 0; i < running.size(); ++i) fair_of[{running[i].message, running[i].from, running[i].to}] = fair[i];
    std::vector<Pace> out = paces(u, running, crossed, [&](std::size_t, std::size_t r) { return most[r]; }, std::move(two_way), beside, headroom, 0, true);
    for (Pace& p : out) {
        const double f = fair_of[{p.message, p.from, p.to}];
        if (p.rate > 0 && f < inf) p.rate = f * headroom;
    }
    return out;
}

}  // namespace hetcast
