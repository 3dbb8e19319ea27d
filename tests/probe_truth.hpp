#pragma once
// Synthetic networks for the probe's tests (map/probe.hpp): a true network, the flow model's
// rates of it with noise as the measuring callback, and what to compare.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hetcast/map/probe.hpp"
#include "hetcast/sim/flow.hpp"

namespace hetcast::test {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double mbit = 1e6 / 8;  // bytes/s

/// A true network for the probe to find, and what the test may expect of it.
struct Truth {
    Network net;
    std::vector<double> egress, ingress, uplink;
    std::vector<std::size_t> sub;
    Matrix latency;  ///< what pings would give: noise that says nothing of the subnets
};

inline Truth make_truth(std::mt19937_64& rng, const std::vector<std::vector<std::pair<double, double>>>& hosts,
                 const std::vector<double>& uplink) {
    std::vector<std::string> names;
    std::vector<double> eg, in;
    std::vector<std::size_t> sub;
    Subnets subnets;
    for (std::size_t k = 0; k < hosts.size(); ++k) {
        auto& group = subnets.emplace_back();
        for (const auto& [e, i] : hosts[k]) {
            group.push_back(static_cast<NodeId>(names.size()));
            names.push_back("s" + std::to_string(k) + "h" + std::to_string(group.size()));
            eg.push_back(e);
            in.push_back(i);
            sub.push_back(k);
        }
    }
    const std::size_t n = names.size();
    std::uniform_real_distribution<double> l(50e-6, 150e-6);
    Matrix lat(n, std::vector<double>(n, 0)), bw(n, std::vector<double>(n, 1e12));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) lat[i][j] = lat[j][i] = l(rng);
    }
    Network net = Network::parametric(names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
    net.set_subnets(subnets);
    net.set_capacities({eg, in, std::vector<double>(n, inf), hosts.size() > 1 ? uplink : std::vector<double>{}});
    return {std::move(net), eg, in, uplink, sub, lat};
}

/// The flow model's rates times ±5 % noise; a tenth of the calls are disturbed (every flow
/// at half its rate, as if a host were busy), but never twice the same set of flows.
struct Synthetic {
    Synthetic(const Network& n, std::uint64_t seed) : net(n), rng(seed) {}
    const Network& net;
    std::mt19937_64 rng;
    std::vector<double> caps = resource_capacities(net);
    std::set<std::vector<FlowPair>> disturbed;

    std::vector<double> operator()(const std::vector<FlowPair>& flows, double) {
        std::vector<FlowPath> paths;
        for (const auto& [i, j] : flows) paths.push_back(flow_path(net, i, j));
        std::vector<double> r = max_min_rates(caps, paths);
        std::uniform_real_distribution<double> noise(0.95, 1.05), u(0, 1);
        const bool outlier = u(rng) < 0.1 && disturbed.insert(flows).second;
        for (double& x : r) x *= noise(rng) * (outlier ? 0.5 : 1.0);
        return r;
    }
};

/// TCP through tail-drop FIFOs: the flow model's rates, then on every full FIFO resource
/// (switch ports to hosts and uplinks, both ways; with `all_fifo` also the hosts' own NICs,
/// else those share fairly, as fq_codel does) the flows through it split what they carried
/// with random uneven weights (1 : 10 at worst, as two cubic flows through one 40 Mbit/s
/// uplink measured 6.4 + 35.4, 30.8 + 10.9 and 34.6 + 6.6 Mbit/s). A flow gains no more
/// than its other resources leave free, so the sum stays at the capacity where it can.
/// All-FIFO, a host's ACKs also wait behind its own data: a flow into a host whose NIC
/// sends at 90 % or more keeps 80–100 % of its rate, drawn per reading. Then ±5 % noise.
struct Fifo {
    Fifo(const Network& n, std::uint64_t seed, bool all) : net(n), rng(seed), all_fifo(all) {}
    const Network& net;
    std::mt19937_64 rng;
    bool all_fifo = false;
    std::vector<double> caps = resource_capacities(net);

    std::vector<double> operator()(const std::vector<FlowPair>& flows, double) {
        std::vector<FlowPath> paths;
        for (const auto& [i, j] : flows) paths.push_back(flow_path(net, i, j));
        std::vector<double> r = max_min_rates(caps, paths);
        std::vector<double> load(caps.size(), 0);
        for (std::size_t f = 0; f < r.size(); ++f) {
            for (std::size_t q : paths[f].resources) load[q] += r[f];
        }
        const std::size_t n = net.size();
        std::vector<std::size_t> queues;
        for (std::size_t q = all_fifo ? 0 : n; q < caps.size(); ++q) {
            if (q < 2 * n || q >= 3 * n) queues.push_back(q);  // not the disks
        }
        std::shuffle(queues.begin(), queues.end(), rng);
        std::uniform_real_distribution<double> weight(0.1, 1), noise(0.95, 1.05);
        for (std::size_t q : queues) {
            if (!std::isfinite(caps[q]) || load[q] < caps[q] * (1 - 1e-9)) continue;
            std::vector<std::size_t> on;
            for (std::size_t f = 0; f < r.size(); ++f) {
                if (std::count(paths[f].resources.begin(), paths[f].resources.end(), q)) on.push_back(f);
            }
            if (on.size() < 2) continue;
            double total = 0;
            std::vector<double> head, w;
            for (std::size_t f : on) {
                total += r[f];
                double h = paths[f].cap;
                for (std::size_t o : paths[f].resources) {
                    if (o != q) h = std::min(h, caps[o] - load[o] + r[f]);
                }
                head.push_back(h);
                w.push_back(weight(rng));
            }
            // Weighted shares, each at most its headroom; what one cannot take goes to the rest.
            std::vector<double> got(on.size(), 0);
            std::vector<char> fixed(on.size(), 0);
            for (bool again = true; again;) {
                again = false;
                double left = total, wsum = 0;
                for (std::size_t k = 0; k < on.size(); ++k) {
                    if (fixed[k]) left -= got[k]; else wsum += w[k];
                }
                if (wsum == 0) break;
                for (std::size_t k = 0; k < on.size(); ++k) {
                    if (!fixed[k] && left * w[k] / wsum > head[k]) {
                        got[k] = std::max(0.0, head[k]);
                        fixed[k] = again = true;
                    }
                }
                if (!again) {
                    for (std::size_t k = 0; k < on.size(); ++k) {
                        if (!fixed[k]) got[k] = left * w[k] / wsum;
                    }
                }
            }
            for (std::size_t k = 0; k < on.size(); ++k) {
                const std::size_t f = on[k];
                for (std::size_t o : paths[f].resources) load[o] += got[k] - r[f];
                r[f] = got[k];
            }
        }
        if (all_fifo) {
            // A host's ACKs wait in its own NIC's queue behind the data it sends: what it
            // receives while its queue is full slows down.
            std::uniform_real_distribution<double> ack(0.8, 1);
            for (std::size_t f = 0; f < r.size(); ++f) {
                const NodeId h = flows[f].second;
                for (std::size_t g = 0; g < r.size(); ++g) {
                    if (flows[g].first == h && load[h] >= caps[h] * 0.9) r[f] *= ack(rng);
                }
            }
        }
        for (double& x : r) x *= noise(rng);
        return r;
    }
};

/// The probe over Fifo; counts its cost in `measurements` and `measured_seconds` like any.
inline ProbeResult probe_fifo(const Truth& t, std::uint64_t seed, bool all_fifo) {
    Fifo s(t.net, seed, all_fifo);
    ProbeOptions o;
    o.names = t.net.names();
    o.fifo_nics = all_fifo;  // as measure_cluster() reads it from the hosts
    return probe_capacities(t.latency, [&s](const auto& flows, double seconds) { return s(flows, seconds); }, o);
}

/// The probe over Synthetic, every pair measured (steps 1–9) whatever the size.
inline ProbeResult probe(const Truth& t, std::uint64_t seed) {
    Synthetic s(t.net, seed);
    ProbeOptions o;
    o.structure_hosts = 0;
    o.names = t.net.names();
    return probe_capacities(t.latency, [&s](const auto& flows, double seconds) { return s(flows, seconds); }, o);
}

inline std::set<std::set<NodeId>> as_sets(const Subnets& s) {
    std::set<std::set<NodeId>> out;
    for (const auto& g : s) out.emplace(g.begin(), g.end());
    return out;
}

inline std::string describe(const Truth& t, const ProbeResult& r) {
    std::ostringstream s;
    s << "true:";
    for (const auto& g : *t.net.subnets()) {
        s << " {";
        for (NodeId h : g) s << ' ' << t.net.name(h) << '(' << t.egress[h] / mbit << '/' << t.ingress[h] / mbit << ')';
        s << " }";
    }
    s << " uplinks";
    for (double x : t.uplink) s << ' ' << x / mbit;
    s << "\nfound:";
    for (const auto& g : r.subnets) {
        s << " {";
        for (NodeId h : g) s << ' ' << t.net.name(h);
        s << " }";
    }
    s << " uplinks";
    for (double x : r.capacities.uplink) s << ' ' << x / mbit;
    for (const auto& note : r.notes) s << "\n  " << note;
    return s.str();
}

/// The rate of `watched` alone and with `added`, in the true network.
inline double kept(const Truth& t, FlowPair watched, FlowPair added) {
    const auto caps = resource_capacities(t.net);
    const double alone = max_min_rates(caps, {flow_path(t.net, watched.first, watched.second)})[0];
    const double with = max_min_rates(caps, {flow_path(t.net, watched.first, watched.second),
                                             flow_path(t.net, added.first, added.second)})[0];
    return with / alone;
}

inline bool within(double got, double want, double rel) { return std::abs(got - want) <= rel * want; }

}  // namespace hetcast::test
