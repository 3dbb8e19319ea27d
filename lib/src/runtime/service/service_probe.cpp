// Measuring the cluster: latency by pings, goodputs of flows measured together (this
// member asks, or is asked by a prober to receive one), and the map built from them
// (map/probe.hpp) and stored on every member.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/map/probe.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/membership.hpp"
#include "service_impl.hpp"

namespace hetcast {
using namespace detail;

namespace {

/// The most one goodput measurement a prober asks for may send (about 10 s at 6 Gbit/s).
constexpr std::uint64_t max_bulk_bytes = std::uint64_t{8} << 30;

}  // namespace

std::vector<PingSample> Service::Impl::measure(const std::string& from, const std::string& to, const json& req) {
    if (from == cfg.name) return samples_from_json(answer_ping(*peer, req)["samples"]);
    json r = req;
    r["cmd"] = "ping";
    const json a = peer->call(from, r, std::chrono::minutes(2));
    if (!get_or<bool>(a, "ok", false)) {
        throw Error("'" + from + "' could not measure '" + to + "': " + get_or<std::string>(a, "error", "?"));
    }
    return samples_from_json(a["samples"]);
}

/// A bulk transfer from `from` to this member, asked for by a prober: its goodput here.
/// In two steps when the prober measures several at once: {"from", "connect": true}
/// dials and answers {"connection"}; {"connection", "seconds"} measures on it.
json Service::Impl::goodput(const json& req) {
    const auto from = get_or<std::string>(req, "from", "");
    const double seconds = get_or<double>(req, "seconds", 0.3);
    const double warmup = get_or<double>(req, "warmup", std::min(0.1, seconds / 3));
    if (!req.contains("connection") && (from.empty() || from == cfg.name)) {
        throw InputError("goodput: 'from' must name another member");
    }
    if (get_or<bool>(req, "connect", false)) return {{"ok", true}, {"connection", peer->bulk_connect(from)}};
    const Peer::Goodput g = req.contains("connection")
                                ? peer->goodput_from(get_or<std::uint64_t>(req, "connection", 0), seconds, warmup,
                                                     max_bulk_bytes)
                                : peer->goodput_from(from, seconds, warmup, max_bulk_bytes);
    json arrivals = json::array();
    for (const auto& [t, b] : g.arrivals) arrivals.push_back({t - g.arrivals.front().first, b});
    return {{"ok", true},        {"goodput", g.rate},
            {"bytes", g.bytes},  {"seconds", g.seconds},
            {"start", g.arrivals.empty() ? 0.0 : g.arrivals.front().first}, {"arrivals", arrivals}};
}

/// Flows measured together: every receiver first dials its sender, then all are asked
/// at once to measure (this member's own flows are received here), each on a thread
/// that waits for its answer. The rates are taken over the span common to all of them
/// (their arrivals on this member's clock, through the offsets), or when that is less
/// than half of each one's window, over the earliest one's window (earliest_window_rates:
/// a flow held off through it rates 0 and is measured again), else each over its own. A flow whose receiver answered but could not rate it
/// (too little arrived: it starved; its transfer broke off) is NaN, for the probe to
/// measure again; one that could not connect, or whose receiver did not answer, fails the
/// measurement.
std::vector<double> Service::Impl::measure_flows(const std::vector<std::string>& names, const std::vector<FlowPair>& flows,
                                                 double seconds, const json& offsets) {
    const double warmup = std::min(0.1, seconds / 3);
    std::vector<double> rates(flows.size(), 0);
    std::vector<Arrivals> seen(flows.size());
    std::vector<std::string> failed(flows.size()), unrated(flows.size());
    std::barrier connected(static_cast<std::ptrdiff_t>(flows.size()));
    std::vector<std::thread> ts;
    for (std::size_t k = 0; k < flows.size(); ++k) {
        ts.emplace_back([&, k] {
            const std::string& from = names[flows[k].first];
            const std::string& to = names[flows[k].second];
            // An answer that is not ok: the receiver's own word on this flow.
            const auto ask = [&](const json& req, std::chrono::milliseconds timeout, std::string& refused) {
                json a;
                try {
                    a = to == cfg.name ? goodput(req) : peer->call(to, req, timeout);
                } catch (const Error& e) {
                    if (to != cfg.name) throw;
                    a = {{"ok", false}, {"error", e.what()}};
                }
                if (!get_or<bool>(a, "ok", false)) refused = get_or<std::string>(a, "error", "?");
                return a;
            };
            std::uint64_t connection = 0;
            try {
                std::string refused;
                const json a = ask({{"cmd", "goodput"}, {"from", from}, {"connect", true}}, call_timeout, refused);
                if (!refused.empty()) throw Error(refused);
                connection = get_or<std::uint64_t>(a, "connection", 0);
            } catch (const std::exception& e) {
                failed[k] = from + " -> " + to + ": " + e.what();
            }
            connected.arrive_and_wait();
            if (!failed[k].empty()) return;
            try {
                const json a = ask({{"cmd", "goodput"}, {"connection", connection}, {"seconds", seconds}},
                                   call_timeout + std::chrono::milliseconds(std::lround(seconds * 1e3)), unrated[k]);
                if (!unrated[k].empty()) return;
                rates[k] = get_or<double>(a, "goodput", 0.0);
                const double start = get_or<double>(a, "start", 0.0) - get_or<double>(offsets, to.c_str(), 0.0);
                for (const auto& p : a.value("arrivals", json::array())) {
                    seen[k].emplace_back(start + p.at(0).get<double>(), p.at(1).get<std::uint64_t>());
                }
            } catch (const std::exception& e) {
                failed[k] = from + " -> " + to + ": " + e.what();
            }
        });
    }
    for (auto& t : ts) t.join();
    for (const auto& f : failed) {
        if (!f.empty()) throw Error("measuring " + f);
    }
    std::vector<Arrivals> rated_seen;
    for (std::size_t k = 0; k < flows.size(); ++k) {
        if (unrated[k].empty() && rates[k] > 0) {
            rated_seen.push_back(std::move(seen[k]));
            continue;
        }
        say(LogLevel::info, "probe: " + names[flows[k].first] + " -> " + names[flows[k].second] + " not rated (" +
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
        say(LogLevel::info, "probe: " + names[flows[k].first] + " -> " + names[flows[k].second] +
                                " held off while the others ran: measured again");
        rates[k] = std::nan("");
    }
    return rates;
}

/// Latency from 64-byte pings (ECO §3: the minimum round trip), every pair of a
/// round-robin round at once; the clock offsets of the members come with it.
Matrix Service::Impl::ping_latency(const std::vector<std::string>& names, int reps, json& offsets,
                                   const Peer::Responder& respond) {
    const std::size_t n = names.size();
    Matrix lat(n, std::vector<double>(n, 0));
    offsets = json::object();
    offsets[cfg.name] = 0.0;
    std::mutex result_mu;
    std::string failure;
    const auto measure_pair = [&](std::uint32_t i, std::uint32_t j) {
        try {
            const auto samples = measure(names[i], names[j], {{"target", names[j]}, {"sizes", {64}}, {"reps", reps}});
            const auto best = std::min_element(samples.begin(), samples.end(), [](const PingSample& a, const PingSample& b) {
                return a.round_trip() < b.round_trip();
            });
            std::lock_guard lock(result_mu);
            lat[i][j] = lat[j][i] = best->round_trip() / 2;
            // The samples are on i's clock with j's stamps: estimate_offset is j's clock minus i's.
            if (names[i] == cfg.name) offsets[names[j]] = estimate_offset(samples);
            if (names[j] == cfg.name) offsets[names[i]] = -estimate_offset(samples);
        } catch (const std::exception& e) {
            std::lock_guard lock(result_mu);
            if (failure.empty()) failure = "pinging " + names[i] + " -> " + names[j] + ": " + e.what();
        }
    };
    std::size_t done = 0;
    for (const auto& round : round_robin(static_cast<std::uint32_t>(n))) {
        std::vector<std::thread> ts;
        for (auto [i, j] : round) ts.emplace_back(measure_pair, i, j);
        for (auto& t : ts) t.join();
        if (!failure.empty()) throw Error("probe failed: " + failure);
        done += round.size();
        respond({{"progress", {{"phase", "latency"}, {"pairs", done}, {"of", n * (n - 1) / 2}}}});
    }
    return lat;
}

/// Latency by pings, then subnets and capacities from goodputs (map/probe.hpp); the
/// map goes to every member.
json Service::Impl::probe(const json& req, const Peer::Responder& respond) {
    const int reps = get_or<int>(req, "reps", 10);
    ProbeOptions o;
    o.tolerance = get_or<double>(req, "tolerance", cfg.tolerance);
    o.repeats = get_or<int>(req, "repeats", o.repeats);
    o.seconds = get_or<double>(req, "seconds", o.seconds);
    o.structure_hosts = get_or<std::size_t>(req, "structure_hosts", o.structure_hosts);
    if (reps < 1 || reps > 1000) throw InputError("probe: reps must be between 1 and 1000");
    if (!(o.seconds >= 0.05 && o.seconds <= Peer::max_goodput_seconds)) {
        throw InputError("probe: seconds must be between 0.05 and " +
                         std::to_string(static_cast<int>(Peer::max_goodput_seconds)));
    }
    const std::vector<Member> all = current_members();
    if (all.size() < 2) throw InputError("probe: the cluster has fewer than two members");
    const auto t0 = std::chrono::steady_clock::now();
    // A lab always has a machine off: the map covers the members that answer, and says
    // which did not. Asked at once, each given the connect timeout at least (as a push does).
    const auto [members, unreachable] = answering_members(all);
    if (members.size() < 2) {
        std::string who;
        for (const auto& [name, why] : unreachable) who += (who.empty() ? "" : "; ") + name + ": " + why;
        throw Error("probe: no other member answers (" + who + ")");
    }
    const std::size_t n = members.size();
    std::vector<std::string> names;
    for (const auto& m : members) names.push_back(m.name);
    json down = json::array();
    for (const auto& [name, why] : unreachable) {
        say(LogLevel::warn, "probe: leaving out '" + name + "': " + why);
        down.push_back({{"name", name}, {"error", why}});
    }
    json offsets;
    const Matrix lat = ping_latency(names, reps, offsets, respond);
    o.names = names;
    o.progress = [&respond](std::string_view phase, std::size_t done) {
        respond({{"progress", {{"phase", phase}, {"measurements", done}}}});
    };
    const ProbeResult r =
        probe_capacities(lat, [&](const std::vector<FlowPair>& f, double s) { return measure_flows(names, f, s, offsets); }, o);
    std::vector<Overhead> send(n), recv(n);
    for (std::size_t i = 0; i < n; ++i) {
        json h = names[i] == cfg.name ? hello() : peer->call(names[i], {{"cmd", "hello"}}, call_timeout);
        const auto s = get_or<std::vector<double>>(h, "send_overhead", {0, 0});
        const auto v = get_or<std::vector<double>>(h, "recv_overhead", {0, 0});
        if (s.size() == 2) send[i] = {s[0], s[1]};
        if (v.size() == 2) recv[i] = {v[0], v[1]};
    }
    Network net = Network::parametric(names, lat, r.bandwidth, send, recv);
    net.set_subnets(r.subnets);
    net.set_capacities(r.capacities);
    const std::string text = format_network(net, utc_now());
    std::vector<std::string> not_updated;
    for (const auto& m : members) {
        try {
            if (m.name == cfg.name) {
                set_map(text);
            } else if (!get_or<bool>(peer->call(m.name, {{"cmd", "set_map"}, {"map", text}, {"order", req}}, call_timeout), "ok", false)) {
                not_updated.push_back(m.name);
            }
        } catch (const std::exception&) {
            not_updated.push_back(m.name);
        }
    }
    json subnets = json::array();
    for (const auto& g : r.subnets) {
        json names_of = json::array();
        for (NodeId id : g) names_of.push_back(names[id]);
        subnets.push_back(names_of);
    }
    return {{"ok", not_updated.empty()},
            {"map", text},
            {"subnets", subnets},
            {"notes", r.notes},
            {"doubts", r.doubts},
            {"goodput", r.goodput},
            {"offsets", offsets},
            {"pairs", n * (n - 1) / 2},
            {"measurements", r.measurements},
            {"measured_seconds", r.measured_seconds},
            {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
            {"error", not_updated.empty() ? "" : "the map could not be stored on some members"},
            {"not_updated", not_updated},
            {"unreachable", down}};
}

std::pair<std::vector<Member>, std::vector<std::pair<std::string, std::string>>> Service::Impl::answering_members(
    const std::vector<Member>& all) {
    const auto patience = std::max<std::chrono::milliseconds>(cfg.down_after, std::chrono::seconds(5));
    std::vector<std::future<std::string>> answers;
    for (const auto& m : all) {
        answers.push_back(std::async(std::launch::async, [this, name = m.name, patience]() -> std::string {
            if (name == cfg.name) return {};
            try {
                (void)peer->call(name, {{"cmd", "hello"}}, patience);
                return {};
            } catch (const std::exception& e) {
                return e.what();
            }
        }));
    }
    std::pair<std::vector<Member>, std::vector<std::pair<std::string, std::string>>> out;
    for (std::size_t i = 0; i < all.size(); ++i) {
        std::string why = answers[i].get();
        if (why.empty()) {
            out.first.push_back(all[i]);
        } else {
            out.second.emplace_back(all[i].name, std::move(why));
        }
    }
    return out;
}

}  // namespace hetcast
