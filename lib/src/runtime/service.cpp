#include "hetcast/runtime/service.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <ctime>
#include <fstream>
#include <mutex>
#include <string_view>
#include <thread>

#include "hetcast/error.hpp"
#include "hetcast/map/eco.hpp"
#include "hetcast/map/probe.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/runtime/push_plan.hpp"
#include "hetcast/report/plan_report.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sched/wu.hpp"
#include "hetcast/sim/wu_bound.hpp"

namespace hetcast {
namespace fs = std::filesystem;
using json = nlohmann::json;

const char* version() { return "0.1.0"; }

namespace {

constexpr auto call_timeout = std::chrono::seconds(10);
/// The most one goodput measurement a prober asks for may send (about 10 s at 6 Gbit/s).
constexpr std::uint64_t max_bulk_bytes = std::uint64_t{8} << 30;

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

void write_atomically(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    const fs::path tmp = file.string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        out.flush();
        if (!out) throw Error("cannot write " + tmp.string());
    }
    fs::rename(tmp, file);
}

/// A receiver's temporary file (FileSink): ".NAME.hetcast-NNN.part".
bool is_stale_part(const fs::path& p) {
    const std::string f = p.filename().string();
    constexpr std::string_view tag = ".hetcast-", suffix = ".part";
    if (f.size() < 1 + tag.size() + suffix.size() || f.front() != '.' || !f.ends_with(suffix)) return false;
    const auto at = f.rfind(tag, f.size() - suffix.size());
    if (at == std::string::npos || at == 0) return false;
    const std::string_view digits = std::string_view(f).substr(at + tag.size(), f.size() - suffix.size() - at - tag.size());
    return !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// What a daemon killed mid-job leaves behind: receivers' temporary files under the
/// destination root and relay copies in the spool. Nothing of it can be resumed.
std::pair<std::size_t, std::size_t> remove_leftovers(const fs::path& dest_root, const fs::path& spool,
                                                     const std::function<void(const std::string&)>& say) {
    std::size_t parts = 0, spooled = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dest_root, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::error_code ignored;
        if (!it->is_regular_file(ignored) || !is_stale_part(it->path())) continue;
        if (fs::remove(it->path(), ignored)) {
            ++parts;
        } else if (ignored) {
            say("cannot remove the stale " + it->path().string() + ": " + ignored.message());
        }
    }
    if (ec && ec != std::errc::no_such_file_or_directory) {
        say("cannot look for stale temporary files under " + dest_root.string() + ": " + ec.message());
    }
    ec.clear();
    for (auto it = fs::directory_iterator(spool, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        std::error_code failed;
        fs::remove_all(it->path(), failed);
        if (failed) {
            say("cannot remove the stale " + it->path().string() + ": " + failed.message());
        } else {
            ++spooled;
        }
    }
    return {parts, spooled};
}

/// Where a pushed file lands under every destination's root. A path leaving the root is
/// refused here, before any participant is sent a plan or creates a file.
std::string landing_name(const std::string& dest_dir, const std::string& file_name) {
    const std::string name = (fs::path(dest_dir) / file_name).lexically_normal().string();
    (void)confine("/", name);
    return name;
}

template <class T>
T get_or(const json& j, const char* key, T fallback) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        throw InputError(std::string("request: '") + key + "' has the wrong type");
    }
}

}  // namespace

struct Service::Impl {
    /// Holds one of the max_jobs places while a push runs.
    struct Busy {
        explicit Busy(Impl& i) : impl(i) {
            if (impl.running.fetch_add(1) >= impl.cfg.max_jobs) {
                --impl.running;
                throw Error("busy: " + std::to_string(impl.cfg.max_jobs) + " jobs are running");
            }
        }
        ~Busy() { --impl.running; }
        Busy(const Busy&) = delete;
        Busy& operator=(const Busy&) = delete;
        Impl& impl;
    };

    DaemonConfig cfg;
    std::function<void(const std::string&)> log;
    std::unique_ptr<Peer> peer;
    std::vector<Member> members;
    std::optional<Network> profile;  ///< link emulation, when configured
    mutable std::mutex mu;
    std::optional<Network> map;
    fs::file_time_type map_time{};
    std::atomic<std::size_t> running{0};

    fs::path map_file() const { return cfg.state_dir / "map.yaml"; }
    /// The member list as joins and leaves left it; newer than the configured cluster file.
    fs::path members_file() const { return cfg.state_dir / "members.yaml"; }

    std::vector<Member> current_members() const {
        std::lock_guard lock(mu);
        return members;
    }

    void set_members(std::vector<Member> ms) {
        save_cluster(members_file(), ms);
        peer->set_members(ms);
        std::lock_guard lock(mu);
        members = std::move(ms);
    }

    /// Tells every other member the new member list and map; who could not be told.
    std::vector<std::string> distribute(const std::vector<Member>& ms, const std::string* map_text) {
        std::vector<std::string> missed;
        for (const auto& m : ms) {
            if (m.name == cfg.name) continue;
            try {
                json a = peer->call(m.name, {{"cmd", "set_members"}, {"members", members_to_json(ms)}}, call_timeout);
                if (a.value("ok", false) && map_text) {
                    a = peer->call(m.name, {{"cmd", "set_map"}, {"map", *map_text}}, call_timeout);
                }
                if (!a.value("ok", false)) missed.push_back(m.name);
            } catch (const std::exception& e) {
                say("could not update '" + m.name + "': " + e.what());
                missed.push_back(m.name);
            }
        }
        return missed;
    }

    /// `old` restricted to (or extended to) `names`, in that order; `fill(i, j)` gives the
    /// latency and bandwidth of a pair `old` does not have. Subnets are recomputed (ECO).
    Network remap(const Network& old, const std::vector<std::string>& names, double tolerance,
                  const std::function<std::pair<double, double>(std::size_t, std::size_t)>& fill,
                  const std::vector<std::pair<Overhead, Overhead>>& new_overheads) const {
        const std::size_t n = names.size();
        Matrix lat(n, std::vector<double>(n, 0)), bw(n, std::vector<double>(n, 1e12));
        std::vector<Overhead> send(n), recv(n);
        for (std::size_t i = 0; i < n; ++i) {
            const auto oi = old.find(names[i]);
            if (oi) {
                send[i] = old.send_overheads()[*oi];
                recv[i] = old.recv_overheads()[*oi];
            } else if (i < new_overheads.size()) {
                std::tie(send[i], recv[i]) = new_overheads[i];
            }
            for (std::size_t j = 0; j < n; ++j) {
                if (i == j) continue;
                const auto oj = old.find(names[j]);
                if (oi && oj) {
                    lat[i][j] = old.latency()[*oi][*oj];
                    bw[i][j] = old.bandwidth()[*oi][*oj];
                } else {
                    std::tie(lat[i][j], bw[i][j]) = fill(i, j);
                }
            }
        }
        Network net = Network::parametric(names, lat, bw, send, recv);
        net.set_subnets(eco_partition(eco_edge_costs(net, 0), tolerance));
        return net;
    }

    /// A new member at the door: it joins the member list, is measured against every
    /// member, and the map gains its row and column (ECO 4.1 re-run); everyone is told.
    json join(const json& req) {
        const Member joiner{get_or<std::string>(req, "name", ""), get_or<std::string>(req, "host", ""),
                            get_or<std::uint16_t>(req, "port", 0)};
        if (joiner.name.empty() || joiner.host.empty() || joiner.port == 0) throw InputError("join: name, host, port");
        std::vector<Member> ms = current_members();
        ms.erase(std::remove_if(ms.begin(), ms.end(), [&](const Member& m) { return m.name == joiner.name; }), ms.end());
        if (std::none_of(ms.begin(), ms.end(), [&](const Member& m) { return m.name == cfg.name; })) {
            ms.insert(ms.begin(), Member{cfg.name, cfg.host, port()});
        }
        ms.push_back(joiner);
        set_members(ms);
        say("'" + joiner.name + "' joins from " + joiner.host + ":" + std::to_string(joiner.port));
        (void)distribute(ms, nullptr);  // the others must know its address to measure it
        std::vector<std::string> names;
        for (const auto& m : ms) names.push_back(m.name);
        const std::size_t k = names.size() - 1;
        const json ping_req{{"sizes", get_or<std::vector<std::size_t>>(req, "sizes", {64, 65536, 262144})},
                            {"reps", get_or<int>(req, "reps", 5)}};
        std::vector<LinkFit> fits(k);
        for (std::size_t i = 0; i < k; ++i) {
            json r = ping_req;
            r["target"] = joiner.name;
            fits[i] = fit_link(measure(names[i], joiner.name, r));
        }
        std::vector<std::pair<Overhead, Overhead>> overheads(names.size());
        const json h = peer->call(joiner.name, {{"cmd", "hello"}}, call_timeout);
        const auto so = get_or<std::vector<double>>(h, "send_overhead", {0, 0});
        const auto ro = get_or<std::vector<double>>(h, "recv_overhead", {0, 0});
        if (so.size() == 2 && ro.size() == 2) overheads[k] = {{so[0], so[1]}, {ro[0], ro[1]}};
        const auto old = current_map();
        const Network base = old ? *old : Network::parametric({cfg.name}, {{0}}, {{1}}, {{}}, {{}});
        const Network net = remap(base, names, cfg.tolerance, [&](std::size_t i, std::size_t j) {
            const LinkFit& f = fits[i == k ? j : i];
            return std::pair{f.latency, f.bandwidth};
        }, overheads);
        const std::string text = format_network(net, utc_now());
        set_map(text);
        const auto missed = distribute(ms, &text);
        return {{"ok", true}, {"members", members_to_json(ms)}, {"map", text}, {"not_updated", missed}};
    }

    json leave(const std::string& name) {
        std::vector<Member> ms = current_members();
        const auto before = ms.size();
        ms.erase(std::remove_if(ms.begin(), ms.end(), [&](const Member& m) { return m.name == name; }), ms.end());
        if (ms.size() == before) throw InputError("'" + name + "' is not a member");
        set_members(ms);
        std::optional<std::string> text;
        if (const auto old = current_map(); old && old->find(name)) {
            std::vector<std::string> names;
            for (const auto& m : ms) {
                if (old->find(m.name)) names.push_back(m.name);
            }
            text = format_network(remap(*old, names, cfg.tolerance, {}, {}), utc_now());
            set_map(*text);
        }
        const auto missed = distribute(ms, text ? &*text : nullptr);
        say("'" + name + "' left the cluster");
        return {{"ok", missed.empty()}, {"not_updated", missed},
                {"error", missed.empty() ? "" : "some members could not be told"}};
    }

    /// Joins through the first seed that answers; the member list and map come back.
    void join_through_seeds() {
        std::string why;
        for (const auto& seed : cfg.seeds) {
            const auto colon = seed.rfind(':');
            const std::string host = seed.substr(0, colon);
            const auto seed_port = static_cast<std::uint16_t>(std::stoul(seed.substr(colon + 1)));
            try {
                const json req{{"cmd", "join"}, {"name", cfg.name}, {"host", cfg.host == "0.0.0.0" ? "127.0.0.1" : cfg.host},
                               {"port", port()}};
                const auto [a, seed_name] = peer->call_at(host, seed_port, req, std::chrono::minutes(2));
                if (!a.value("ok", false)) throw Error(a.value("error", std::string("refused")));
                set_members(members_from_json(a.at("members")));
                set_map(a.at("map").get<std::string>());
                say("joined the cluster through '" + seed_name + "' (" + seed + ")");
                return;
            } catch (const std::exception& e) {
                why = seed + ": " + e.what();
            }
        }
        throw Error("cannot join through any seed (" + why + ")");
    }

    std::uint16_t port() const { return peer->port(); }

    void say(const std::string& line) const {
        if (log) log(line);
    }

    std::optional<Network> current_map() const {
        std::lock_guard lock(mu);
        return map;
    }

    void handle(const std::string& from, const json& req, const Peer::Responder& respond) {
        const std::string cmd = get_or<std::string>(req, "cmd", "");
        try {
            if (cmd == "hello") return respond(hello());
            if (cmd == "status") return respond(status());
            if (cmd == "map") return respond(map_answer());
            if (cmd == "set_map") return respond(set_map(get_or<std::string>(req, "map", "")));
            if (cmd == "ping") return respond(answer_ping(*peer, req));
            if (cmd == "probe") return respond(probe(req, respond));
            if (cmd == "goodput") return respond(goodput(req));
            if (cmd == "push") return respond(push(req, respond));
            if (cmd == "join") return respond(join(req));
            if (cmd == "leave") return respond(leave(get_or<std::string>(req, "name", "")));
            if (cmd == "set_members") {
                set_members(members_from_json(req.at("members")));
                return respond({{"ok", true}});
            }
            respond({{"ok", false}, {"error", "unknown request '" + cmd.substr(0, 32) + "'"}});
        } catch (const std::exception& e) {
            say("request '" + cmd + "' from '" + from + "' failed: " + e.what());
            respond({{"ok", false}, {"error", e.what()}});
        }
    }

    /// A host's own send and receive overheads: what a round trip between two hosts cannot
    /// separate from the link. From the emulation profile when there is one, else zero.
    std::pair<Overhead, Overhead> overheads() const {
        if (profile) {
            if (auto id = profile->find(cfg.name)) return {profile->send_overheads()[*id], profile->recv_overheads()[*id]};
        }
        return {};
    }

    json hello() const {
        const auto [send, recv] = overheads();
        return {{"ok", true},
                {"name", cfg.name},
                {"version", version()},
                {"send_overhead", {send.fixed, send.per_byte}},
                {"recv_overhead", {recv.fixed, recv.per_byte}}};
    }

    json status() {
        json ms = json::array();
        for (const auto& m : current_members()) {
            json row{{"name", m.name}, {"host", m.host}, {"port", m.port}};
            if (m.name == cfg.name) {
                row["up"] = true;
                row["version"] = version();
            } else {
                try {
                    const json a = peer->call(m.name, {{"cmd", "hello"}}, cfg.down_after);
                    row["up"] = true;
                    row["version"] = get_or<std::string>(a, "version", "?");
                } catch (const std::exception& e) {
                    row["up"] = false;
                    row["error"] = e.what();
                }
            }
            ms.push_back(std::move(row));
        }
        json out{{"ok", true}, {"name", cfg.name}, {"version", version()}, {"members", ms}, {"map_age", nullptr}};
        std::lock_guard lock(mu);
        if (map) {
            out["map_age"] = std::chrono::duration<double>(fs::file_time_type::clock::now() - map_time).count();
        }
        return out;
    }

    json map_answer() const {
        const auto m = current_map();
        if (!m) return {{"ok", false}, {"error", "no map yet: run 'hetcast probe'"}};
        std::ifstream in(map_file());
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return {{"ok", true}, {"map", text}};
    }

    json set_map(const std::string& text) {
        Network net = parse_network(text, "map from a peer");
        write_atomically(map_file(), text);
        std::lock_guard lock(mu);
        map = std::move(net);
        map_time = fs::last_write_time(map_file());
        return {{"ok", true}};
    }

    std::vector<PingSample> measure(const std::string& from, const std::string& to, const json& req) {
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
    json goodput(const json& req) {
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
    /// (their arrivals on this member's clock, through the offsets), unless that is less
    /// than half of each one's window.
    std::vector<double> measure_flows(const std::vector<std::string>& names, const std::vector<FlowPair>& flows,
                                      double seconds, const json& offsets) {
        const double warmup = std::min(0.1, seconds / 3);
        std::vector<double> rates(flows.size(), 0);
        std::vector<Arrivals> seen(flows.size());
        std::vector<std::string> failed(flows.size());
        std::barrier connected(static_cast<std::ptrdiff_t>(flows.size()));
        std::vector<std::thread> ts;
        for (std::size_t k = 0; k < flows.size(); ++k) {
            ts.emplace_back([&, k] {
                const std::string& from = names[flows[k].first];
                const std::string& to = names[flows[k].second];
                const auto ask = [&](const json& req, std::chrono::milliseconds timeout) {
                    const json a = to == cfg.name ? goodput(req) : peer->call(to, req, timeout);
                    if (!get_or<bool>(a, "ok", false)) throw Error(get_or<std::string>(a, "error", "?"));
                    return a;
                };
                std::uint64_t connection = 0;
                try {
                    connection = get_or<std::uint64_t>(ask({{"cmd", "goodput"}, {"from", from}, {"connect", true}}, call_timeout),
                                                       "connection", 0);
                } catch (const std::exception& e) {
                    failed[k] = from + " -> " + to + ": " + e.what();
                }
                connected.arrive_and_wait();
                if (!failed[k].empty()) return;
                try {
                    const json a = ask({{"cmd", "goodput"}, {"connection", connection}, {"seconds", seconds}},
                                       call_timeout + std::chrono::milliseconds(std::lround(seconds * 1e3)));
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
        return common_window_rates(seen, warmup, (seconds - warmup) / 2).value_or(rates);
    }

    /// Latency from 64-byte pings (ECO §3: the minimum round trip), every pair of a
    /// round-robin round at once; the clock offsets of the members come with it.
    Matrix ping_latency(const std::vector<std::string>& names, int reps, json& offsets, const Peer::Responder& respond) {
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
    json probe(const json& req, const Peer::Responder& respond) {
        const int reps = get_or<int>(req, "reps", 10);
        ProbeOptions o;
        o.tolerance = get_or<double>(req, "tolerance", cfg.tolerance);
        o.repeats = get_or<int>(req, "repeats", o.repeats);
        o.seconds = get_or<double>(req, "seconds", o.seconds);
        if (reps < 1 || reps > 1000) throw InputError("probe: reps must be between 1 and 1000");
        if (!(o.seconds >= 0.05 && o.seconds <= Peer::max_goodput_seconds)) {
            throw InputError("probe: seconds must be between 0.05 and " +
                             std::to_string(static_cast<int>(Peer::max_goodput_seconds)));
        }
        const std::vector<Member> members = current_members();
        if (members.size() < 2) throw InputError("probe: the cluster has fewer than two members");
        const auto t0 = std::chrono::steady_clock::now();
        const std::size_t n = members.size();
        std::vector<std::string> names;
        for (const auto& m : members) names.push_back(m.name);
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
                } else if (!get_or<bool>(peer->call(m.name, {{"cmd", "set_map"}, {"map", text}}, call_timeout), "ok", false)) {
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
                {"goodput", r.goodput},
                {"offsets", offsets},
                {"pairs", n * (n - 1) / 2},
                {"measurements", r.measurements},
                {"measured_seconds", r.measured_seconds},
                {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
                {"error", not_updated.empty() ? "" : "the map could not be stored on some members"},
                {"not_updated", not_updated}};
    }

    /// Runs one job and streams its progress to the caller.
    JobReport run_job(JobSpec spec, const Peer::Responder& respond, std::size_t index, std::size_t count) {
        spec.progress = [&respond, index, count](std::uint64_t got, std::uint64_t owed) {
            respond({{"progress", {{"file", index}, {"files", count}, {"bytes", got}, {"of", owed}}}});
        };
        return peer->run(std::move(spec));
    }

    /// Wu's multi-node multicast, executed: each entry's source serves its own file (or a
    /// generated payload); sizes come from the sources before planning.
    json push_pattern(const json& req, const Network& net, const Peer::Responder& respond) {
        const auto algo = get_or<std::string>(req, "algo", "wrp");
        const auto dest_dir = get_or<std::string>(req, "dest", "");
        PatternRequest pr = parse_pattern(get_or<std::string>(req, "pattern", ""),
                                          get_or<std::string>(req, "pattern_name", "pattern"), net);
        pr.model = parse_exec_model(get_or<std::string>(req, "model", "nonblocking"));
        if (pr.messages.empty()) throw InputError("the pattern has no messages");
        std::vector<JobInput> inputs;
        for (std::size_t k = 0; k < pr.messages.size(); ++k) {
            Message& m = pr.messages[k];
            const std::string& file = pr.files[k];
            const std::string source = net.name(m.source);
            if (!file.empty() && !fs::path(file).is_absolute()) {
                throw InputError("pattern entry " + std::to_string(k + 1) + ": file '" + file +
                                 "' must be an absolute path on " + source);
            }
            const std::string origin = file.empty() ? "gen:" + std::to_string(static_cast<std::uint64_t>(m.size)) + ":" +
                                                          std::to_string(k + 1)
                                                    : "file:" + file;
            const std::string name = landing_name(dest_dir, file.empty() ? source + "-" + std::to_string(k + 1) + ".bin"
                                                                         : fs::path(file).filename().string());
            const auto d = peer->describe(source, origin);
            m.size = static_cast<double>(d.size);
            inputs.emplace_back(origin, name, d.size, d.sha);
        }
        JobSpec spec;
        spec.network = &net;
        spec.model = pr.model;
        if (algo == "auto") {
            spec.schedule = plan_pattern_auto(net, pr).schedule;
        } else {
            spec.schedule = find_pattern_algorithm(algo).plan(net, pr);
        }
        spec.lower_bound = wu_lower_bound(net, pr);
        spec.inputs = std::move(inputs);
        say("push a pattern of " + std::to_string(pr.messages.size()) + " messages with " + spec.schedule.algorithm);
        const JobReport r = run_job(std::move(spec), respond, 0, 1);
        json out{{"ok", r.ok()}, {"reports", json::array({to_json(r)})}};
        if (!r.ok()) out["error"] = "some destinations failed";
        return out;
    }

    json push(const json& req, const Peer::Responder& respond) {
        if (req.contains("pattern")) {
            const auto net = current_map();
            if (!net) throw InputError("no map yet: run 'hetcast probe' first");
            const Busy busy(*this);
            return push_pattern(req, *net, respond);
        }
        const auto files = get_or<std::vector<std::string>>(req, "files", {});
        const auto to = get_or<std::vector<std::string>>(req, "to", {});
        const auto algo_name = get_or<std::string>(req, "algo", "auto");
        const auto dest_dir = get_or<std::string>(req, "dest", "");
        const auto model = parse_exec_model(get_or<std::string>(req, "model", "nonblocking"));
        if (files.empty()) throw InputError("push: no files");
        const Algorithm& algo = find_algorithm(algo_name);
        const auto net = current_map();
        if (!net) throw InputError("no map yet: run 'hetcast probe' first");
        const NodeId root = net->id(cfg.name);
        std::vector<NodeId> wanted;
        for (const auto& d : to) wanted.push_back(net->id(d));
        if (to.empty()) {
            for (NodeId v = 0; v < net->size(); ++v) {
                if (v != root) wanted.push_back(v);
            }
        }
        // Members that do not answer are left out of the plan: with --all the report lists
        // them as skipped, a destination named with --to is reported failed; the others
        // get the files either way.
        std::vector<NodeId> dests;
        std::vector<std::pair<std::string, std::string>> down;
        for (NodeId v : wanted) {
            try {
                (void)peer->call(net->name(v), {{"cmd", "hello"}}, cfg.down_after);
                dests.push_back(v);
            } catch (const std::exception& e) {
                say("leaving out '" + net->name(v) + "': " + e.what());
                down.emplace_back(net->name(v), e.what());
            }
        }
        if (dests.empty()) throw Error(to.empty() ? "no other member answers" : "no destination answers");

        // Every file is checked before the first one moves.
        std::vector<std::shared_ptr<FileBody>> bodies;
        std::vector<std::string> names;
        for (const auto& f : files) {
            if (!fs::path(f).is_absolute()) throw InputError("push: '" + f + "' is not an absolute path");
            if (!fs::is_regular_file(f)) throw InputError("push: '" + f + "' is not a readable file");
            if (fs::file_size(f) > cfg.max_message) {
                throw InputError("push: '" + f + "' is over the limit of " + std::to_string(cfg.max_message) + " bytes");
            }
            names.push_back(landing_name(dest_dir, fs::path(f).filename().string()));
            bodies.push_back(std::make_shared<FileBody>(f));
        }
        const Busy busy(*this);

        json reports = json::array();
        bool ok = true;
        for (std::size_t i = 0; i < files.size(); ++i) {
            const double size = static_cast<double>(bodies[i]->size());
            const PlanRequest pr = make_request(*net, root, dests, size, model);
            JobSpec spec = plan_push(*net, pr, algo.name);
            spec.inputs.emplace_back(bodies[i], names[i]);
            say("push " + files[i] + " (" + std::to_string(bodies[i]->size()) + " bytes) with " + spec.schedule.algorithm);
            JobReport r = run_job(std::move(spec), respond, i, files.size());
            for (const auto& [name, why] : down) {
                if (to.empty()) {
                    r.skipped.push_back(name);
                } else {
                    r.outcomes.push_back({0, cfg.name, name, 0, 0, false, "unreachable: " + why});
                }
            }
            ok = ok && r.ok();
            json rj = to_json(r);
            rj["file"] = files[i];
            reports.push_back(std::move(rj));
        }
        json out{{"ok", ok}, {"reports", reports}};
        if (!ok) out["error"] = "some destinations failed";
        return out;
    }
};

Service::Service(DaemonConfig config, std::function<void(const std::string&)> log)
    : impl_(std::make_unique<Impl>()) {
    Impl& d = *impl_;
    d.cfg = std::move(config);
    d.log = std::move(log);
    PeerConfig pc;
    pc.name = d.cfg.name;
    pc.host = d.cfg.host;
    pc.port = d.cfg.port;
    pc.secret = read_secret(d.cfg.secret_file);
    pc.dest_root = d.cfg.dest_root;
    pc.spool = d.cfg.state_dir / "spool";
    pc.chunk = d.cfg.chunk;
    pc.max_message = d.cfg.max_message;
    pc.stall_timeout = d.cfg.stall_timeout;
    pc.log = d.log;
    pc.file_origins = true;
    if (d.cfg.link_profile) {
        d.profile = load_network(*d.cfg.link_profile);
        pc.link_profile = d.profile;
        // The members of one cluster file emulate one network: they share its NICs and uplinks.
        if (d.cfg.cluster_file) {
            pc.link_state = d.cfg.cluster_file->parent_path() /
                            ("." + d.cfg.link_profile->stem().string() + ".link-state");
        }
    }
    if (fs::exists(d.members_file())) {
        d.members = load_cluster(d.members_file());
    } else if (d.cfg.cluster_file) {
        d.members = load_cluster(*d.cfg.cluster_file);
    }
    if (fs::exists(d.map_file())) {
        d.map = load_network(d.map_file());
        d.map_time = fs::last_write_time(d.map_file());
    }
    fs::create_directories(d.cfg.dest_root);
    fs::create_directories(pc.spool);
    if (const auto [parts, spooled] = remove_leftovers(d.cfg.dest_root, pc.spool, [&d](const std::string& l) { d.say(l); });
        parts + spooled > 0) {
        d.say("removed " + std::to_string(parts) + " stale temporary file" + (parts == 1 ? "" : "s") + " under " +
              d.cfg.dest_root.string() + " and " + std::to_string(spooled) + " spool entr" +
              (spooled == 1 ? "y" : "ies") + " from an earlier run");
    }
    d.peer = std::make_unique<Peer>(std::move(pc));
    // A daemon keeps files; a buffer an embedded Node sends it has nowhere to go, and a
    // receive queue nobody reads would only grow.
    d.peer->on_delivery([&d](Delivery x) {
        d.say("dropped a buffer of " + std::to_string(x.bytes ? x.bytes->size() : 0) + " bytes from '" + x.source +
              "' (a daemon keeps files only)");
    });
    d.peer->set_members(d.members);
    d.peer->on_request([&d](const std::string& from, const json& req, Peer::Responder respond) {
        d.handle(from, req, respond);
    });
}

Service::~Service() { stop(); }

void Service::start() {
    try {
        impl_->peer->start();
    } catch (const std::exception& e) {
        const std::string what = e.what();
        const std::string where = impl_->cfg.host + ':' + std::to_string(impl_->cfg.port);
        if (what.find(where) != std::string::npos) throw;
        throw Error("cannot listen on " + where + ": " + what);
    }
    if (!impl_->cfg.seeds.empty()) impl_->join_through_seeds();
    impl_->say("listening on " + impl_->cfg.host + ":" + std::to_string(impl_->peer->port()) + " as '" +
               impl_->cfg.name + "'" + (impl_->map ? "" : " (no map yet)"));
}

void Service::stop() { impl_->peer->stop(); }

std::uint16_t Service::port() const { return impl_->peer->port(); }

}  // namespace hetcast
