#include "daemon_link.hpp"

#include <cstdlib>
#include <unistd.h>
#include <sstream>
#include <boost/program_options/parsers.hpp>
#include <iostream>

#include "hetcast/error.hpp"

namespace po = boost::program_options;

namespace hetcast::cli {

void add_daemon_options(po::options_description& opts, DaemonOptions& d) {
    opts.add_options()("config,c", po::value(&d.config),
                       "the local daemon's config (default: $HETCAST_CONFIG, else /etc/hetcast/hetcastd.yaml)")(
        "from", po::value(&d.from), "talk to this member's daemon instead of the local one")(
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

DaemonConfig load_config(const DaemonOptions& d) {
    std::string path = d.config;
    if (path.empty()) {
        const char* env = std::getenv("HETCAST_CONFIG");
        path = env && *env ? env : "/etc/hetcast/hetcastd.yaml";
    }
    return load_daemon_config(path);
}

std::unique_ptr<Client> connect_daemon(const DaemonOptions& d) {
    const DaemonConfig cfg = load_config(d);
    const net::Identity identity = read_identity(identity_path(d));
    std::string host = cfg.host == "0.0.0.0" ? "127.0.0.1" : cfg.host;
    std::uint16_t port = cfg.port;
    std::string expect = cfg.name;
    if (!d.from.empty() && d.from != cfg.name) {
        expect = d.from;
        if (!cfg.cluster_file) throw InputError("--from needs a cluster file in the config");
        bool found = false;
        for (const auto& m : load_cluster(*cfg.cluster_file)) {
            if (m.name == d.from) {
                host = m.host;
                port = m.port;
                found = true;
            }
        }
        if (!found) throw InputError("unknown node '" + d.from + "' (not in " + cfg.cluster_file->string() + ")");
    }
    try {
        return std::make_unique<Client>(host, port, identity, std::chrono::seconds(5), expect);
    } catch (const Error& e) {
        const std::string why = e.what();
        const bool unreachable = why.find("refused") != std::string::npos || why.find("timed out") != std::string::npos;
        throw Error(unreachable ? why + " (is hetcastd running there?)" : why);
    }
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
    if (!answer.value("ok", false)) throw Error(str(answer, "error", what + " failed"));
    return answer;
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
