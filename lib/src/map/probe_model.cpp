#include "probe_model.hpp"

#include <algorithm>
#include <cmath>

#include "hetcast/sim/flow.hpp"

namespace hetcast::probing {

std::vector<double> Model::rates(const std::vector<FlowPair>& flows) const {
    const std::size_t n = egress.size(), s = uplink.size();
    std::vector<double> cap(2 * n + 2 * s);
    std::copy(egress.begin(), egress.end(), cap.begin());
    std::copy(ingress.begin(), ingress.end(), cap.begin() + static_cast<std::ptrdiff_t>(n));
    std::copy(uplink.begin(), uplink.end(), cap.begin() + static_cast<std::ptrdiff_t>(2 * n));
    std::copy(uplink.begin(), uplink.end(), cap.begin() + static_cast<std::ptrdiff_t>(2 * n + s));
    std::vector<FlowPath> paths;
    for (const auto& [i, j] : flows) {
        FlowPath p{{i, n + j}, inf};
        if (subnet[i] != none && subnet[j] != none && subnet[i] != subnet[j]) {
            p.resources.push_back(2 * n + subnet[i]);
            p.resources.push_back(2 * n + s + subnet[j]);
        }
        paths.push_back(std::move(p));
    }
    return max_min_rates(cap, paths);
}

std::vector<NodeId> fastest(const std::vector<NodeId>& group, const std::vector<double>& rate) {
    std::vector<NodeId> v = group;
    std::stable_sort(v.begin(), v.end(), [&](NodeId a, NodeId b) { return rate[a] > rate[b]; });
    return v;
}

std::vector<NodeId> spread(const Subnets& subs, std::size_t k, const std::vector<double>& rate, std::size_t count) {
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

NodeId pick(const std::vector<NodeId>& ranked, std::initializer_list<NodeId> but) { return first_but(ranked, but, ranked[0]); }

NodeId first_but(const std::vector<NodeId>& ranked, std::initializer_list<NodeId> but, NodeId otherwise) {
    for (NodeId h : ranked) {
        if (std::find(but.begin(), but.end(), h) == but.end()) return h;
    }
    return otherwise;
}

double predicted_log_drop(const Model& model, const Design& d) {
    const auto alone = model.rates(d.base), with = model.rates(d.test);
    double s = 0;
    for (std::size_t f = 0; f < d.base.size(); ++f) s += std::log(with[f] / alone[f]);
    return s;
}

std::optional<Design> design(const Model& model, NodeId h, std::size_t a, const Subnets& found) {
    const std::size_t n = model.egress.size();
    const std::size_t s = found.size();
    // Distinct host pairs: a connection's handshake would wait behind data of the same
    // pair going the other way, and start late.
    const NodeId x = fastest(found[a], model.egress)[0], v = pick(fastest(found[a], model.ingress), {x});
    std::optional<Design> best;
    for (std::size_t y = 0; y < s; ++y) {
        for (std::size_t w = 0; w < s; ++w) {
            // With three or more subnets the host's flows go to a third one: if h is in y,
            // its flow to w must not meet x→y at y's uplink. With two, w is y.
            if (y == a || w == a || (s >= 3 ? w == y : w != y)) continue;
            const NodeId yi = fastest(found[y], model.ingress)[0], ye = pick(fastest(found[y], model.egress), {yi});
            const auto w_in = fastest(found[w], model.ingress), w_eg = fastest(found[w], model.egress);
            // The host's flows meet no watched flow at a NIC: its data would fill the FIFO
            // that the watched flow's data or ACKs wait in, and slow it wherever h is. With
            // two subnets w is y: its hosts other than yi and ye when it has them, else (a
            // subnet of two or three) other than the watched flow's own end, else none (n).
            const auto apart = [n](const std::vector<NodeId>& ranked, std::initializer_list<NodeId> but,
                                   std::initializer_list<NodeId> at_least) {
                const NodeId a = first_but(ranked, but, static_cast<NodeId>(n));
                return a < n ? a : first_but(ranked, at_least, static_cast<NodeId>(n));
            };
            const NodeId to = apart(w_in, {yi, ye}, {yi});
            const NodeId from = apart(w_eg, {ye, yi, to}, {ye, to});
            const FlowPair out{x, yi}, in{ye, v};
            std::vector<Design> tries;
            if (to < n) tries.push_back({{out}, {out, {h, to}}, 0});
            if (from < n) tries.push_back({{in}, {in, {from, h}}, 0});
            // Out of and into the subnet at once only with two subnets: with more, h's flow
            // out of a third subnet would meet the watched flow into a at that one's uplink.
            if (to < n && from < n && s == 2) tries.push_back({{out, in}, {out, in, {h, to}, {from, h}}, 0});
            for (auto& d : tries) {
                Model m = model;
                m.subnet[h] = a;
                d.log_drop = predicted_log_drop(m, d);
                if (d.log_drop > std::log(1 - least_drop) * static_cast<double>(d.base.size())) continue;
                bool leaks = false;
                for (std::size_t b = 0; b < s && !leaks; ++b) {
                    if (b == a) continue;
                    m.subnet[h] = b;
                    leaks = predicted_log_drop(m, d) < d.log_drop / 4;
                }
                if (!leaks && (!best || d.log_drop < best->log_drop)) best = d;
            }
        }
    }
    return best;
}

}  // namespace hetcast::probing
