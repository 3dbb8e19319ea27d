#pragma once
// Service's insides, shared by the files of lib/src/runtime/service/: service.cpp (the
// daemon's life), requests.cpp (the request table), service_members.cpp,
// service_probe.cpp, service_push.cpp and the others. Not installed: nothing outside
// lib/src/runtime/service includes it.
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <thread>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/map/probe.hpp"
#include "hetcast/model/network.hpp"
#include "hetcast/net/text_endpoint.hpp"
#include "hetcast/runtime/cluster_probe.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/runtime/history.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/report.hpp"
#include "hetcast/runtime/service.hpp"
#include "../wire/json_field.hpp"

namespace hetcast {

/// What service.cpp, service_probe.cpp and service_push.cpp share; each has `using namespace detail`.
namespace detail {

using json = nlohmann::json;

inline constexpr auto call_timeout = std::chrono::seconds(10);

inline std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

/// While it lives, sends the caller {"progress": {"heartbeat": SECONDS}} every `every`
/// (and to the callers `more` lists then), so that a client tells a daemon that is gone
/// from one whose push is quiet (hetcast/runtime/client.hpp).
class Heartbeat {
public:
    Heartbeat(Peer::Responder respond, std::chrono::milliseconds every,
              std::function<std::vector<Peer::Responder>()> more = {});
    ~Heartbeat();
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

}  // namespace detail

/// An exclusive lock on a state directory (flock on STATE_DIR/lock, holding the pid),
/// kept while this lives: two daemons sharing one would delete each other's files.
class StateDirLock {
public:
    /// Throws hetcast::Error when another process holds it, naming the directory and pid.
    explicit StateDirLock(const std::filesystem::path& dir);
    ~StateDirLock();
    StateDirLock(const StateDirLock&) = delete;
    StateDirLock& operator=(const StateDirLock&) = delete;

private:
    int fd_ = -1;
};

struct Service::Impl {
    /// Declared first, so it is released after everything else is gone.
    std::unique_ptr<StateDirLock> state_lock;
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
    LogFn log;
    std::unique_ptr<Peer> peer;
    std::vector<Member> members;
    std::optional<Network> profile;  ///< link emulation, when configured
    mutable std::mutex mu;
    std::optional<Network> map;
    std::filesystem::file_time_type map_time{};
    std::atomic<std::size_t> running{0};
    std::unique_ptr<JobHistory> history;
    /// Callers re-attached to a push this daemon coordinates (`hetcast wait`), by job;
    /// each gets the push's progress and its final answer. Under watch_mu.
    std::mutex watch_mu;
    std::map<std::uint64_t, std::vector<Peer::Responder>> watchers;

    std::filesystem::path map_file() const { return cfg.state_dir / "map.yaml"; }
    /// The member list as joins and leaves left it; newer than the configured cluster file.
    std::filesystem::path members_file() const { return cfg.state_dir / "members.yaml"; }

    std::vector<Member> current_members() const {
        std::lock_guard lock(mu);
        return members;
    }

    std::uint16_t port() const { return peer->port(); }

    void say(LogLevel level, const std::string& line) const {
        if (log) log(level, line);
    }

    std::optional<Network> current_map() const {
        std::lock_guard lock(mu);
        return map;
    }

    // service.cpp and service_members.cpp: the member list, short answers, the stored map
    /// The cluster file's member list or members.yaml's, whichever is newer; a difference is logged.
    std::vector<Member> read_member_list();
    void set_members(std::vector<Member> ms);
    /// `order`: the operator's (or a joiner's own) signed request that changed them, which
    /// every member checks before it applies them.
    std::vector<std::string> distribute(const std::vector<Member>& ms, const std::string* map_text,
                                        const nlohmann::json& order);
    Network remap(const Network& old, const std::vector<std::string>& names, double tolerance,
                  const std::function<std::pair<double, double>(std::size_t, std::size_t)>& fill,
                  const std::vector<std::pair<Overhead, Overhead>>& new_overheads) const;
    nlohmann::json join(const nlohmann::json& req);
    nlohmann::json leave(const nlohmann::json& req);
    /// An operator's leave order for another operator (`operator: true`): its identity is
    /// revoked here and, with the member list, on every member.
    nlohmann::json revoke_operator(const nlohmann::json& req, const std::string& by);
    /// Empty when joined through a seed, else why the last one failed.
    std::string join_through_seeds();
    /// Runs on `seeder`: join_through_seeds until it works or the service stops, backing off.
    void keep_joining();
    std::thread seeder;
    std::mutex seed_mu;
    std::condition_variable seed_cv;
    bool seed_stop = false;
    /// A member that sent a member list naming this daemon (an operator joined it there):
    /// its seeds need not be asked. Under seed_mu.
    std::string listed_by;
    /// Adds revocations (a leave here or told by another member) and keeps them. Each new
    /// one must come from an operator's leave order (check_revocation); one that does not
    /// is logged and left out.
    void add_revocations(const std::vector<net::Revocation>& revoked);
    std::filesystem::path revoked_file() const { return cfg.state_dir / "revoked.yaml"; }
    std::pair<Overhead, Overhead> overheads() const;
    nlohmann::json hello() const;
    /// The members (name, host, port) and, unless `hellos` is false, whether each answers.
    nlohmann::json status(bool hellos = true);
    /// The jobs this daemon takes part in; `everywhere`: every member's, each row naming it.
    nlohmann::json list_jobs(bool everywhere);
    /// {"job": ID, "all": bool}: cancels a job this daemon (or, with all, any member) coordinates.
    nlohmann::json cancel(const nlohmann::json& req, bool from_operator);
    nlohmann::json map_answer() const;
    nlohmann::json set_map(const std::string& text);

    // service_probe.cpp: measuring the cluster
    ProbeLink probe_link();
    nlohmann::json probe(const nlohmann::json& req, const Peer::Responder& respond);
    nlohmann::json probe_refresh(const nlohmann::json& req, const std::vector<std::string>& refresh);
    std::vector<std::string> store_map(const std::vector<Member>& members, const std::string& text,
                                       const nlohmann::json& req);
    /// Of `all`, the members that answer a hello (this one always), and the others with why.
    std::pair<std::vector<Member>, std::vector<std::pair<std::string, std::string>>> answering_members(
        const std::vector<Member>& all);

    // service_metrics.cpp: the Prometheus endpoint
    std::atomic<std::uint64_t> pushes_ok{0}, pushes_failed{0}, pushes_cancelled{0}, pushes_refused{0};
    /// Counts a push's final answer (or, without reports, a refusal) by its outcome.
    void count_push(const nlohmann::json& answer);
    std::string metrics_text() const;
    /// Starts the endpoint when `metrics:` is set. Throws hetcast::Error when it cannot bind.
    void start_metrics();
    std::unique_ptr<net::TextEndpoint> metrics;

    // service_push.cpp: pushes
    /// `label` names what moves in the progress frames (a file; a bundle: the file in flight).
    JobReport run_job(JobSpec spec, const Peer::Responder& respond, const std::string& label, bool members);
    /// The callers watching job `job` (re-attached), besides the one that pushed it.
    std::vector<Peer::Responder> watching(std::uint64_t job);
    nlohmann::json push_pattern(const nlohmann::json& req, const Network& net, const Peer::Responder& respond,
                                const std::string& who);
    /// What a push order lets a job do, read on this member's map as the push would read
    /// it: what every job plan this member takes must stay inside (PeerConfig::order_scope).
    OrderScope order_scope(const nlohmann::json& order) const;
    /// `who`: the operator whose identity asked (the audit line and history name it).
    nlohmann::json push(const nlohmann::json& req, const Peer::Responder& respond, const std::string& who);
    /// Ends a push that got a job id: its audit line, its history entry, the answer to the
    /// callers re-attached to it.
    void finish_push(const JobReport& r, const nlohmann::json& answer, const std::string& who, const std::string& what,
                     const std::string& started);
    /// {"job": ID}: the push's final answer once it ends (responded later when it runs),
    /// from the history when it ended. Unknown here: with "all", the member that knows it
    /// ({"ok": false, "coordinator": NAME}); "peek": whether it is known here, at once.
    void wait(const nlohmann::json& req, const Peer::Responder& respond, bool from_operator);
    /// The pushes this daemon coordinated (`everywhere`: every member's), oldest first, each
    /// naming its member; without their answers.
    nlohmann::json history_answer(bool everywhere);
};

}  // namespace hetcast
