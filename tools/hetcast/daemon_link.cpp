#include "daemon_link.hpp"

#include <algorithm>
#include <filesystem>
#include <cstdlib>
#include <optional>
#include <unistd.h>
#include <sstream>
#include <boost/program_options/parsers.hpp>
#include <iostream>

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"

namespace po = boost::program_options;

namespace hetcast::cli {

void add_daemon_options(po::options_description& opts, DaemonOptions& d) {
    opts.add_options()("config,c", po::value(&d.config),
                       "the local daemon's config (default: $HETCAST_CONFIG, else /etc/hetcast/hetcastd.yaml)")(
        "cluster", po::value(&d.cluster),
        "a cluster file: talk to its members when this machine runs no daemon (default: $HETCAST_CLUSTER)")(
        "from", po::value(&d.from), "talk to this member's daemon (a name, or HOST:PORT) instead of the local one")(
        "identity,i", po::value(&d.identity),
        "the operator's identity file (default: $HETCAST_IDENTITY, ~/.config/hetcast/operator.pem, "
        "/etc/hetcast/operator.pem)");
}

std::string identity_path(const DaemonOptions& d) {
    if (!d.identity.empty()) return d.identity;
    if (const char* env = std::getenv("HETCAST_IDENTITY"); env && *env) return env;
    std::vector<std::string> tried;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
        tried.push_back(std::string(xdg) + "/hetcast/operator.pem");
    } else if (const char* home = std::getenv("HOME"); home && *home) {
        tried.push_back(std::string(home) + "/.config/hetcast/operator.pem");
    }
    tried.push_back("/etc/hetcast/operator.pem");
    std::string list;
    for (const auto& p : tried) {
        if (::access(p.c_str(), F_OK) == 0) return p;
        list += (list.empty() ? "" : ", ") + p;
    }
    throw InputError("no operator identity: give --identity FILE or set HETCAST_IDENTITY (looked in " + list +
                     "; 'hetcast keys init' makes one)");
}

namespace {

std::string default_config_path() {
    const char* env = std::getenv("HETCAST_CONFIG");
    return env && *env ? env : "/etc/hetcast/hetcastd.yaml";
}

}  // namespace

std::optional<DaemonConfig> local_config(const DaemonOptions& d) {
    if (!d.config.empty()) return load_daemon_config(d.config);
    if (!d.cluster.empty()) return std::nullopt;
    const std::string path = default_config_path();
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
    return load_daemon_config(path);
}

std::optional<std::string> cluster_path(const DaemonOptions& d) {
    if (!d.cluster.empty()) return d.cluster;
    if (const char* env = std::getenv("HETCAST_CLUSTER"); env && *env) return std::string(env);
    return std::nullopt;
}

std::optional<std::pair<std::string, std::uint16_t>> host_port(const std::string& text) {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size() || text.size() - colon > 6) return std::nullopt;
    std::string host = text.substr(0, colon);
    const std::string port = text.substr(colon + 1);
    if (!std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
    if (host.front() == '[') {
        if (host.size() < 3 || host.back() != ']') return std::nullopt;
        host = host.substr(1, host.size() - 2);
    } else if (host.find_first_of("@[],!&^: ") != std::string::npos) {
        return std::nullopt;  // a node set (@subnet:2), or IPv6 without brackets
    }
    const unsigned long n = std::stoul(port);
    if (n == 0 || n > 65535) throw InputError("--from " + text + ": the port must be 1 to 65535");
    return std::pair{host, static_cast<std::uint16_t>(n)};
}

bool without_local_daemon(const DaemonOptions& d) {
    return host_port(d.from).has_value() || !local_config(d).has_value();
}

NodeGroups cluster_groups(const DaemonOptions& d) {
    if (const auto cfg = local_config(d)) return cfg->cluster_file ? load_cluster_file(*cfg->cluster_file).groups : NodeGroups{};
    const auto cluster = cluster_path(d);
    return cluster ? load_cluster_file(*cluster).groups : NodeGroups{};
}

std::vector<std::string> select_nodes(const DaemonOptions& d, Client& daemon, const std::vector<std::string>& members,
                                      const std::string& nodes, const std::string& exclude) {
    std::optional<Network> map;
    const GroupResolver map_groups_asked = [&](const std::string& name) {
        if (!map) {
            const nlohmann::json a = daemon.call({{"cmd", "map"}});
            if (!a.value("ok", false)) throw InputError("no group '@" + name + "': " + str(a, "error", "the daemon has no map"));
            map = parse_network(str(a, "map"), "the daemon's map");
        }
        return map_groups(*map)(name);
    };
    const NodeGroups groups = (nodes + exclude).find('@') != std::string::npos ? cluster_groups(d) : NodeGroups{};
    return select_names(members, nodes.empty() ? "@*" : nodes, exclude, named_groups(groups, map_groups_asked),
                        [](const std::string& line) { std::cerr << "hetcast: warning: " << line << '\n'; });
}

namespace {

std::unique_ptr<Client> open_client(const std::string& host, std::uint16_t port, const net::Identity& identity,
                                    const std::string& expect) {
    try {
        return std::make_unique<Client>(host, port, identity, std::chrono::seconds(5), expect);
    } catch (const Error& e) {
        const std::string why = e.what();
        const bool unreachable = why.find("refused") != std::string::npos || why.find("timed out") != std::string::npos;
        throw Unreachable(unreachable ? why + " (is hetcastd running there?)" : why);
    }
}

std::string local_host(const DaemonConfig& cfg) {
    if (cfg.host == "0.0.0.0") return "127.0.0.1";
    if (cfg.host == "::") return "::1";
    return cfg.host;
}

/// The one member --from names (a name, or a node set naming one) among `members`.
Member pick_member(const DaemonOptions& d, const std::vector<Member>& members, const std::string& source) {
    std::vector<std::string> names;
    for (const auto& m : members) names.push_back(m.name);
    const GroupResolver groups = named_groups(cluster_groups(d), [](const std::string& name) -> std::vector<std::string> {
        throw InputError("no group '@" + name + "' (--from takes @* and the cluster file's groups)");
    });
    std::vector<std::string> chosen;
    try {
        chosen = select_names(names, d.from, "", groups);
    } catch (const InputError& e) {
        throw InputError(std::string("--from: ") + e.what() + (source.empty() ? "" : " in " + source));
    }
    if (chosen.size() != 1) {
        throw InputError("--from: node set '" + d.from + "' names " +
                         (chosen.empty() ? std::string("no member") : std::to_string(chosen.size()) + " members (" +
                                                                           fold_nodeset(chosen) + ")") +
                         ": give one");
    }
    return *std::find_if(members.begin(), members.end(), [&](const Member& m) { return m.name == chosen[0]; });
}

/// The member --from names: among the local daemon's members (joined ones too), or the
/// cluster file's when no local daemon answers.
Member from_member(const DaemonOptions& d, const DaemonConfig& cfg, const net::Identity& identity) {
    std::vector<Member> members;
    std::string source;
    try {
        Client local(local_host(cfg), cfg.port, identity, std::chrono::seconds(2), cfg.name);
        const nlohmann::json a = checked(local.call({{"cmd", "status"}, {"hellos", false}}), "status");
        for (const auto& m : a.at("members")) {
            members.push_back({m.at("name").get<std::string>(), m.at("host").get<std::string>(), m.at("port").get<std::uint16_t>()});
        }
        source = "the members '" + cfg.name + "' knows";
    } catch (const InputError&) {
        throw;
    } catch (const std::exception&) {
        if (!cfg.cluster_file) {
            throw InputError("--from " + d.from + ": no local daemon answers and the config names no cluster file");
        }
        members = load_cluster(*cfg.cluster_file);
        source = cfg.cluster_file->string();
    }
    return pick_member(d, members, source);
}

/// Without a local daemon: the member --from names, else the first of the cluster file's
/// members that answers, in the file's order.
std::unique_ptr<Client> connect_through_cluster(const DaemonOptions& d, const std::string& file,
                                                const net::Identity& identity) {
    const std::vector<Member> members = load_cluster(file);
    if (!d.from.empty()) {
        const Member m = pick_member(d, members, file);
        return open_client(m.host, m.port, identity, m.name);
    }
    if (members.empty()) throw InputError(file + ": no members");
    std::string first;
    for (const auto& m : members) {
        try {
            return std::make_unique<Client>(m.host, m.port, identity, std::chrono::seconds(3), m.name);
        } catch (const Error& e) {
            if (first.empty()) first = std::string(e.what());
        }
    }
    throw Unreachable("no member of " + file + " answers (" + std::to_string(members.size()) + " tried; the first: " + first + ")");
}

}  // namespace

std::unique_ptr<Client> connect_daemon(const DaemonOptions& d) {
    if (const auto addr = host_port(d.from)) {
        return open_client(addr->first, addr->second, read_identity(identity_path(d)), {});
    }
    const auto cfg = local_config(d);
    if (!cfg) {
        const auto cluster = cluster_path(d);
        if (!cluster) {
            throw InputError("no daemon config (" + default_config_path() +
                             " is missing) and no cluster file: give --cluster FILE (or set HETCAST_CLUSTER), "
                             "or --from HOST:PORT");
        }
        return connect_through_cluster(d, *cluster, read_identity(identity_path(d)));
    }
    const net::Identity identity = read_identity(identity_path(d));
    if (d.from.empty() || d.from == cfg->name) return open_client(local_host(*cfg), cfg->port, identity, cfg->name);
    const Member m = from_member(d, *cfg, identity);
    return open_client(m.host, m.port, identity, m.name);
}

bool parse_options(const std::vector<std::string>& args, const boost::program_options::options_description& opts,
                   boost::program_options::variables_map& vm) {
    namespace po = boost::program_options;
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    if (vm.count("help")) {
        std::cout << opts;
        return true;
    }
    po::notify(vm);
    return false;
}

bool parse_options_with(const std::vector<std::string>& args, const po::options_description& opts, const char* name,
                        std::string& value, po::variables_map& vm) {
    po::options_description all;
    all.add(opts).add_options()(name, po::value(&value));
    po::positional_options_description pos;
    pos.add(name, 1);
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    if (vm.count("help")) {
        std::cout << opts;
        return true;
    }
    po::notify(vm);
    return false;
}

std::string str(const nlohmann::json& j, const char* key, const std::string& fallback) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

nlohmann::json checked(const nlohmann::json& answer, const std::string& what) {
    if (answer.value("ok", false)) return answer;
    // The daemon's word on whose fault it is: the request's (exit 2) or the operation's.
    if (answer.value("input", false) || answer.value("unknown", false)) throw InputError(str(answer, "error", what + " failed"));
    throw Error(str(answer, "error", what + " failed"));
}

std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string part; std::getline(ss, part, ',');) {
        if (!part.empty()) out.push_back(part);
    }
    return out;
}

}  // namespace hetcast::cli
