#pragma once
/// How a `hetcast` command finds and reaches a daemon: the local daemon's config file (its
/// address), the cluster file for `--from NODE`, and the operator's identity, found the
/// way ssh finds its keys (identity_path()).
#include <string>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <nlohmann/json.hpp>

#include "hetcast/runtime/client.hpp"
#include "hetcast/runtime/config.hpp"

namespace hetcast::cli {

struct DaemonOptions {
    std::string config;  ///< default: $HETCAST_CONFIG, else /etc/hetcast/hetcastd.yaml
    std::string from;    ///< a member name: talk to that daemon instead of the local one
    std::string identity;  ///< --identity; see identity_path()
};

/// Adds --config, --from and --identity to `opts`.
void add_daemon_options(boost::program_options::options_description& opts, DaemonOptions& d);

/// The config in use (InputError with the file and line when it is bad).
[[nodiscard]] DaemonConfig load_config(const DaemonOptions& d);

/// The groups of the cluster file the config names (none without one): `@NAME` in node sets.
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

/// Connects to the local daemon, or to `--from`. Throws hetcast::Error naming the address.
[[nodiscard]] std::unique_ptr<Client> connect_daemon(const DaemonOptions& d);

}  // namespace hetcast::cli
