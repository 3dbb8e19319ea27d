// The daemon's life (construction, start, stop, what SIGHUP re-reads) and its short answers
// (hello, status, jobs, cancel, the map). The request table and who may make each request
// are in requests.cpp; the parts (service_impl.hpp) are the member list in
// service_members.cpp, measuring in service_probe.cpp, pushing in service_push.cpp, metrics
// in service_metrics.cpp; service_core.hpp holds what they share.
#include "hetcast/runtime/service.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <string_view>

#include "hetcast/error.hpp"
#include "hetcast/map/eco.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/runtime/nic_queue.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/version.hpp"
#include "requests.hpp"
#include "service_impl.hpp"
#include "service_push_request.hpp"

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

/// A host's own send and receive overheads: what a round trip between two hosts cannot
/// separate from the link. From the emulation profile when there is one, else zero.
std::pair<Overhead, Overhead> ServiceCore::overheads() const {
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
    for (const JobInfo& i : core.peer->jobs()) {
        mine.push_back({{"job", std::to_string(i.job)}, {"role", i.role}, {"coordinator", i.coordinator},
                        {"algorithm", i.algorithm}, {"seconds", i.seconds}, {"bytes", i.bytes}, {"owed", i.owed},
                        {"state", i.state}});
    }
    if (!everywhere) return {{"ok", true}, {"jobs", mine}};
    add(core.cfg.name, mine);
    json unreachable = json::array();
    for (const auto& m : core.current_members()) {
        if (m.name == core.cfg.name) continue;
        try {
            add(m.name, field<json>(core.peer->call(m.name, {{"cmd", "jobs"}}, core.cfg.down_after), "jobs", json::array()));
        } catch (const std::exception& e) {
            unreachable.push_back({{"member", m.name}, {"error", e.what()}});
        }
    }
    return {{"ok", true}, {"jobs", rows}, {"unreachable", unreachable}};
}

json Service::Impl::cancel(const json& req, bool from_operator) {
    const std::string text = field<std::string>(req, "job", "");
    std::uint64_t id = 0;
    try {
        std::size_t used = 0;
        id = std::stoull(text, &used);
        if (used != text.size()) throw InputError("");
    } catch (const std::exception&) {
        throw InputError("cancel: '" + text.substr(0, 40) + "' is not a job id (see 'hetcast jobs')");
    }
    const std::string why = "cancelled by the operator";
    if (core.peer->cancel(id, why)) return {{"ok", true}, {"member", core.cfg.name}};
    if (from_operator && field<bool>(req, "all", false)) {
        // The job's coordinator may be another member.
        for (const auto& m : core.current_members()) {
            if (m.name == core.cfg.name) continue;
            try {
                const json a = core.peer->call(m.name, req, core.cfg.down_after);
                if (field<bool>(a, "ok", false)) return {{"ok", true}, {"member", m.name}};
            } catch (const std::exception&) {
            }
        }
    }
    return {{"ok", false}, {"unknown", true}, {"error", "no job " + text + " is coordinated here" + std::string(field<bool>(req, "all", false) ? " or on any member that answers" : "")}};
}

json ServiceCore::hello(bool nic) const {
    const auto [send, recv] = overheads();
    json h{{"ok", true},
           {"name", cfg.name},
           {"version", version()},
           {"piece", cfg.piece},  // what an upload is cut into (0: by size)
           {"send_overhead", {send.fixed, send.per_byte}},
           {"recv_overhead", {recv.fixed, recv.per_byte}},
           {"expires", net::describe(peer->identity()).expires}};
    if (nic) {
        for (const auto& m : current_members()) {
            if (m.name == cfg.name) h["nic_queue"] = to_text(nic_queue_of(m.host));
        }
    }
    return h;
}

json Service::Impl::status(bool hellos) {
    json ms = json::array();
    const auto members = core.current_members();
    // Every other member is asked at once, with one deadline for all.
    std::vector<std::string> others;
    for (const auto& m : members) {
        if (m.name != core.cfg.name) others.push_back(m.name);
    }
    const auto answers = hellos ? core.peer->hello_all(others, core.cfg.down_after) : Peer::Answers{};
    std::size_t next = 0;
    for (const auto& m : members) {
        json row{{"name", m.name}, {"host", m.host}, {"port", m.port}};
        if (m.name == core.cfg.name && hellos) {
            row["up"] = true;
            row["version"] = version();
            row["expires"] = net::describe(core.peer->identity()).expires;
        } else if (hellos) {
            const json& a = answers.responses[next];
            const std::string& error = answers.errors[next++];
            row["up"] = error.empty();
            if (error.empty()) {
                row["version"] = a.is_object() ? field<std::string>(a, "version", "?") : "?";
                if (a.is_object() && a.contains("expires") && a["expires"].is_number_integer()) row["expires"] = a["expires"];
            } else {
                row["error"] = error;
            }
        }
        ms.push_back(std::move(row));
    }
    json out{{"ok", true}, {"name", core.cfg.name}, {"version", version()}, {"members", ms}, {"map_age", nullptr}};
    std::lock_guard lock(core.mu);
    json unmapped = json::array();
    if (core.map) {
        out["map_age"] = std::chrono::duration<double>(fs::file_time_type::clock::now() - core.map_time).count();
        for (const auto& m : members) {
            if (!core.map->find(m.name)) unmapped.push_back(m.name);
        }
    }
    out["unmapped"] = unmapped;
    return out;
}

json ServiceCore::map_answer() const {
    const auto m = current_map();
    if (!m) return {{"ok", false}, {"error", "no map yet: run 'hetcast probe'"}};
    std::ifstream in(map_file());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return {{"ok", true}, {"map", text}};
}

json ServiceCore::set_map(const std::string& text) {
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
    d.core.cfg = std::move(config);
    d.core.log = std::move(log);
    PeerConfig pc;
    pc.name = d.core.cfg.name;
    pc.host = d.core.cfg.host;
    pc.port = d.core.cfg.port;
    pc.identity = read_identity(d.core.cfg.identity_file);
    {
        // An expired identity is refused by every member: say so at start, and warn a month ahead.
        const net::PeerIdentity me = net::describe(pc.identity);
        const auto now = static_cast<std::int64_t>(std::time(nullptr));
        const std::string renew = "the operator issues a new one: hetcast keys issue " + me.name + " --force";
        if (me.expires <= now) throw InputError(d.core.cfg.identity_file.string() + ": its certificate has expired (" + renew + ")");
        if (me.expires - now < 30 * 86400) {
            d.core.say(LogLevel::warn, d.core.cfg.identity_file.string() + ": its certificate expires in " +
                                      std::to_string((me.expires - now) / 86400) + " days (" + renew + ")");
        }
    }
    pc.dest_root = d.core.cfg.dest_root;
    pc.spool = d.core.cfg.state_dir / "spool";
    pc.chunk = d.core.cfg.chunk;
    pc.max_message = d.core.cfg.max_message;
    pc.stall_timeout = d.core.cfg.stall_timeout;
    pc.max_jobs = d.core.cfg.max_jobs;
    pc.control_fanout = d.core.cfg.control_fanout;
    pc.idle_timeout = d.core.cfg.idle_timeout;
    pc.connections_per_peer = d.core.cfg.connections_per_peer;
    pc.tcp_congestion = d.core.cfg.tcp_congestion;
    pc.requests_per_peer = d.core.cfg.requests_per_peer;
    pc.umask = d.core.cfg.umask;
    pc.log = d.core.log;
    pc.serve_roots = d.core.cfg.serve_roots;
    pc.accept_buffers = false;
    // Never without: a daemon takes jobs only under an operator's order.
    pc.order_scope = [&d](const json& order) { return order_scope(order, d.core.current_map()); };
    if (d.core.cfg.link_profile) {
        d.core.profile = load_network(*d.core.cfg.link_profile);
        pc.link_profile = d.core.profile;
        // The members of one cluster file emulate one network: they share its NICs and uplinks.
        if (d.core.cfg.cluster_file) {
            pc.link_state = d.core.cfg.cluster_file->parent_path() /
                            ("." + d.core.cfg.link_profile->stem().string() + ".link-state");
        }
    }
    if (fs::exists(d.core.map_file())) {
        d.core.map = load_network(d.core.map_file());
        d.core.map_time = fs::last_write_time(d.core.map_file());
    }
    // Only reads so far (a bad identity or file is reported as such); from here on files are
    // created and removed: a second daemon on the same state would remove the first one's
    // files in flight (remove_leftovers below).
    d.core.state_lock = std::make_unique<StateDirLock>(d.core.cfg.state_dir);
    d.push_log.set_history(std::make_unique<JobHistory>(d.core.cfg.state_dir / "history.json", d.core.cfg.history, d.core.log));
    d.core.members = d.member_list.read_member_list();
    fs::create_directories(d.core.cfg.dest_root);
    fs::create_directories(pc.spool);
    if (const auto [parts, spooled] = remove_leftovers(d.core.cfg.dest_root, pc.spool, [&d](const std::string& l) { d.core.say(LogLevel::warn, l); });
        parts + spooled > 0) {
        d.core.say(LogLevel::info, "removed " + std::to_string(parts) + " stale temporary file" + (parts == 1 ? "" : "s") + " under " +
              d.core.cfg.dest_root.string() + " and " + std::to_string(spooled) + " spool entr" +
              (spooled == 1 ? "y" : "ies") + " from an earlier run");
    }
    d.core.peer = std::make_unique<Peer>(std::move(pc));
    // A daemon keeps files: a plan that makes it a buffer's destination is refused at
    // set-up (accept_buffers). Should one get through, a queue nobody reads must not grow.
    d.core.peer->on_delivery([&d](Delivery x) {
        d.core.say(LogLevel::warn, "dropped a buffer of " + std::to_string(x.bytes ? x.bytes->size() : 0) + " bytes from '" + x.source +
              "' (a daemon keeps files only)");
    });
    d.core.peer->set_members(d.core.members);
    if (fs::exists(d.core.revoked_file())) d.core.peer->revoke(load_revoked(d.core.revoked_file()));
    d.core.peer->on_request([&d](const net::PeerIdentity& from, const json& req, Peer::Responder respond) {
        Requests::dispatch(d, from, req, respond);
    });
}

Service::~Service() { stop(); }

void Service::start() {
    try {
        impl_->core.peer->start();
    } catch (const std::exception& e) {
        const std::string what = e.what();
        const std::string where = impl_->core.cfg.host + ':' + std::to_string(impl_->core.cfg.port);
        if (what.find(where) != std::string::npos) throw;
        if (what.rfind("TCP congestion control", 0) == 0) throw InputError("tcp_congestion: " + what.substr(23));
        throw Error("cannot listen on " + where + ": " + what);
    }
    impl_->metrics.start_metrics();
    impl_->member_list.start_joining();
    impl_->core.say(LogLevel::info, "listening on " + impl_->core.cfg.host + ":" + std::to_string(impl_->core.peer->port()) + " as '" +
               impl_->core.cfg.name + "'" + (impl_->core.map ? "" : " (no map yet)") +
               (impl_->core.cfg.tcp_congestion.empty() ? "" : ", TCP congestion control " + impl_->core.cfg.tcp_congestion));
}

void Service::stop() {
    impl_->member_list.stop_joining();
    impl_->metrics.stop();
    impl_->core.peer->stop();  // a join in flight fails at once
    impl_->member_list.join_seeder();
}

std::uint16_t Service::port() const { return impl_->core.peer->port(); }

std::vector<std::string> Service::reload(const DaemonConfig& next) {
    Impl& d = *impl_;
    std::vector<std::string> lines;
    const auto same = [](const std::vector<Member>& a, const std::vector<Member>& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Member& x, const Member& y) {
            return x.name == y.name && x.host == y.host && x.port == y.port;
        });
    };
    const std::vector<Member> now = d.core.current_members();
    const std::vector<Member> read = d.member_list.read_member_list();
    if (!same(now, read)) {
        const MemberListChoice c = choose_member_list(read, now, true);
        std::string line = "member list: " + std::to_string(now.size()) + " -> " + std::to_string(read.size()) + " members";
        for (const auto& [what, names] : {std::pair{"added", c.added}, std::pair{"removed", c.removed},
                                          std::pair{"new address for", c.moved}}) {
            if (names.empty()) continue;
            line += std::string("; ") + what;
            for (const auto& n : names) line += " '" + n + "'";
        }
        d.member_list.set_members(read);
        lines.push_back(line);
    }
    // The rest is read once, at start: threads in flight hold on to it. So is the identity
    // file: new contents under the same name (a renewal, a CA rotation) take a restart too.
    const DaemonConfig& was = d.core.cfg;
    bool reissued = false;
    try {
        const net::Identity file = read_identity(next.identity_file);
        reissued = file.cert_pem != d.core.peer->identity().cert_pem || file.ca_pem != d.core.peer->identity().ca_pem;
    } catch (const std::exception& e) {
        lines.push_back(std::string("identity: ") + e.what() + " (the running one stays)");
    }
    const std::pair<const char*, bool> fixed[] = {
        {"name", next.name != was.name},
        {"listen", next.host != was.host || (next.port != was.port && was.port != 0)},
        {"state_dir", next.state_dir != was.state_dir},
        {"dest_root", next.dest_root != was.dest_root},
        {"identity", next.identity_file != was.identity_file || reissued},
        {"cluster", next.cluster_file != was.cluster_file},
        {"seeds", next.seeds != was.seeds},
        {"serve_roots", next.serve_roots != was.serve_roots},
        {"limits", next.max_message != was.max_message || next.max_jobs != was.max_jobs},
        {"umask", next.umask != was.umask},
        {"chunk", next.chunk != was.chunk},
        {"piece", next.piece != was.piece},
        {"tolerance", next.tolerance != was.tolerance},
        {"stall_timeout", next.stall_timeout != was.stall_timeout},
        {"down_after", next.down_after != was.down_after},
        {"link_profile", next.link_profile != was.link_profile},
        {"metrics", next.metrics != was.metrics},
    };
    for (const auto& [key, changed] : fixed) {
        if (changed) lines.push_back(std::string(key) + " changed: it takes a restart (systemctl restart hetcastd)");
    }
    return lines;
}

}  // namespace hetcast
