#pragma once
// What every part of the daemon shares (service_impl.hpp assembles them): its config, the
// peer, the member list and the map, and small helpers. Each part holds a reference to the
// one ServiceCore of its Service::Impl, which outlives them all. Not installed: nothing
// outside lib/src/runtime/service includes it.
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

/// What the files of service/ share; each has `using namespace detail`.
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

namespace detail {

/// The daemon's state every part reads: config, peer, member list, map (guarded by `mu`).
/// Its own methods, the short answers about itself and its map, are in service.cpp.
struct ServiceCore {
    /// Declared first, so it is released after everything else is gone.
    std::unique_ptr<StateDirLock> state_lock;
    DaemonConfig cfg;
    LogFn log;
    std::unique_ptr<Peer> peer;
    std::vector<Member> members;
    std::optional<Network> profile;  ///< link emulation, when configured
    mutable std::mutex mu;
    std::optional<Network> map;
    std::filesystem::file_time_type map_time{};

    std::filesystem::path map_file() const { return cfg.state_dir / "map.yaml"; }
    /// The member list as joins and leaves left it; newer than the configured cluster file.
    std::filesystem::path members_file() const { return cfg.state_dir / "members.yaml"; }
    std::filesystem::path revoked_file() const { return cfg.state_dir / "revoked.yaml"; }

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

    std::pair<Overhead, Overhead> overheads() const;
    /// With `nic`, also how this member's NIC queues what it sends ("nic_queue").
    nlohmann::json hello(bool nic = false) const;
    nlohmann::json map_answer() const;
    nlohmann::json set_map(const std::string& text);
};

}  // namespace detail
}  // namespace hetcast
