#pragma once
/// Daemon configuration and cluster files (YAML; examples in conf/).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hetcast/files.hpp"
#include "hetcast/log.hpp"
#include "hetcast/net/identity.hpp"
#include "hetcast/runtime/nodeset.hpp"
#include "hetcast/runtime/wire.hpp"

namespace hetcast {

struct DaemonConfig {
    std::string name;                       ///< this member's name (required)
    std::string host = "127.0.0.1";         ///< listen address
    std::uint16_t port = 7700;              ///< listen port (0: ephemeral, for tests)
    std::filesystem::path state_dir;        ///< map.yaml and logs (required)
    std::filesystem::path dest_root;        ///< received files land under it (required)
    std::filesystem::path identity_file;    ///< key, certificate, cluster CA (required; mode 0600)
    std::optional<std::filesystem::path> cluster_file;  ///< members and addresses (conf/cluster.yaml)
    std::vector<std::string> seeds;         ///< HOST:PORT of members to join through
    /// Folders whose files this daemon reads for a push (its own, or a pattern's file:
    /// entries); none by default: it serves no file until its operator lists folders.
    std::vector<std::filesystem::path> serve_roots;
    std::uint64_t max_message = std::uint64_t{64} << 30;  ///< largest file or buffer accepted
    /// Jobs this daemon takes part in at once. A push to every member takes part on each, so
    /// this is also how many such pushes run at once: with 4, eight hosts pushing at once ran
    /// in waves that members admitted in different orders (3 of 8 in the first, all from one
    /// subnet, the other uplink idle); with 8 they run together, planned beside each other.
    std::size_t max_jobs = 8;
    /// An authenticated connection on which nothing passes either way for this long, and
    /// that carries no job or request in progress, is closed.
    std::chrono::milliseconds idle_timeout{300000};
    /// Connections one peer (by its certificate's name) may have open to this daemon.
    std::size_t connections_per_peer = 64;
    /// The TCP congestion control of the daemon's sockets (`bbr`, `cubic`); empty: the
    /// system's default. How concurrent flows split a FIFO switch port or uplink depends on it.
    std::string tcp_congestion;
    /// Requests of one peer waiting or running here at once; more are refused ("busy").
    std::size_t requests_per_peer = 64;
    /// Participants a push's coordinator (and each relay) sends plans to and hears from
    /// directly; a push to more goes down a tree (docs/protocol.md, "The control tree").
    std::size_t control_fanout = 16;
    unsigned umask = 022;                   ///< cleared from the source's permission bits on landing
    std::size_t chunk = std::size_t{1} << 20;             ///< bytes per data frame
    std::uint64_t piece = 0;  ///< bytes per piece of cut-through pushes it coordinates; 0: by size (2 MiB up)
    double tolerance = 0.20;                ///< ECO partition tolerance for probes
    std::chrono::milliseconds stall_timeout{10000};
    /// A member that does not answer a hello within this is down: status shows it down and
    /// a push to --all skips it.
    std::chrono::milliseconds down_after{2000};
    /// A push this daemon coordinates is cancelled after this long (0: never, the default;
    /// `push --timeout` sets one per push).
    std::chrono::milliseconds job_timeout{0};
    /// While a request runs (a push, a probe), the caller gets a keep-alive this often, so
    /// that it tells a daemon that is gone from one that is busy with a quiet push.
    std::chrono::milliseconds heartbeat{5000};
    /// Reports of the pushes this daemon coordinated kept in state_dir/history.json (0: none).
    std::size_t history = 100;
    std::optional<std::filesystem::path> link_profile;   ///< emulation profile (network file)
    LogLevel log_level = LogLevel::info;    ///< the least a line must matter to be logged
    /// HOST:PORT of the Prometheus text endpoint (GET /metrics); off when absent.
    std::optional<std::pair<std::string, std::uint16_t>> metrics;
};

/// Parses a daemon config. Relative paths are taken relative to `base_dir` (the config
/// file's folder). Throws InputError("origin:line:column: what") for a bad document, an
/// unknown key, a missing required key or a bad value.
[[nodiscard]] DaemonConfig parse_daemon_config(std::string_view yaml, std::string_view origin,
                                               const std::filesystem::path& base_dir);
[[nodiscard]] DaemonConfig load_daemon_config(const std::filesystem::path& file);

/// Reads an identity file (net/identity.hpp). Throws InputError when it is missing, open to
/// anyone but its owner ("... chmod 600 ..."), or not a key with a certificate the CA in
/// it issued.
[[nodiscard]] net::Identity read_identity(const std::filesystem::path& file);

/// A cluster file: `members: [{name: a, host: 127.0.0.1, port: 7701}, ...]` and, optional,
/// `groups: {lab-b: "ws[01-20]", labs: "@lab-a,@lab-b"}` (node sets, hetcast/runtime/nodeset.hpp).
struct ClusterFile {
    std::vector<Member> members;
    NodeGroups groups;
};
/// Throws InputError with line and column for duplicates, a bad port, a missing key, a bad
/// group name or node set, a group that refers to itself or to a group the file does not
/// define (`@subnet:N` and `@*`, the map's, are taken as they come).
[[nodiscard]] ClusterFile parse_cluster_file(std::string_view yaml, std::string_view origin);
[[nodiscard]] ClusterFile load_cluster_file(const std::filesystem::path& file);
/// The members of a cluster file.
[[nodiscard]] std::vector<Member> parse_cluster(std::string_view yaml, std::string_view origin);
[[nodiscard]] std::vector<Member> load_cluster(const std::filesystem::path& file);
/// A daemon's revocation list, `revoked: [{name: n3, since: 1764064800, order: "{...}"}, ...]`
/// (state_dir/revoked.yaml; `order`: the operator's signed leave). Throws InputError with
/// line and column.
[[nodiscard]] std::vector<net::Revocation> parse_revoked(std::string_view yaml, std::string_view origin);
[[nodiscard]] std::vector<net::Revocation> load_revoked(const std::filesystem::path& file);
void save_revoked(const std::filesystem::path& file, const std::vector<net::Revocation>& revoked);
/// Writes `members` in the same form, atomically (temporary file, then rename).
void save_cluster(const std::filesystem::path& file, const std::vector<Member>& members);

}  // namespace hetcast
