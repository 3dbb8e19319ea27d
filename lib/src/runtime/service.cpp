// The daemon's life (construction, start, stop), answering requests, and the member
// list: joins, leaves and telling the others. Measuring (service_probe.cpp) and pushing
// (service_push.cpp) are elsewhere; service_impl.hpp holds what they share.
#include "hetcast/runtime/service.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string_view>

#include "hetcast/error.hpp"
#include "hetcast/map/eco.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/version.hpp"
#include "service_impl.hpp"

namespace hetcast {
namespace fs = std::filesystem;
using namespace detail;

const char* version() { return HETCAST_VERSION; }

namespace {

/// A receiver's temporary file (FileSink, a bundle's too, a tree's link): ".NAME.hetcast-NNN.part".
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
        // A link too: a tree's symlink lands through a temporary name of the same pattern.
        if (!(it->is_regular_file(ignored) || it->is_symlink(ignored)) || !is_stale_part(it->path())) continue;
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

}  // namespace

StateDirLock::StateDirLock(const fs::path& dir) {
    const fs::path file = dir / "lock";
    std::error_code ec;
    fs::create_directories(dir, ec);
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error("cannot open " + file.string() + ": " + std::strerror(errno));
    int rc;
    do {
        rc = ::flock(fd_, LOCK_EX | LOCK_NB);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        const int err = errno;
        char buf[32] = {};
        const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
        std::string pid = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
        pid.erase(std::remove_if(pid.begin(), pid.end(), [](char c) { return c < '0' || c > '9'; }), pid.end());
        ::close(fd_);
        fd_ = -1;
        if (err == EWOULDBLOCK) {
            throw Error("the state directory " + dir.string() + " is in use by another hetcastd" +
                        (pid.empty() ? std::string() : " (pid " + pid + ")") +
                        "; stop it, or give this one its own state_dir and dest_root");
        }
        throw Error("cannot lock " + file.string() + ": " + std::strerror(err));
    }
    // Who holds it, for the next one to name.
    const std::string me = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) < 0) {
        // Only informative: the lock holds without it.
    }
}

StateDirLock::~StateDirLock() {
    if (fd_ >= 0) ::close(fd_);
}

void Service::Impl::add_revocations(const std::vector<net::Revocation>& revoked) {
    const auto known = peer->revoked();
    std::vector<net::Revocation> checked;
    for (const auto& r : revoked) {
        if (std::find(known.begin(), known.end(), r) != known.end()) continue;
        try {
            check_revocation(r, peer->identity().ca_pem);
            checked.push_back(r);
        } catch (const InputError& e) {
            say(LogLevel::warn, std::string("ignored a revocation: ") + e.what());
        }
    }
    if (checked.empty()) return;
    peer->revoke(checked);
    save_revoked(revoked_file(), peer->revoked());
}

void Service::Impl::set_members(std::vector<Member> ms) {
    save_cluster(members_file(), ms);
    peer->set_members(ms);
    std::lock_guard lock(mu);
    members = std::move(ms);
}

/// Tells every other member the new member list and map; who could not be told.
std::vector<std::string> Service::Impl::distribute(const std::vector<Member>& ms, const std::string* map_text) {
    std::vector<std::string> missed;
    for (const auto& m : ms) {
        if (m.name == cfg.name) continue;
        try {
            json a = peer->call(m.name,
                                {{"cmd", "set_members"},
                                 {"members", members_to_json(ms)},
                                 {"revoked", revocations_to_json(peer->revoked())}},
                                call_timeout);
            if (a.value("ok", false) && map_text) {
                a = peer->call(m.name, {{"cmd", "set_map"}, {"map", *map_text}}, call_timeout);
            }
            if (!a.value("ok", false)) missed.push_back(m.name);
        } catch (const std::exception& e) {
            say(LogLevel::warn, "could not update '" + m.name + "': " + e.what());
            missed.push_back(m.name);
        }
    }
    return missed;
}

/// `old` restricted to (or extended to) `names`, in that order; `fill(i, j)` gives the
/// latency and bandwidth of a pair `old` does not have. Subnets are recomputed (ECO).
Network Service::Impl::remap(const Network& old, const std::vector<std::string>& names, double tolerance,
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
json Service::Impl::join(const json& req) {
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
    say(LogLevel::info, "'" + joiner.name + "' joins from " + joiner.host + ":" + std::to_string(joiner.port));
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
    return {{"ok", true},
            {"members", members_to_json(ms)},
            {"revoked", revocations_to_json(peer->revoked())},
            {"map", text},
            {"not_updated", missed}};
}

json Service::Impl::leave(const json& req) {
    const std::string name = get_or<std::string>(req, "name", "");
    std::vector<Member> ms = current_members();
    const auto before = ms.size();
    ms.erase(std::remove_if(ms.begin(), ms.end(), [&](const Member& m) { return m.name == name; }), ms.end());
    if (ms.size() == before) throw InputError("'" + name + "' is not a member");
    if (name == cfg.name) throw InputError("'" + name + "' coordinates this leave: ask another member (--from)");
    // Its identity is refused from now on, here and (with the member list) everywhere:
    // certificates for it issued up to the operator's order no longer connect. The order
    // goes with the revocation, so that every member can check it.
    add_revocations({revocation_of(req, peer->identity().ca_pem, peer->revoked(), cfg.name,
                                   static_cast<std::int64_t>(std::time(nullptr)))});
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
    say(LogLevel::info, "'" + name + "' left the cluster");
    return {{"ok", missed.empty()}, {"not_updated", missed},
            {"error", missed.empty() ? "" : "some members could not be told"}};
}

/// Joins through the first seed that answers; the member list and map come back.
void Service::Impl::join_through_seeds() {
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
            if (a.contains("revoked")) add_revocations(revocations_from_json(a["revoked"]));
            set_map(a.at("map").get<std::string>());
            say(LogLevel::info, "joined the cluster through '" + seed_name + "' (" + seed + ")");
            return;
        } catch (const std::exception& e) {
            why = seed + ": " + e.what();
        }
    }
    throw Error("cannot join through any seed (" + why + ")");
}

void Service::Impl::handle(const net::PeerIdentity& from, const json& req, const Peer::Responder& respond) {
    const std::string cmd = get_or<std::string>(req, "cmd", "");
    const bool op = from.role == net::Role::operator_;
    // Starting pushes and changing the cluster take the operator's identity. A member's
    // lets it join under its own name and pass on what an operator started elsewhere
    // (members, map, a cancel looked for on every member).
    const auto needs_operator = [&]() {
        say(LogLevel::warn, "refused '" + cmd + "' from '" + from.name + "': a member's identity, not the operator's");
        respond({{"ok", false},
                 {"error", "'" + cmd + "' needs the operator's identity; '" + from.name + "' is a member"}});
    };
    say(LogLevel::debug, "request '" + cmd.substr(0, 32) + "' from '" + from.name + "'");
    try {
        if (cmd == "hello") return respond(hello());
        if (cmd == "status") return respond(status(get_or<bool>(req, "hellos", true)));
        if (cmd == "map") return respond(map_answer());
        if (cmd == "set_map") return respond(set_map(get_or<std::string>(req, "map", "")));
        if (cmd == "ping") return respond(answer_ping(*peer, req));
        if (cmd == "probe") {
            if (!op) return needs_operator();
            const Heartbeat beats(respond, cfg.heartbeat);
            return respond(probe(req, respond));
        }
        if (cmd == "goodput") return respond(goodput(req));
        if (cmd == "push") {
            if (!op) return needs_operator();
            json answer;
            {
                const Heartbeat beats(respond, cfg.heartbeat);
                answer = push(req, respond, from.name);
            }
            return respond(answer);
        }
        if (cmd == "jobs") return respond(list_jobs(get_or<bool>(req, "all", false)));
        if (cmd == "history") return respond(history_answer(op && get_or<bool>(req, "all", false)));
        if (cmd == "wait") return wait(req, respond, op);
        if (cmd == "cancel") {
            // A member passes on the operator's order (to look on every member); it was
            // given to that member, and it goes no further from here.
            if (!op) {
                try {
                    (void)check_order(req, peer->identity().ca_pem, peer->revoked(), from.name,
                                      static_cast<std::int64_t>(std::time(nullptr)));
                } catch (const InputError& e) {
                    say(LogLevel::warn, "refused 'cancel' from '" + from.name + "': " + e.what());
                    return respond({{"ok", false}, {"error", "'cancel' needs the operator's order: " + std::string(e.what())}});
                }
            }
            return respond(cancel(req, op));
        }
        if (cmd == "join") {
            if (!op && get_or<std::string>(req, "name", "") != from.name) {
                return respond({{"ok", false}, {"error", "'" + from.name + "' may join only under its own name"}});
            }
            return respond(join(req));
        }
        if (cmd == "leave") return op ? respond(leave(req)) : needs_operator();
        if (cmd == "set_members") {
            if (req.contains("revoked")) add_revocations(revocations_from_json(req["revoked"]));
            set_members(members_from_json(req.at("members")));
            return respond({{"ok", true}});
        }
        respond({{"ok", false}, {"error", "unknown request '" + cmd.substr(0, 32) + "'"}});
    } catch (const InputError& e) {
        // "input": the caller's request was wrong (the CLI exits 2), not the operation.
        say(LogLevel::warn, "request '" + cmd + "' from '" + from.name + "' failed: " + e.what());
        respond({{"ok", false}, {"error", e.what()}, {"input", true}});
    } catch (const std::exception& e) {
        say(LogLevel::warn, "request '" + cmd + "' from '" + from.name + "' failed: " + e.what());
        respond({{"ok", false}, {"error", e.what()}});
    }
}

/// A host's own send and receive overheads: what a round trip between two hosts cannot
/// separate from the link. From the emulation profile when there is one, else zero.
std::pair<Overhead, Overhead> Service::Impl::overheads() const {
    if (profile) {
        if (auto id = profile->find(cfg.name)) return {profile->send_overheads()[*id], profile->recv_overheads()[*id]};
    }
    return {};
}

json Service::Impl::list_jobs(bool everywhere) {
    json rows = json::array();
    const auto add = [&rows](const std::string& member, const json& jobs) {
        for (json j : jobs) {
            j["member"] = member;
            rows.push_back(std::move(j));
        }
    };
    json mine = json::array();
    for (const JobInfo& i : peer->jobs()) {
        mine.push_back({{"job", std::to_string(i.job)}, {"role", i.role}, {"coordinator", i.coordinator},
                        {"algorithm", i.algorithm}, {"seconds", i.seconds}, {"bytes", i.bytes}, {"owed", i.owed},
                        {"state", i.state}});
    }
    if (!everywhere) return {{"ok", true}, {"jobs", mine}};
    add(cfg.name, mine);
    json unreachable = json::array();
    for (const auto& m : current_members()) {
        if (m.name == cfg.name) continue;
        try {
            add(m.name, get_or<json>(peer->call(m.name, {{"cmd", "jobs"}}, cfg.down_after), "jobs", json::array()));
        } catch (const std::exception& e) {
            unreachable.push_back({{"member", m.name}, {"error", e.what()}});
        }
    }
    return {{"ok", true}, {"jobs", rows}, {"unreachable", unreachable}};
}

json Service::Impl::cancel(const json& req, bool from_operator) {
    const std::string text = get_or<std::string>(req, "job", "");
    std::uint64_t id = 0;
    try {
        std::size_t used = 0;
        id = std::stoull(text, &used);
        if (used != text.size()) throw InputError("");
    } catch (const std::exception&) {
        throw InputError("cancel: '" + text.substr(0, 40) + "' is not a job id (see 'hetcast jobs')");
    }
    const std::string why = "cancelled by the operator";
    if (peer->cancel(id, why)) return {{"ok", true}, {"member", cfg.name}};
    if (from_operator && get_or<bool>(req, "all", false)) {
        // The job's coordinator may be another member.
        for (const auto& m : current_members()) {
            if (m.name == cfg.name) continue;
            try {
                const json a = peer->call(m.name, req, cfg.down_after);
                if (get_or<bool>(a, "ok", false)) return {{"ok", true}, {"member", m.name}};
            } catch (const std::exception&) {
            }
        }
    }
    return {{"ok", false}, {"unknown", true}, {"error", "no job " + text + " is coordinated here" + std::string(get_or<bool>(req, "all", false) ? " or on any member that answers" : "")}};
}

json Service::Impl::hello() const {
    const auto [send, recv] = overheads();
    return {{"ok", true},
            {"name", cfg.name},
            {"version", version()},
            {"piece", cfg.piece},  // what an upload is cut into (0: by size)
            {"send_overhead", {send.fixed, send.per_byte}},
            {"recv_overhead", {recv.fixed, recv.per_byte}}};
}

json Service::Impl::status(bool hellos) {
    json ms = json::array();
    const auto members = current_members();
    // Every other member is asked at once, with one deadline for all.
    std::vector<std::string> others;
    for (const auto& m : members) {
        if (m.name != cfg.name) others.push_back(m.name);
    }
    const auto answers = hellos ? peer->call_all(others, {{"cmd", "hello"}}, cfg.down_after) : Peer::Answers{};
    std::size_t next = 0;
    for (const auto& m : members) {
        json row{{"name", m.name}, {"host", m.host}, {"port", m.port}};
        if (m.name == cfg.name && hellos) {
            row["up"] = true;
            row["version"] = version();
        } else if (hellos) {
            const json& a = answers.responses[next];
            const std::string& error = answers.errors[next++];
            row["up"] = error.empty();
            if (error.empty()) {
                row["version"] = a.is_object() ? get_or<std::string>(a, "version", "?") : "?";
            } else {
                row["error"] = error;
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

json Service::Impl::map_answer() const {
    const auto m = current_map();
    if (!m) return {{"ok", false}, {"error", "no map yet: run 'hetcast probe'"}};
    std::ifstream in(map_file());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return {{"ok", true}, {"map", text}};
}

json Service::Impl::set_map(const std::string& text) {
    Network net = parse_network(text, "map from a peer");
    fs::create_directories(map_file().parent_path());
    write_file_atomically(map_file(), text);
    std::lock_guard lock(mu);
    map = std::move(net);
    map_time = fs::last_write_time(map_file());
    return {{"ok", true}};
}

Service::Service(DaemonConfig config, LogFn log)
    : impl_(std::make_unique<Impl>()) {
    Impl& d = *impl_;
    d.cfg = std::move(config);
    d.log = std::move(log);
    PeerConfig pc;
    pc.name = d.cfg.name;
    pc.host = d.cfg.host;
    pc.port = d.cfg.port;
    pc.identity = read_identity(d.cfg.identity_file);
    pc.dest_root = d.cfg.dest_root;
    pc.spool = d.cfg.state_dir / "spool";
    pc.chunk = d.cfg.chunk;
    pc.max_message = d.cfg.max_message;
    pc.stall_timeout = d.cfg.stall_timeout;
    pc.max_jobs = d.cfg.max_jobs;
    pc.umask = d.cfg.umask;
    pc.log = d.log;
    pc.serve_roots = d.cfg.serve_roots;
    pc.accept_buffers = false;
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
    // Only reads so far (a bad identity or file is reported as such); from here on files are
    // created and removed: a second daemon on the same state would remove the first one's
    // files in flight (remove_leftovers below).
    d.state_lock = std::make_unique<StateDirLock>(d.cfg.state_dir);
    d.history = std::make_unique<JobHistory>(d.cfg.state_dir / "history.json", d.cfg.history, d.log);
    fs::create_directories(d.cfg.dest_root);
    fs::create_directories(pc.spool);
    if (const auto [parts, spooled] = remove_leftovers(d.cfg.dest_root, pc.spool, [&d](const std::string& l) { d.say(LogLevel::warn, l); });
        parts + spooled > 0) {
        d.say(LogLevel::info, "removed " + std::to_string(parts) + " stale temporary file" + (parts == 1 ? "" : "s") + " under " +
              d.cfg.dest_root.string() + " and " + std::to_string(spooled) + " spool entr" +
              (spooled == 1 ? "y" : "ies") + " from an earlier run");
    }
    d.peer = std::make_unique<Peer>(std::move(pc));
    // A daemon keeps files: a plan that makes it a buffer's destination is refused at
    // set-up (accept_buffers). Should one get through, a queue nobody reads must not grow.
    d.peer->on_delivery([&d](Delivery x) {
        d.say(LogLevel::warn, "dropped a buffer of " + std::to_string(x.bytes ? x.bytes->size() : 0) + " bytes from '" + x.source +
              "' (a daemon keeps files only)");
    });
    d.peer->set_members(d.members);
    if (fs::exists(d.revoked_file())) d.peer->revoke(load_revoked(d.revoked_file()));
    d.peer->on_request([&d](const net::PeerIdentity& from, const json& req, Peer::Responder respond) {
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
    impl_->say(LogLevel::info, "listening on " + impl_->cfg.host + ":" + std::to_string(impl_->peer->port()) + " as '" +
               impl_->cfg.name + "'" + (impl_->map ? "" : " (no map yet)"));
}

void Service::stop() { impl_->peer->stop(); }

std::uint16_t Service::port() const { return impl_->peer->port(); }

}  // namespace hetcast
