// Measuring the cluster: latency by pings, goodputs of flows measured together (this
// member asks, or is asked by a prober to receive one), and the map built from them
// (map/probe.hpp) and stored on every member.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/map/probe.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/membership.hpp"
#include "at_once.hpp"
#include "service_probes.hpp"

namespace hetcast {
using namespace detail;

namespace {

constexpr std::size_t map_stores_at_once = 4;

/// A rate for a note: "38.2 Mbit/s", "unlimited", "none".
std::string mbit_text(double bytes_per_s) {
    if (!(bytes_per_s > 0)) return "none";
    if (!std::isfinite(bytes_per_s)) return "unlimited";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1f Mbit/s", bytes_per_s * 8 / 1e6);
    return buf;
}

}  // namespace

/// The prober's requests: to this member answered here, to the others over the peer.
ProbeLink Probes::probe_link() {
    ProbeLink link;
    link.self = core_.cfg.name;
    link.call = [this](const std::string& member, const json& req, std::chrono::milliseconds timeout) -> json {
        if (member != core_.cfg.name) return core_.peer->call(member, req, timeout);
        const std::string cmd = field<std::string>(req, "cmd", "");
        if (cmd == "goodput") return answer_goodput(*core_.peer, core_.cfg.name, req);
        if (cmd == "ping") return answer_ping(*core_.peer, req);
        return core_.hello(field<bool>(req, "nic", false));
    };
    link.note = [this](const std::string& line) { core_.say(LogLevel::info, line); };
    return link;
}

/// The map to every member of `members`, a few at a time; who could not store it.
std::vector<std::string> Probes::store_map(const std::vector<Member>& members, const std::string& text,
                                                  const json& req) {
    // A few members at a time: one after the other took 3.8 s at 48 members; all at once
    // timed out at 96 (96 copies of the map through the prober's 20 Mbit/s NIC).
    std::vector<char> stored(members.size(), 0);
    at_once(members.size(), map_stores_at_once, [&](std::size_t i) {
        const std::string& name = members[i].name;
        try {
            if (name == core_.cfg.name) {
                core_.set_map(text);
                stored[i] = 1;
            } else {
                stored[i] = field<bool>(
                    core_.peer->call(name, {{"cmd", "set_map"}, {"map", text}, {"order", req}}, call_timeout), "ok", false);
            }
        } catch (const std::exception&) {
            stored[i] = 0;
        }
    });
    std::vector<std::string> not_updated;
    for (std::size_t i = 0; i < members.size(); ++i) {
        if (!stored[i]) not_updated.push_back(members[i].name);
    }
    return not_updated;
}

/// `hetcast probe --refresh NAME...`: each named member measured again as if it joined the
/// map (measure_join): against a member of each subnet, its row, column and subnet replaced;
/// `--refresh-uplink NAME...`: then the uplink of each named member's subnet (measure_uplink).
/// The rest of the map stays. A probed map (subnets and capacities) only.
json Probes::probe_refresh(const json& req, const std::vector<std::string>& refresh,
                           const std::vector<std::string>& uplinks) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto old = core_.current_map();
    if (!old) throw InputError("probe --refresh: no map yet: probe without --refresh first");
    const std::vector<Member> members = core_.current_members();
    ProbeOptions o;
    o.tolerance = field<double>(req, "tolerance", core_.cfg.tolerance);
    o.repeats = field<int>(req, "repeats", o.repeats);
    o.seconds = field<double>(req, "seconds", o.seconds);
    Network net = *old;
    std::size_t measurements = 0;
    double measured = 0;
    json notes = json::array();
    for (const auto& name : refresh) {
        if (std::none_of(members.begin(), members.end(), [&](const Member& m) { return m.name == name; })) {
            throw InputError("probe --refresh: '" + name + "' is not a member");
        }
        if (!net.subnets() || !net.capacities() || net.latency().empty()) {
            throw InputError("probe --refresh: the map has no subnets and capacities: probe without --refresh");
        }
        const MeasuredJoin mj = measure_join(probe_link(), net, name, field<int>(req, "reps", 10), o);
        net = mj.network;
        measurements += mj.result.measurements;
        measured += mj.result.measured_seconds;
        notes.push_back(name + " measured again against " + std::to_string(mj.pinged) + " subnets: with " +
                        net.name((*net.subnets())[mj.result.subnet].front()) +
                        (mj.result.doubt.empty() ? "" : " (" + mj.result.doubt + ")"));
        core_.say(LogLevel::info, "probe --refresh: " + notes.back().get<std::string>());
    }
    for (const auto& name : uplinks) {
        if (std::none_of(members.begin(), members.end(), [&](const Member& m) { return m.name == name; })) {
            throw InputError("probe --refresh-uplink: '" + name + "' is not a member");
        }
        const MeasuredUplink mu = measure_uplink(probe_link(), net, name, field<int>(req, "reps", 10), o);
        const std::vector<double>& before = net.capacities()->uplink;  // measure_uplink() needs capacities
        const double was = mu.subnet < before.size() ? before[mu.subnet] : std::numeric_limits<double>::infinity();
        net = mu.network;
        measurements += mu.result.measurements;
        measured += mu.result.measured_seconds;
        notes.push_back("the uplink of " + name + "'s subnet measured again: " + mbit_text(mu.result.uplink) + " (was " +
                        mbit_text(was) + ")" + (mu.result.doubt.empty() ? "" : ": " + mu.result.doubt));
        core_.say(LogLevel::info, "probe --refresh-uplink: " + notes.back().get<std::string>());
    }
    const std::string text = format_network(net, utc_now());
    std::vector<Member> mapped;
    for (const auto& m : members) {
        if (net.find(m.name)) mapped.push_back(m);
    }
    const std::vector<std::string> not_updated = store_map(mapped, text, req);
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return {{"ok", not_updated.empty()},
            {"map", text},
            {"notes", notes},
            {"doubts", json::array()},
            {"measurements", measurements},
            {"measured_seconds", measured},
            {"seconds", seconds},
            {"error", not_updated.empty() ? "" : "the map could not be stored on some members"},
            {"not_updated", not_updated},
            {"unreachable", json::array()}};
}

/// Latency by pings, then subnets and capacities from goodputs (map/probe.hpp); the
/// map goes to every member.
json Probes::probe(const json& req, const Peer::Responder& respond) {
    const auto refresh = field<std::vector<std::string>>(req, "refresh", {});
    const auto uplinks = field<std::vector<std::string>>(req, "refresh_uplinks", {});
    if (!refresh.empty() || !uplinks.empty()) return probe_refresh(req, refresh, uplinks);
    const int reps = field<int>(req, "reps", 10);
    ProbeOptions o;
    o.tolerance = field<double>(req, "tolerance", core_.cfg.tolerance);
    o.repeats = field<int>(req, "repeats", o.repeats);
    o.seconds = field<double>(req, "seconds", o.seconds);
    o.structure_hosts = field<std::size_t>(req, "structure_hosts", o.structure_hosts);
    const std::vector<Member> all = core_.current_members();
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
        core_.say(LogLevel::warn, "probe: leaving out '" + name + "': " + why);
        down.push_back({{"name", name}, {"error", why}});
    }
    const auto since = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    const double answering = since(t0);
    // Every measurement, for `hetcast probe --trace`: why the probe placed what where.
    json trace = json::array();
    if (field<bool>(req, "trace", false)) {
        o.record = [&trace, &names](std::string_view phase, const std::vector<FlowPair>& flows, const std::vector<double>& rates) {
            json f = json::array();
            for (std::size_t k = 0; k < flows.size(); ++k) {
                f.push_back({names[flows[k].first], names[flows[k].second], std::isnan(rates[k]) ? json(nullptr) : json(rates[k])});
            }
            trace.push_back({{"phase", phase}, {"flows", std::move(f)}});
        };
    }
    const MeasuredCluster measured = measure_cluster(probe_link(), names, reps, o, respond);
    const auto t_store = std::chrono::steady_clock::now();
    const ProbeResult& r = measured.result;
    const std::string text = format_network(measured.network, utc_now());
    const std::vector<std::string> not_updated = store_map(members, text, req);
    const ProbeTimes& pt = measured.times;
    const json times{{"answering", answering}, {"latency", pt.latency},   {"setup", pt.setup},
                     {"measuring", pt.measuring}, {"first_bytes", pt.first_bytes}, {"answers", pt.answers},
                     {"other", pt.other}, {"storing", since(t_store)}};
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
            {"offsets", json(measured.offsets)},
            {"pairs", n * (n - 1) / 2},
            {"measurements", r.measurements},
            {"measured_seconds", r.measured_seconds},
            {"seconds", since(t0)},
            {"times", times},
            {"error", not_updated.empty() ? "" : "the map could not be stored on some members"},
            {"not_updated", not_updated},
            {"unreachable", down},
            {"trace", std::move(trace)}};
}

std::pair<std::vector<Member>, std::vector<std::pair<std::string, std::string>>> Probes::answering_members(
    const std::vector<Member>& all) {
    const auto patience = std::max<std::chrono::milliseconds>(core_.cfg.down_after, std::chrono::seconds(5));
    std::vector<std::future<std::string>> answers;
    for (const auto& m : all) {
        answers.push_back(std::async(std::launch::async, [this, name = m.name, patience]() -> std::string {
            if (name == core_.cfg.name) return {};
            try {
                (void)core_.peer->call(name, {{"cmd", "hello"}}, patience);
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
