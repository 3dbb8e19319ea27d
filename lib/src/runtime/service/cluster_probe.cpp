// Measuring a cluster: latency by pings, goodputs of flows measured together (the prober
// asks, each receiver measures on its own clock), overheads from each member's hello, and
// the map built from them (map/probe.hpp).
#include "hetcast/runtime/cluster_probe.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "cluster_flows.hpp"
#include "hetcast/error.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/membership.hpp"
#include "../wire/json_field.hpp"

namespace hetcast {

using json = nlohmann::json;

using namespace detail;


std::optional<std::pair<Queues, std::string>> queues_of(const std::vector<NicQueue>& nics,
                                                        const std::vector<std::string>& names) {
    std::size_t fifo = 0, told = 0;
    std::string some;
    for (std::size_t i = 0; i < nics.size(); ++i) {
        if (nics[i] == NicQueue::unknown) continue;
        ++told;
        if (nics[i] != NicQueue::fifo) continue;
        if (++fifo <= 3) some += (some.empty() ? "" : ", ") + (i < names.size() ? names[i] : std::to_string(i));
    }
    if (told == 0) return std::nullopt;
    const std::string counted = std::to_string(fifo) + " of the " + std::to_string(told) +
                                " members that could tell send through a FIFO" + (fifo > 0 ? " (" + some + (fifo > 3 ? ", ..." : "") + ")" : "");
    if (2 * fifo > told) return std::pair{Queues::fifo, "queues: " + counted + ": the map says capacity.queues: fifo"};
    return std::pair{Queues::realistic, "queues: " + counted + ": fair host NICs, FIFO switch ports and uplinks assumed"};
}

/// Partners each host pings on a site probed structure first: enough for the medians of the
/// map (8 n pairs); pinging all n^2/2 pairs took 22.7 s of a 96-host probe, mostly dialling.
constexpr std::size_t ping_partners = 16;

MeasuredCluster measure_cluster(const ProbeLink& link, const std::vector<std::string>& names, int reps,
                                ProbeOptions options, const std::function<void(const json&)>& progress) {
    if (reps < 1 || reps > 1000) throw InputError("probe: reps must be between 1 and 1000");
    if (!(options.seconds >= 0.05 && options.seconds <= Peer::max_goodput_seconds)) {
        throw InputError("probe: seconds must be between 0.05 and " +
                         std::to_string(static_cast<int>(Peer::max_goodput_seconds)));
    }
    if (names.size() < 2) throw InputError("probe: fewer than two members to measure");
    const std::size_t n = names.size();
    const auto since = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    const auto t0 = std::chrono::steady_clock::now();
    Offsets offsets;
    ProbeTimes times;
    // A site of many hosts pings a sample of its pairs: the map keeps two medians
    // (latency_by_kind), and the probe asks for more where latency places a host.
    const bool sample = options.structure_hosts > 0 && n >= options.structure_hosts;
    const Matrix lat = ping_latency(link, names, reps, offsets, progress, sample ? ping_partners : 0);
    times.latency = since(t0);
    options.names = names;
    if (progress) {
        options.progress = [&progress](std::string_view phase, std::size_t done) {
            progress({{"progress", {{"phase", phase}, {"measurements", done}}}});
        };
    }
    // How each host's NIC queues, before measuring: behind FIFOs the probe's rounds differ.
    std::vector<Overhead> send(n), recv(n);
    std::vector<NicQueue> nics(n);
    // Sixteen at a time: one after the other took 1-2 s of a 96-host probe.
    at_once(n, 16, [&](std::size_t i) {
        const json h = link.call(names[i], {{"cmd", "hello"}, {"nic", true}}, call_timeout);
        const auto s = field<std::vector<double>>(h, "send_overhead", {0, 0}, bare);
        const auto v = field<std::vector<double>>(h, "recv_overhead", {0, 0}, bare);
        if (s.size() == 2) send[i] = {s[0], s[1]};
        if (v.size() == 2) recv[i] = {v[0], v[1]};
        nics[i] = nic_queue_from_text(field<std::string>(h, "nic_queue", "", bare));
    });
    const auto queues = queues_of(nics, names);
    options.fifo_nics = queues && queues->first == Queues::fifo;
    Ahead ahead(link, names);
    options.prepare = [&ahead](const std::vector<FlowPair>& next) { ahead.prepare(next); };
    options.ping = [&](const std::vector<FlowPair>& pairs) { return ping_pairs(link, names, pairs, reps); };
    ProbeResult result = probe_capacities(
        lat,
        [&](const std::vector<FlowPair>& f, double s) { return measure_flows(link, names, f, s, offsets, times, ahead); },
        options);
    if (queues) {
        result.capacities.queues = queues->first;
        result.notes.push_back(queues->second);
    }
    Network network = Network::parametric(names, latency_by_kind(lat, result.subnets), result.bandwidth, send, recv);
    network.set_subnets(result.subnets);
    network.set_capacities(result.capacities);
    times.other = std::max(0.0, since(t0) - times.latency - times.setup - times.measuring);
    return {std::move(network), std::move(result), std::move(offsets), times};
}

bool joinable(const Network& old, const std::vector<std::string>& names, const std::string& joiner) {
    if (!old.subnets() || !old.capacities() || old.latency().empty() || old.subnets()->size() < 1) return false;
    std::set<std::string> a, b;
    for (const auto& x : old.names()) {
        if (x != joiner) a.insert(x);
    }
    for (const auto& x : names) {
        if (x != joiner) b.insert(x);
    }
    return a == b && !a.empty();
}

MeasuredJoin measure_join(const ProbeLink& link, const Network& old, const std::string& joiner, int reps,
                          ProbeOptions options) {
    if (reps < 1 || reps > 1000) throw InputError("probe: reps must be between 1 and 1000");
    if (!joinable(old, old.names(), joiner)) throw InputError("join: the map has no subnets and capacities to join");
    const Capacities& oc = *old.capacities();
    // The old map without the joiner (a member joining again), the joiner last.
    std::vector<std::string> names;
    std::vector<NodeId> from(old.size(), static_cast<NodeId>(-1));
    std::vector<NodeId> back;
    for (NodeId i = 0; i < old.size(); ++i) {
        if (old.name(i) == joiner) continue;
        from[i] = static_cast<NodeId>(names.size());
        names.push_back(old.name(i));
        back.push_back(i);
    }
    const std::size_t n = names.size() + 1;
    const auto host = static_cast<NodeId>(n - 1);
    names.push_back(joiner);
    Subnets subs;
    Capacities caps;
    caps.queues = oc.queues;
    for (std::size_t k = 0; k < old.subnets()->size(); ++k) {
        std::vector<NodeId> g;
        for (NodeId h : (*old.subnets())[k]) {
            if (from[h] != static_cast<NodeId>(-1)) g.push_back(from[h]);
        }
        if (g.empty()) continue;
        subs.push_back(std::move(g));
        if (!oc.uplink.empty()) caps.uplink.push_back(oc.uplink[k]);
    }
    for (NodeId i : back) {
        caps.egress.push_back(oc.egress[i]);
        caps.ingress.push_back(oc.ingress[i]);
        caps.disk.push_back(oc.disk[i]);
    }
    caps.egress.push_back(0);
    caps.ingress.push_back(0);
    caps.disk.push_back(std::numeric_limits<double>::infinity());

    // Latency: each subnet's fastest receiver pings the joiner, all subnets at once; the
    // joiner's clock offset from the prober's own ping.
    std::vector<NodeId> rep(subs.size());
    for (std::size_t k = 0; k < subs.size(); ++k) {
        rep[k] = *std::max_element(subs[k].begin(), subs[k].end(),
                                   [&](NodeId a, NodeId b) { return caps.ingress[a] < caps.ingress[b]; });
    }
    std::vector<double> lat(subs.size(), 0);
    std::vector<std::string> failed(subs.size());
    Offsets offsets;
    offsets[link.self] = 0.0;
    std::mutex mu;
    {
        std::vector<std::thread> ts;
        for (std::size_t k = 0; k < subs.size(); ++k) {
            ts.emplace_back([&, k] {
                try {
                    const auto samples = ping_pair(link, names[rep[k]], joiner, reps);
                    const auto best = std::min_element(samples.begin(), samples.end(), [](const PingSample& a, const PingSample& b) {
                        return a.round_trip() < b.round_trip();
                    });
                    std::lock_guard lock(mu);
                    lat[k] = best->round_trip() / 2;
                    if (names[rep[k]] == link.self) offsets[joiner] = estimate_offset(samples);
                } catch (const std::exception& e) {
                    failed[k] = e.what();
                }
            });
        }
        for (auto& t : ts) t.join();
    }
    for (const auto& f : failed) {
        if (!f.empty()) throw Error("join: " + f);
    }
    if (!offsets.contains(joiner)) {
        const auto samples = ping_pair(link, link.self, joiner, reps);
        offsets[joiner] = estimate_offset(samples);
    }

    options.names = names;
    ProbeTimes times;
    Ahead ahead(link, names);
    MeasuredJoin out{Network::parametric({joiner}, {{0}}, {{1}}, {{}}, {{}}), {}, subs.size()};
    out.result = probe_join(n, host, subs, caps,
                            [&](const std::vector<FlowPair>& f, double s) {
                                return measure_flows(link, names, f, s, offsets, times, ahead);
                            },
                            options);
    const JoinResult& j = out.result;
    if (j.subnet >= subs.size() || !(j.egress > 0) || !(j.ingress > 0)) {
        throw Error("join: no flow to or from '" + joiner + "' could be rated");
    }
    caps.egress[host] = j.egress;
    caps.ingress[host] = j.ingress;
    subs[j.subnet].push_back(host);

    std::vector<std::size_t> sub_of(n, 0);
    for (std::size_t k = 0; k < subs.size(); ++k) {
        for (NodeId h : subs[k]) sub_of[h] = k;
    }
    Matrix latency(n, std::vector<double>(n, 0)), bandwidth(n, std::vector<double>(n, 0));
    std::vector<Overhead> send(n), recv(n);
    for (NodeId a = 0; a + 1 < n; ++a) {
        send[a] = old.send_overheads()[back[a]];
        recv[a] = old.recv_overheads()[back[a]];
        for (NodeId b = 0; b + 1 < n; ++b) {
            latency[a][b] = old.latency()[back[a]][back[b]];
            bandwidth[a][b] = old.bandwidth()[back[a]][back[b]];
        }
    }
    const auto allowed = [&](NodeId a, NodeId b) {
        double x = std::min(caps.egress[a], caps.ingress[b]);
        if (sub_of[a] != sub_of[b] && !caps.uplink.empty()) x = std::min({x, caps.uplink[sub_of[a]], caps.uplink[sub_of[b]]});
        return x;
    };
    for (NodeId a = 0; a + 1 < n; ++a) {
        latency[a][host] = latency[host][a] = lat[sub_of[a]];
        bandwidth[a][host] = allowed(a, host);
        bandwidth[host][a] = allowed(host, a);
    }
    const json h = link.call(joiner, {{"cmd", "hello"}}, call_timeout);
    const auto so = field<std::vector<double>>(h, "send_overhead", {0, 0}, bare);
    const auto ro = field<std::vector<double>>(h, "recv_overhead", {0, 0}, bare);
    if (so.size() == 2) send[host] = {so[0], so[1]};
    if (ro.size() == 2) recv[host] = {ro[0], ro[1]};
    out.network = Network::parametric(names, latency_by_kind(latency, subs), bandwidth, send, recv);
    out.network.set_subnets(subs);
    out.network.set_capacities(caps);
    return out;
}

MeasuredUplink measure_uplink(const ProbeLink& link, const Network& old, const std::string& member, int reps,
                              ProbeOptions options) {
    if (reps < 1 || reps > 1000) throw InputError("probe: reps must be between 1 and 1000");
    if (!old.subnets() || !old.capacities() || old.latency().empty()) {
        throw InputError("probe --refresh-uplink: the map has no subnets and capacities: probe without --refresh-uplink");
    }
    const Subnets& subs = *old.subnets();
    if (subs.size() < 2) throw InputError("probe --refresh-uplink: the map has one subnet: no uplink to measure");
    const auto who = old.find(member);
    if (!who) throw InputError("probe --refresh-uplink: '" + member + "' is not in the map");
    std::size_t k = 0;
    while (k < subs.size() && std::find(subs[k].begin(), subs[k].end(), *who) == subs[k].end()) ++k;
    if (k == subs.size()) throw InputError("probe --refresh-uplink: '" + member + "' is in no subnet of the map");
    const std::vector<std::string>& names = old.names();
    options.names = names;
    // Clock offsets only of the members a flow names, each the first time (O(flows) pings).
    Offsets offsets{{link.self, 0.0}};
    ProbeTimes times;
    Ahead ahead(link, names);
    const auto measure = [&](const std::vector<FlowPair>& flows, double seconds) {
        for (const auto& [i, j] : flows) {
            for (NodeId h : {i, j}) {
                if (!offsets.contains(names[h])) offsets[names[h]] = estimate_offset(ping_pair(link, link.self, names[h], reps));
            }
        }
        return measure_flows(link, names, flows, seconds, offsets, times, ahead);
    };
    MeasuredUplink out{old, probe_uplink(old.size(), k, subs, *old.capacities(), measure, options), k};
    Capacities caps = *old.capacities();
    if (caps.uplink.size() != subs.size()) caps.uplink.assign(subs.size(), std::numeric_limits<double>::infinity());
    std::vector<char> changed(subs.size(), 0);
    for (std::size_t l = 0; l < subs.size(); ++l) {
        if (l != k && subs.size() != 2) continue;
        caps.uplink[l] = out.result.uplink;
        changed[l] = 1;
    }
    std::vector<std::size_t> sub_of(old.size(), 0);
    for (std::size_t l = 0; l < subs.size(); ++l) {
        for (NodeId h : subs[l]) sub_of[h] = l;
    }
    // Pairs across the uplink get what the NICs and the uplinks on the way allow; the rest
    // keep their readings.
    Matrix bandwidth = old.bandwidth();
    for (NodeId a = 0; a < old.size(); ++a) {
        for (NodeId b = 0; b < old.size(); ++b) {
            if (sub_of[a] == sub_of[b] || !(changed[sub_of[a]] || changed[sub_of[b]])) continue;
            bandwidth[a][b] = std::min({caps.egress[a], caps.ingress[b], caps.uplink[sub_of[a]], caps.uplink[sub_of[b]]});
        }
    }
    out.network = Network::parametric(names, old.latency(), bandwidth, old.send_overheads(), old.recv_overheads());
    out.network.set_subnets(subs);
    out.network.set_capacities(caps);
    return out;
}

json answer_goodput(Peer& peer, const std::string& self, const json& req) {
    const auto from = field<std::string>(req, "from", "", bare);
    const double seconds = field<double>(req, "seconds", 0.3, bare);
    const double warmup = field<double>(req, "warmup", std::min(0.1, seconds / 3), bare);
    if (!req.contains("connection") && (from.empty() || from == self)) {
        throw InputError("goodput: 'from' must name another member");
    }
    if (field<bool>(req, "connect", false, bare)) return {{"ok", true}, {"connection", peer.bulk_connect(from)}};
    const Peer::Goodput g = req.contains("connection")
                                ? peer.goodput_from(field<std::uint64_t>(req, "connection", 0, bare), seconds, warmup,
                                                    max_bulk_bytes)
                                : peer.goodput_from(from, seconds, warmup, max_bulk_bytes);
    json arrivals = json::array();
    for (const auto& [t, b] : g.arrivals) arrivals.push_back({t - g.arrivals.front().first, b});
    return {{"ok", true},        {"goodput", g.rate},
            {"bytes", g.bytes},  {"seconds", g.seconds},
            {"start", g.arrivals.empty() ? 0.0 : g.arrivals.front().first}, {"arrivals", arrivals}};
}

}  // namespace hetcast
