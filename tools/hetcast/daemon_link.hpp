#pragma once
/// How a `hetcast` command finds and reaches a daemon: the local daemon's config file (its
/// address), else a cluster file (`--cluster`, $HETCAST_CLUSTER: an operator's machine that
/// runs no daemon), `--from NODE` or `--from HOST:PORT`, and the operator's identity, found
/// the way ssh finds its keys (identity_path()).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <nlohmann/json.hpp>

#include "hetcast/runtime/client.hpp"
#include "hetcast/runtime/config.hpp"

namespace hetcast::cli {

struct DaemonOptions {
    std::string config;  ///< default: $HETCAST_CONFIG, else /etc/hetcast/hetcastd.yaml
    std::string cluster;  ///< --cluster; default $HETCAST_CLUSTER (see local_config())
    std::string from;    ///< a member (node set naming one) or HOST:PORT: talk to that daemon
    std::string identity;  ///< --identity; see identity_path()
};

/// Adds --config, --cluster, --from and --identity to `opts`.
void add_daemon_options(boost::program_options::options_description& opts, DaemonOptions& d);

/// The local daemon's config, when this machine has one: --config (which must be
/// readable), else none with --cluster, else $HETCAST_CONFIG or /etc/hetcast/hetcastd.yaml
/// when that file exists. InputError with the file and line when it is bad.
[[nodiscard]] std::optional<DaemonConfig> local_config(const DaemonOptions& d);

/// The cluster file the commands use without a local config: --cluster, else
/// $HETCAST_CLUSTER; none when neither is given.
[[nodiscard]] std::optional<std::string> cluster_path(const DaemonOptions& d);

/// HOST:PORT (or [IPV6]:PORT) as --from takes it, split; none when `text` is no address.
[[nodiscard]] std::optional<std::pair<std::string, std::uint16_t>> host_port(const std::string& text);

/// The groups of the cluster file in use (the config's, else --cluster's; none without
/// one): `@NAME` in node sets.
[[nodiscard]] NodeGroups cluster_groups(const DaemonOptions& d);

/// The names of `members` that node set `nodes` names less `exclude` (hetcast/runtime/
/// nodeset.hpp): the cluster file's groups, `@*`, and `@subnet:N` of the map `daemon` holds
/// (asked for only when a node set names a subnet). InputError for names not in `members`.
[[nodiscard]] std::vector<std::string> select_nodes(const DaemonOptions& d, Client& daemon,
                                                    const std::vector<std::string>& members, const std::string& nodes,
                                                    const std::string& exclude);

/// Parses `args` into `vm`; true when --help was asked for (and printed).
bool parse_options(const std::vector<std::string>& args, const boost::program_options::options_description& opts,
                   boost::program_options::variables_map& vm);

/// parse_options() for a command that takes one positional argument (a member, a job),
/// stored in `value`; true when --help was asked for (and printed).
bool parse_options_with(const std::vector<std::string>& args, const boost::program_options::options_description& opts,
                        const char* name, std::string& value, boost::program_options::variables_map& vm);

/// "a,b,,c" → {a, b, c}: the comma-separated lists of the command line.
[[nodiscard]] std::vector<std::string> split_commas(const std::string& text);

/// j[key] when it is a string, else `fallback`.
[[nodiscard]] std::string str(const nlohmann::json& j, const char* key, const std::string& fallback = "");

/// The daemon's answer, or hetcast::Error with its error when "ok" is false.
nlohmann::json checked(const nlohmann::json& answer, const std::string& what);

/// The identity file a command proves itself with: --identity, else $HETCAST_IDENTITY,
/// else the first of $XDG_CONFIG_HOME/hetcast/operator.pem (~/.config/...) and
/// /etc/hetcast/operator.pem that exists. InputError saying where it looked when none.
[[nodiscard]] std::string identity_path(const DaemonOptions& d);

/// Connects to `--from` (a member, or HOST:PORT), else to the local daemon, else to the first
/// member of the cluster file that answers. Throws hetcast::Error naming the address, or
/// saying no member answers; InputError when there is neither a config nor a cluster file.
[[nodiscard]] std::unique_ptr<Client> connect_daemon(const DaemonOptions& d);

/// Whether the commands run without a local daemon (through a cluster file or HOST:PORT).
[[nodiscard]] bool without_local_daemon(const DaemonOptions& d);

}  // namespace hetcast::cli
