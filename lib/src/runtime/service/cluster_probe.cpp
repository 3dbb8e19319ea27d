// Measuring a cluster: latency by pings, goodputs of flows measured together (the prober
// asks, each receiver measures on its own clock), overheads from each member's hello, and
// the map built from them (map/probe.hpp).
#include "hetcast/runtime/cluster_probe.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <deque>
#include <future>
#include <map>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "hetcast/error.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/membership.hpp"
#include "../wire/json_field.hpp"

namespace hetcast {

using json = nlohmann::json;

namespace {

/// The most one goodput measurement a prober asks for may send (about 10 s at 6 Gbit/s).
constexpr std::uint64_t max_bulk_bytes = std::uint64_t{8} << 30;
constexpr auto call_timeout = std::chrono::seconds(10);
constexpr std::size_t ping_rounds_at_once = 2;
using Offsets = std::map<std::string, double>;
/// What a member answers or asks here: a field of the wrong type is named by its key alone.
constexpr std::string_view bare;

void note(const ProbeLink& link, const std::string& line) {
    if (link.note) link.note(line);
}

std::vector<PingSample> ping_pair(const ProbeLink& link, const std::string& from, const std::string& to, int reps) {
    const json a = link.call(from, {{"cmd", "ping"}, {"target", to}, {"sizes", {64}}, {"reps", reps}},
                             std::chrono::minutes(2));
    if (!field<bool>(a, "ok", false, bare)) {
        throw Error("'" + from + "' could not measure '" + to + "': " + field<std::string>(a, "error", "?", bare));
    }
    return samples_from_json(a.at("samples"));
}

/// Latency from 64-byte pings (ECO §3: the minimum round trip), every pair of
/// `ping_rounds_at_once` round-robin rounds at once; the clock offsets of the members come with it.
Matrix ping_latency(const ProbeLink& link, const std::vector<std::string>& names, int reps, Offsets& offsets,
                    const std::function<void(const json&)>& progress) {
    const std::size_t n = names.size();
    Matrix lat(n, std::vector<double>(n, 0));
    offsets[link.self] = 0.0;
    std::mutex result_mu;
    std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, std::string>> failed;
    const auto measure_pair = [&](std::uint32_t i, std::uint32_t j) {
        try {
            const auto samples = ping_pair(link, names[i], names[j], reps);
            const auto best = std::min_element(samples.begin(), samples.end(), [](const PingSample& a, const PingSample& b) {
                return a.round_trip() < b.round_trip();
            });
            std::lock_guard lock(result_mu);
            lat[i][j] = lat[j][i] = best->round_trip() / 2;
            // The samples are on i's clock with j's stamps: estimate_offset is j's clock minus i's.
            if (names[i] == link.self) offsets[names[j]] = estimate_offset(samples);
            if (names[j] == link.self) offsets[names[i]] = -estimate_offset(samples);
        } catch (const std::exception& e) {
            std::lock_guard lock(result_mu);
            failed.push_back({{i, j}, e.what()});
        }
    };
    std::size_t done = 0;
    // Rounds two at a time: each member in two pairs at most. One at a time, 48 members
    // spent 5.4 s in 47 rounds, mostly dialling (a pair's first ping opens its connection).
    const auto rounds = round_robin(static_cast<std::uint32_t>(n));
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> merged;
    for (std::size_t r = 0; r < rounds.size(); r += ping_rounds_at_once) {
        auto& m = merged.emplace_back();
        for (std::size_t k = r; k < std::min(rounds.size(), r + ping_rounds_at_once); ++k) {
            m.insert(m.end(), rounds[k].begin(), rounds[k].end());
        }
    }
    for (const auto& round : merged) {
        std::vector<std::thread> ts;
        for (auto [i, j] : round) ts.emplace_back(measure_pair, i, j);
        for (auto& t : ts) t.join();
        // A pair that failed among many (a connection that timed out on a busy host) is
        // pinged again alone, twice at most, before it ends the probe.
        for (int again = 0; again < 2 && !failed.empty(); ++again) {
            auto retry = std::move(failed);
            failed.clear();
            for (const auto& [pair, why] : retry) {
                note(link, "probe: pinging " + names[pair.first] + " -> " + names[pair.second] + " failed (" + why +
                               "): pinged again");
                measure_pair(pair.first, pair.second);
            }
        }
        if (!failed.empty()) {
            const auto& [pair, why] = failed.front();
            throw Error("probe failed: pinging " + names[pair.first] + " -> " + names[pair.second] + ": " + why);
        }
        done += round.size();
        if (progress) progress({{"progress", {{"phase", "latency"}, {"pairs", done}, {"of", n * (n - 1) / 2}}}});
    }
    return lat;
}

/// The receiver of a flow dials its sender for a measurement to come; returns the connection.
std::uint64_t dial(const ProbeLink& link, const std::string& from, const std::string& to) {
    const json a = link.call(to, {{"cmd", "goodput"}, {"from", from}, {"connect", true}}, call_timeout);
    if (!field<bool>(a, "ok", false, bare)) throw Error(field<std::string>(a, "error", "?", bare));
    return field<std::uint64_t>(a, "connection", 0, bare);
}

/// Flows dialled ahead (ProbeOptions::prepare) while the measurement before theirs runs:
/// set-up was a fifth of the 48-host probe's time. Used by the prober's thread only.
class Ahead {
public:
    Ahead(const ProbeLink& link, const std::vector<std::string>& names) : link_(link), names_(names) {}
    void prepare(const std::vector<FlowPair>& flows) {
        for (const FlowPair& f : flows) {
            ahead_[f].push_back(std::async(std::launch::async, [this, f] {
                return dial(link_, names_[f.first], names_[f.second]);
            }));
        }
    }
    /// The connection dialled ahead for `f`, if one was.
    std::optional<std::future<std::uint64_t>> take(const FlowPair& f) {
        const auto it = ahead_.find(f);
        if (it == ahead_.end()) return std::nullopt;
        std::future<std::uint64_t> got = std::move(it->second.front());
        it->second.pop_front();
        if (it->second.empty()) ahead_.erase(it);
        return got;
    }

private:
    const ProbeLink& link_;
    const std::vector<std::string>& names_;
    std::map<FlowPair, std::deque<std::future<std::uint64_t>>> ahead_;
};

/// Flows measured together: every receiver first dials its sender (unless it did ahead), then all are asked
/// at once to measure, each on a thread that waits for its answer. The rates are taken
/// over the span common to all of them (their arrivals on the prober's clock, through the
/// offsets), or when that is less than half of each one's window, over the earliest one's
/// window (earliest_window_rates: a flow held off through it rates 0 and is measured
/// again), else each over its own. A flow whose receiver answered but could not rate it
/// (too little arrived: it starved; its transfer broke off) is NaN, for the probe to
/// measure again; one that could not connect, or whose receiver did not answer, fails the
/// measurement.
std::vector<double> measure_flows(const ProbeLink& link, const std::vector<std::string>& names,
                                  const std::vector<FlowPair>& flows, double seconds, const Offsets& offsets,
                                  ProbeTimes& times, Ahead& ahead) {
    const auto t0 = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point t1;
    const double warmup = std::min(0.1, seconds / 3);
    std::vector<double> rates(flows.size(), 0);
    std::vector<Arrivals> seen(flows.size());
    std::vector<std::string> failed(flows.size()), unrated(flows.size());
    std::barrier connected(static_cast<std::ptrdiff_t>(flows.size()),
                           [&t1]() noexcept { t1 = std::chrono::steady_clock::now(); });
    std::vector<std::optional<std::future<std::uint64_t>>> dialled;
    for (const FlowPair& f : flows) dialled.push_back(ahead.take(f));
    std::vector<std::thread> ts;
    for (std::size_t k = 0; k < flows.size(); ++k) {
        ts.emplace_back([&, k] {
            const std::string& from = names[flows[k].first];
            const std::string& to = names[flows[k].second];
            // An answer that is not ok: the receiver's own word on this flow.
            const auto ask = [&](const json& req, std::chrono::milliseconds timeout, std::string& refused) {
                json a;
                try {
                    a = link.call(to, req, timeout);
                } catch (const Error& e) {
                    if (to != link.self) throw;
                    a = {{"ok", false}, {"error", e.what()}};
                }
                if (!field<bool>(a, "ok", false, bare)) refused = field<std::string>(a, "error", "?", bare);
                return a;
            };
            std::uint64_t connection = 0;
            try {
                connection = dialled[k] ? dialled[k]->get() : dial(link, from, to);
            } catch (const std::exception& e) {
                failed[k] = from + " -> " + to + ": " + e.what();
            }
            connected.arrive_and_wait();
            if (!failed[k].empty()) return;
            try {
                const json a = ask({{"cmd", "goodput"}, {"connection", connection}, {"seconds", seconds}},
                                   call_timeout + std::chrono::milliseconds(std::lround(seconds * 1e3)), unrated[k]);
                if (!unrated[k].empty()) return;
                rates[k] = field<double>(a, "goodput", 0.0, bare);
                const double start = field<double>(a, "start", 0.0, bare) - (offsets.contains(to) ? offsets.at(to) : 0.0);
                for (const auto& p : a.value("arrivals", json::array())) {
                    seen[k].emplace_back(start + p.at(0).get<double>(), p.at(1).get<std::uint64_t>());
                }
            } catch (const std::exception& e) {
                failed[k] = from + " -> " + to + ": " + e.what();
            }
        });
    }
    for (auto& t : ts) t.join();
    const auto t2 = std::chrono::steady_clock::now();
    times.setup += std::chrono::duration<double>(t1 - t0).count();
    times.measuring += std::chrono::duration<double>(t2 - t1).count();
    for (const auto& f : failed) {
        if (!f.empty()) throw Error("measuring " + f);
    }
    std::vector<Arrivals> rated_seen;
    for (std::size_t k = 0; k < flows.size(); ++k) {
        if (unrated[k].empty() && rates[k] > 0) {
            rated_seen.push_back(std::move(seen[k]));
            continue;
        }
        note(link, "probe: " + names[flows[k].first] + " -> " + names[flows[k].second] + " not rated (" +
                       (unrated[k].empty() ? "no rate" : unrated[k]) + "): measured again");
        rates[k] = std::nan("");
    }
    const double least = (seconds - warmup) / 2;
    auto common = common_window_rates(rated_seen, warmup, least);
    if (!common) common = earliest_window_rates(rated_seen, warmup, least);
    if (!common) return rates;
    for (std::size_t k = 0, r = 0; k < flows.size(); ++k) {
        if (std::isnan(rates[k])) continue;
        rates[k] = (*common)[r++];
        if (rates[k] > 0) continue;
        note(link, "probe: " + names[flows[k].first] + " -> " + names[flows[k].second] +
                       " held off while the others ran: measured again");
        rates[k] = std::nan("");
    }
    return rates;
}

}  // namespace

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
    const Matrix lat = ping_latency(link, names, reps, offsets, progress);
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
    for (std::size_t i = 0; i < n; ++i) {
        const json h = link.call(names[i], {{"cmd", "hello"}, {"nic", true}}, call_timeout);
        const auto s = field<std::vector<double>>(h, "send_overhead", {0, 0}, bare);
        const auto v = field<std::vector<double>>(h, "recv_overhead", {0, 0}, bare);
        if (s.size() == 2) send[i] = {s[0], s[1]};
        if (v.size() == 2) recv[i] = {v[0], v[1]};
        nics[i] = nic_queue_from_text(field<std::string>(h, "nic_queue", "", bare));
    }
    const auto queues = queues_of(nics, names);
    options.fifo_nics = queues && queues->first == Queues::fifo;
    Ahead ahead(link, names);
    options.prepare = [&ahead](const std::vector<FlowPair>& next) { ahead.prepare(next); };
    ProbeResult result = probe_capacities(
        lat,
        [&](const std::vector<FlowPair>& f, double s) { return measure_flows(link, names, f, s, offsets, times, ahead); },
        options);
    if (queues) {
        result.capacities.queues = queues->first;
        result.notes.push_back(queues->second);
    }
    Network network = Network::parametric(names, lat, result.bandwidth, send, recv);
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
    out.network = Network::parametric(names, latency, bandwidth, send, recv);
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
