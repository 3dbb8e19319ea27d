#include "hetcast/sim/lottery.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "hetcast/error.hpp"
#include "hetcast/sim/flow.hpp"

namespace hetcast {

double lottery_keep(double u, double s, double spread) {
    if (!(u > 0) || !(s > 0) || !std::isfinite(u) || !std::isfinite(s)) {
        throw InputError("lottery_keep: rates must be positive and finite");
    }
    if (!(spread >= 0 && spread < 1)) throw InputError("lottery_keep: spread must be in [0, 1)");
    const double a = (1 - spread) * s;
    const double b = (1 + spread) * s;
    if (u <= a) return 1;
    if (u >= b) return s / u;
    const double mean_min = (u * u - a * a) / (2 * (b - a)) + u * (b - u) / (b - a);
    return std::min(1.0, mean_min / u);
}

double lottery_completion(const Network& net, const Schedule& s, const Timeline& tl) {
    const auto& c = net.capacities();
    if (!c || c->queues != Queues::fifo || s.relay != Relay::cut_through) return tl.completion;
    const auto& ts = tl.transfers;
    constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    std::map<std::pair<MessageId, NodeId>, std::size_t> into;  // (message, node) → its feed
    for (std::size_t k = 0; k < ts.size(); ++k) into.emplace(std::pair{ts[k].message, ts[k].to}, k);
    std::vector<std::vector<std::size_t>> from(net.size());
    for (std::size_t k = 0; k < ts.size(); ++k) from[ts[k].from].push_back(k);
    const auto rate = [&](std::size_t k) {
        const double d = ts[k].arrival - ts[k].start;
        return d > 0 ? s.messages.at(ts[k].message).size / d : 0.0;
    };
    const auto overlap = [&](std::size_t a, std::size_t b) {
        return ts[a].start < ts[b].arrival && ts[a].arrival > ts[b].start;
    };
    // A feed draws lots when its sender's FIFO is full with it and others meanwhile, and it
    // is among the flows that take the most there (one held back elsewhere, as by an uplink,
    // is already at its mean in the timeline).
    const auto lottery = [&](std::size_t f) {
        double load = 0, most = 0;
        bool shared = false;
        for (std::size_t k : from[ts[f].from]) {
            if (!overlap(k, f)) continue;
            shared = shared || k != f;
            load += rate(k);
            most = std::max(most, rate(k));
        }
        return shared && load >= 0.9 * c->egress[ts[f].from] && rate(f) >= 0.95 * most;
    };
    // What a flow could carry were it not held to its feed: its fair share of each resource
    // on its way among the flows that cross it meanwhile.
    const auto subnet_of = c->uplink.empty() ? std::vector<std::size_t>{} : net.subnet_of();
    std::vector<FlowPath> paths;
    paths.reserve(ts.size());
    for (const auto& t : ts) paths.push_back(flow_path(net, subnet_of, t.from, t.to));
    const auto caps = resource_capacities(net);
    const auto could = [&](std::size_t g) {
        double u = paths[g].cap;
        for (std::size_t r : paths[g].resources) {
            std::size_t users = 0;
            for (std::size_t k = 0; k < ts.size(); ++k) {
                if (overlap(k, g) && std::find(paths[k].resources.begin(), paths[k].resources.end(), r) != paths[k].resources.end()) ++users;
            }
            u = std::min(u, caps[r] / static_cast<double>(std::max<std::size_t>(users, 1)));
        }
        return u;
    };
    // Each flow's mean rate once the feeds' lots are drawn, feed before follower.
    std::vector<double> kept(ts.size(), -1.0);
    std::vector<std::size_t> feed(ts.size(), none);
    for (std::size_t g = 0; g < ts.size(); ++g) {
        if (const auto it = into.find({ts[g].message, ts[g].from}); it != into.end()) feed[g] = it->second;
    }
    const auto mean = [&](std::size_t g) {
        std::vector<std::size_t> chain;
        for (std::size_t k = g; k != none && kept[k] < 0 && chain.size() <= ts.size(); k = feed[k]) chain.push_back(k);
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            const std::size_t k = *it, f = feed[k];
            const double r = rate(k);
            if (f == none || kept[f] < 0 || !(r > 0) || !(kept[f] > 0)) {
                kept[k] = r;
                continue;
            }
            kept[k] = std::min(r, kept[f]);
            if (!lottery(f)) continue;
            if (const double u = could(k); u > 0 && std::isfinite(u)) kept[k] = std::min(r, u * lottery_keep(u, kept[f]));
        }
        return kept[g];
    };
    double out = tl.completion;
    for (std::size_t k = 0; k < ts.size(); ++k) {
        const double r = mean(k);
        if (!(r > 0)) continue;
        out = std::max(out, ts[k].start + s.messages.at(ts[k].message).size / r + (ts[k].complete - ts[k].arrival));
    }
    return out;
}

}  // namespace hetcast
