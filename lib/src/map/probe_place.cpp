// Step 7 of the probe (map/probe.hpp): placing the hosts whose rates said nothing to ECO,
// and what the map says of pairs no measurement rated.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "prober.hpp"

namespace hetcast::probing {
namespace {

/// Candidate subnets a host set aside is tested against, at most (by affinity, then latency).
constexpr std::size_t max_tested = 2;

}  // namespace

// 7a. A host that receives faster than it sends may receive slower still while it sends:
// with a FIFO queue at its NIC its ACKs wait behind its own data, and the pair rounds made
// it send and receive at once. Its ingress is measured again, receiving only: `flows` at
// once, into hosts that send none of them. These readings replace the rounds' flows into
// those hosts (see contradictions()), and each one's ingress is at least what they carried
// into it together.
void Prober::receive_only(const std::vector<FlowPair>& flows, int count) {
    if (flows.empty()) return;
    // `count` passes, the one that carried the most counts: load elsewhere only lowers one.
    const auto got = passes({flows}, "placing", 1, std::min(opt_.repeats, count))[0];
    const std::vector<double>* best = nullptr;
    double most = 0;
    for (const auto& pass : got) {
        if (!std::all_of(pass.begin(), pass.end(), rated)) continue;
        const double sum = std::accumulate(pass.begin(), pass.end(), 0.0);
        if (sum > most) {
            most = sum;
            best = &pass;
        }
    }
    if (!best) return;
    const std::size_t index = sets_.size();
    sets_.push_back(flows);
    receiving_.insert(index);
    std::map<NodeId, double> into;
    for (std::size_t f = 0; f < flows.size(); ++f) {
        const auto [j, h] = flows[f];
        g_[j][h] = (*best)[f];
        with_[j][h] = index;
        into[h] += (*best)[f];
        alone_.insert(h);
    }
    for (const auto& [h, r] : into) in_[h] = model_.ingress[h] = std::max(in_[h], r);
}

/// Per candidate subnet: how many of h's measured pair rates (flows out of it and into it,
/// each in the round it was measured in) differ by more than the tolerance from what the
/// model predicts with h behind that subnet's uplink. A host that sends slowly is NIC-bound
/// outwards wherever it is, but what it receives from its own subnet runs at NIC speed, and
/// from elsewhere at most at the uplinks': a rate above an uplink rules that subnet out.
/// For a host whose ingress was measured receiving only, only those flows into it count.
std::vector<std::size_t> Prober::contradictions(NodeId h, const Subnets& core) const {
    std::vector<std::size_t> out(core.size(), 0);
    std::vector<std::size_t> sets;
    for (NodeId j = 0; j < n_; ++j) {
        if (j == h) continue;
        if (measured(h, j)) sets.push_back(with_[h][j]);
        if (measured(j, h)) sets.push_back(with_[j][h]);
    }
    std::sort(sets.begin(), sets.end());
    sets.erase(std::unique(sets.begin(), sets.end()), sets.end());
    const double slack = std::log(1 + opt_.tolerance);
    for (std::size_t k = 0; k < core.size(); ++k) {
        Model m = model_;
        m.subnet[h] = k;
        for (std::size_t s : sets) {
            const auto& flows = sets_[s];
            const auto predicted = m.rates(flows);
            for (std::size_t f = 0; f < flows.size(); ++f) {
                const auto [i, j] = flows[f];
                if ((i != h && j != h) || with_[i][j] != s) continue;
                if (j == h && alone_.count(h) && !receiving_.count(s)) continue;  // received while sending
                out[k] += std::abs(std::log(g_[i][j] / predicted[f])) > slack ? 1 : 0;
            }
        }
    }
    return out;
}

/// Whether subnet a comes before b as h's candidate: by affinity, then latency. Pairs
/// inside the host's own subnet are never slowed by other pairs of their round, those
/// across often are.
bool Prober::closer(NodeId h, const Subnets& core, std::size_t a, std::size_t b) const {
    const auto rank = [&](std::size_t k) {
        std::vector<double> l;
        double aff = 0;
        for (NodeId j : core[k]) {
            l.push_back(std::min(lat_[h][j], lat_[j][h]));
            aff += aff_[h][j] / static_cast<double>(core[k].size());
        }
        return std::pair{std::lround(aff * 50), median(l)};  // steps of 0.02: within the noise, latency decides
    };
    const auto [fa, na] = rank(a);
    const auto [fb, nb] = rank(b);
    return fa != fb ? fa > fb : na < nb;
}

// 7. First by its rates, what it receives and what it sends each on its own: the subnets
// whose uplinks its pair rates contradict least (see contradictions()), and those within
// twice that and one. One alone places the host; else among them, by affinity, then latency: pairs inside the host's own subnet
// are never slowed by other pairs of their round, those across often are. The first
// sharing test that shows sharing places the host; none: the first candidate, and a note
// says so.
void Prober::place(NodeId h, const Subnets& core, Subnets& found) {
    const bool slow_sender = core.size() >= 2 && in_[h] > (1 + opt_.tolerance) * eg_[h];
    if (slow_sender) {
        std::vector<FlowPair> flows;
        for (const auto& sub : core) flows.emplace_back(fastest(sub, eg_)[0], h);
        receive_only(flows, 2);
    }
    std::vector<std::size_t> against, order;
    std::size_t fewest = 0, next = none;
    // Plausible: within twice the fewest (and one) contradictions; one alone decides.
    const auto weigh = [&] {
        against = contradictions(h, core);
        fewest = *std::min_element(against.begin(), against.end());
        order.clear();
        next = none;
        for (std::size_t k = 0; k < core.size(); ++k) {
            if (against[k] <= 2 * fewest + 1) order.push_back(k);
            if (against[k] != fewest || std::count(against.begin(), against.end(), fewest) > 1) next = std::min(next, against[k]);
        }
    };
    weigh();
    const bool second_look = slow_sender && order.size() > 1;
    if (second_look) {
        // Received together, the flows shared its ingress evenly when the uplinks allow
        // more than that share, whichever side it is on: alone from the two likeliest.
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return against[a] != against[b] ? against[a] < against[b] : closer(h, core, a, b);
        });
        for (std::size_t k = 0; k < std::min<std::size_t>(order.size(), max_tested); ++k) {
            receive_only({{fastest(core[order[k]], eg_)[0], h}}, 1);
        }
        weigh();
    }
    if (order.size() == 1 && core.size() >= 2) {
        const std::size_t k = order[0];
        found[k].push_back(h);
        model_.subnet[h] = k;
        out_.notes.push_back(name(h) + ": NIC-bound (" + mbit(eg_[h]) + " out, " + mbit(in_[h]) +
                             " in) towards hosts on both sides of an uplink; placed with " + name(core[k][0]) +
                             " by its rates in and out: " + std::to_string(fewest) + " of its pair rates contradict " +
                             "that subnet's uplink, at least " + std::to_string(next) + " any other's");
        return;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return closer(h, core, a, b); });
    std::size_t where = order[0];
    std::string why = core.size() == 1 ? "(the only subnet)"
                                       : "by affinity and latency: too slow for a sharing test to show an uplink";
    // The own subnet is nearly always one of the first two (pairs inside it are never
    // slowed by others of their round): testing the rest costs more than it finds.
    // A slow sender that a second look at what it receives leaves in doubt loads an uplink
    // too little for a sharing test: none.
    const std::vector<std::size_t> tested(order.begin(),
                                          order.begin() + std::min<std::size_t>(order.size(), second_look ? 0 : max_tested));
    if (second_look) why = "by affinity and latency: its rates in and out fit " + std::to_string(order.size()) + " subnets";
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
            // A flow a pass could not rate makes the pass say nothing.
            if (!std::all_of(base[p].begin(), base[p].end(), rated) || !std::all_of(with.begin(), with.end(), rated)) continue;
            double s = 0;
            for (std::size_t f = 0; f < d->base.size(); ++f) s += std::log(with[f] / base[p][f]);
            drops.push_back(s);
            shared += s / d->log_drop > 0.5 ? 1 : 0;
            const auto half = static_cast<std::size_t>(opt_.repeats) / 2;
            if (shared > half || drops.size() - shared > half) break;
        }
        if (!drops.empty() && shared * 2 > drops.size()) {
            const auto watched = static_cast<double>(d->base.size());
            where = a;
            why = "by a sharing test: " + flow_name(d->base[0]) + (d->base.size() > 1 ? " and " + flow_name(d->base[1]) : "") +
                  " kept " + percent(std::exp(median(drops) / watched)) + " of their rate with its flows (" +
                  percent(std::exp(d->log_drop / watched)) + " predicted)";
            break;
        }
    }
    if (outside(h, where, core)) {
        set_apart_.insert(h);
        model_.subnet[h] = found.size();
        model_.uplink.push_back(inf);
        found.push_back({h});
        return;
    }
    found[where].push_back(h);
    model_.subnet[h] = where;
    if (core.size() >= 2 && why.rfind("by affinity and latency", 0) == 0) doubt_[h] = name(h) + " placed " + why;
    out_.notes.push_back(name(h) + ": NIC-bound (" + mbit(eg_[h]) + " out, " + mbit(in_[h]) +
                         " in) towards hosts on both sides of an uplink; placed with " + name(core[where][0]) +
                         " " + why);
}


// 7b. A host behind an uplink of its own that no single flow fills (35 Mbit/s behind 30)
// reads like a slow host anywhere, and a sharing test through the uplinks its flows cross
// shows sharing wherever it is tested. What a host of the subnet it was placed in sends it
// tells: from inside nothing crosses that subnet's uplink, from outside it does, beside a
// flow out of the subnet that fills it.
bool Prober::outside(NodeId h, std::size_t k, const Subnets& core) {
    if (core.size() < 2 || core[k].size() < 2 || !std::isfinite(model_.uplink[k])) return false;
    const std::vector<NodeId> eg = fastest(core[k], eg_);
    NodeId y = static_cast<NodeId>(n_);
    for (std::size_t l = 0; l < core.size(); ++l) {
        if (l == k) continue;
        const NodeId r = fastest(core[l], in_)[0];
        if (y == n_ || in_[r] > in_[y]) y = r;
    }
    const Design d{{{eg[0], y}}, {{eg[0], y}, {eg[1], h}}, 0};
    Model alone = model_;
    alone.subnet[h] = alone.uplink.size();
    alone.uplink.push_back(inf);
    const double log_drop = predicted_log_drop(alone, d);
    if (log_drop > std::log(1 - least_drop)) return false;
    // A pass that load elsewhere slowed shows a drop that is not there: a drop must show
    // twice, its absence once (most hosts tested are where they were placed).
    auto& base = baselines_[d.base];
    std::vector<double> drops;
    for (int p = 0; p < opt_.repeats && drops.size() < 2; ++p) {
        if (base.size() <= static_cast<std::size_t>(p)) base.push_back(once(d.base, "placing"));
        const auto with = once(d.test, "placing");
        if (!rated(base[p][0]) || !rated(with[0])) continue;
        const double drop = std::log(with[0] / base[p][0]);
        if (drop / log_drop <= 0.5) return false;
        drops.push_back(drop);
    }
    if (drops.size() < 2) return false;
    out_.notes.push_back(name(h) + ": behind an uplink of its own: " + flow_name(d.base[0]) + " kept " +
                         percent(std::exp(median(drops))) + " of its rate beside " + flow_name(d.test[1]) + " (" +
                         percent(std::exp(log_drop)) + " predicted from outside " + name(core[k][0]) + "'s subnet, 100% from inside)");
    return true;
}

/// Pairs no measurement rated get what the map's model allows them alone: the smaller NIC
/// rate, and across subnets the uplinks on the way.
void Prober::estimate_unmeasured(const std::vector<std::size_t>& sub, const std::vector<double>& uplink) {
    for (const auto& [i, j] : out_.unmeasured) {
        double r = std::min(eg_[i], in_[j]);
        if (sub[i] != sub[j] && uplink.size() > std::max(sub[i], sub[j])) r = std::min({r, uplink[sub[i]], uplink[sub[j]]});
        g_[i][j] = r;
        out_.notes.push_back(flow_name({i, j}) + ": not measured (no reading in its round, in smaller rounds, or alone); " +
                             "taken as what the NICs and uplinks on the way allow, " + mbit(r));
    }
}

}  // namespace hetcast::probing
