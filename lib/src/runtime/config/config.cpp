// The daemon's config file and identity files (the cluster file: cluster_file.cpp).
#include "hetcast/runtime/config.hpp"

#include <sys/stat.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include "hetcast/error.hpp"
#include "hetcast/model/units.hpp"
#include "hetcast/runtime/job.hpp"
#include "config_reader.hpp"

namespace hetcast {

namespace detail::config_file {

DaemonConfig Reader::daemon(const YAML::Node& root, const fs::path& base) const {
    if (root.IsMap()) {
        for (auto it = root.begin(); it != root.end(); ++it) {
            if (it->first.IsScalar() && it->first.Scalar() == "secret_file") {
                fail(it->first.Mark(), "'secret_file' is gone: connections are TLS with an identity per member now; "
                                       "give 'identity: FILE' (made by 'hetcast keys issue NAME', see conf/README.md)");
            }
        }
    }
    const Entries e = entries(root, "", {"name", "listen", "state_dir", "dest_root", "identity",
                                         "cluster", "seeds", "limits", "chunk", "piece", "tolerance",
                                         "stall_timeout", "down_after", "link_profile", "umask", "serve_roots",
                                         "log_level", "job_timeout", "heartbeat", "history", "metrics",
                                         "tcp_congestion"});
    DaemonConfig c;
    c.name = name(required(e, root, "name", "").value, "name");
    c.state_dir = path(required(e, root, "state_dir", "").value, "state_dir", base);
    c.dest_root = path(required(e, root, "dest_root", "").value, "dest_root", base);
    c.identity_file = path(required(e, root, "identity", "").value, "identity", base);
    if (const auto it = e.find("listen"); it != e.end()) {
        std::tie(c.host, c.port) = address(it->second.value, "listen", 0);
    }
    if (const auto it = e.find("cluster"); it != e.end()) {
        c.cluster_file = path(it->second.value, "cluster", base);
    }
    if (const auto it = e.find("metrics"); it != e.end()) c.metrics = address(it->second.value, "metrics", 0);
    if (const auto it = e.find("link_profile"); it != e.end()) {
        c.link_profile = path(it->second.value, "link_profile", base);
    }
    if (const auto it = e.find("seeds"); it != e.end()) {
        const YAML::Node& seq = sequence(it->second.value, "seeds");
        std::set<std::string> seen;
        for (std::size_t i = 0; i < seq.size(); ++i) {
            const std::string what = "seeds[" + std::to_string(i) + "]";
            (void)address(seq[i], what, 1);
            if (!seen.insert(seq[i].Scalar()).second) {
                fail(seq[i].Mark(), what + ": duplicate seed " + shown(seq[i].Scalar()));
            }
            c.seeds.push_back(seq[i].Scalar());
        }
    }
    if (const auto it = e.find("serve_roots"); it != e.end()) {
        const YAML::Node& seq = sequence(it->second.value, "serve_roots");
        for (std::size_t i = 0; i < seq.size(); ++i) {
            c.serve_roots.push_back(path(seq[i], "serve_roots[" + std::to_string(i) + "]", base));
        }
    }
    if (const auto it = e.find("limits"); it != e.end()) {
        const YAML::Node& m = it->second.value;
        const Entries l = entries(m, "limits", {"max_message", "max_jobs", "idle_timeout", "connections_per_peer",
                                                "requests_per_peer", "control_fanout"});
        if (const auto j = l.find("max_message"); j != l.end()) {
            c.max_message = bytes(j->second.value, "limits.max_message");
        }
        if (const auto j = l.find("max_jobs"); j != l.end()) {
            c.max_jobs = positive_count(j->second.value, "limits.max_jobs");
        }
        if (const auto j = l.find("idle_timeout"); j != l.end()) {
            c.idle_timeout = seconds(j->second.value, "limits.idle_timeout", 0.001, 86400.0 * 365, "0.001 and one year");
        }
        if (const auto j = l.find("connections_per_peer"); j != l.end()) {
            c.connections_per_peer = positive_count(j->second.value, "limits.connections_per_peer");
        }
        if (const auto j = l.find("requests_per_peer"); j != l.end()) {
            c.requests_per_peer = positive_count(j->second.value, "limits.requests_per_peer");
        }
        if (const auto j = l.find("control_fanout"); j != l.end()) {
            c.control_fanout = positive_count(j->second.value, "limits.control_fanout");
        }
    }
    if (const auto it = e.find("chunk"); it != e.end()) {
        const YAML::Node& n = it->second.value;
        const std::uint64_t v = bytes(n, "chunk");
        if (v < min_chunk || v > max_chunk) {
            fail(n.Mark(), "chunk: must be between 1KiB and 8MiB, got " + shown(n.Scalar()));
        }
        c.chunk = static_cast<std::size_t>(v);
    }
    if (const auto it = e.find("piece"); it != e.end()) {
        const YAML::Node& n = it->second.value;
        const std::uint64_t v = bytes(n, "piece");
        if (v < min_piece || v > max_piece) fail(n.Mark(), "piece: must be between 4KiB and 8MiB, got " + shown(n.Scalar()));
        c.piece = v;
    }
    if (const auto it = e.find("tolerance"); it != e.end()) {
        c.tolerance = number(it->second.value, "tolerance", false);
    }
    if (const auto it = e.find("stall_timeout"); it != e.end()) {
        c.stall_timeout = seconds(it->second.value, "stall_timeout", 0.001, 86400.0 * 365, "0.001 and one year");
    }
    if (const auto it = e.find("down_after"); it != e.end()) {
        c.down_after = seconds(it->second.value, "down_after", 0.01, 3600, "0.01 and 3600");
    }
    if (const auto it = e.find("job_timeout"); it != e.end()) {
        const YAML::Node& n = it->second.value;
        if (!(n.IsScalar() && n.Scalar() == "none")) {
            c.job_timeout = seconds(n, "job_timeout", 1, 86400.0 * 365, "1 and one year (or none)");
        }
    }
    if (const auto it = e.find("heartbeat"); it != e.end()) {
        c.heartbeat = seconds(it->second.value, "heartbeat", 0.05, 600, "0.05 and 600");
    }
    if (const auto it = e.find("history"); it != e.end()) {
        const YAML::Node& n = it->second.value;
        c.history = n.IsScalar() && n.Scalar() == "0" ? 0 : positive_count(n, "history");
        if (c.history > 100000) fail(n.Mark(), "history: at most 100000 reports, got " + shown(n.Scalar()));
    }
    if (const auto it = e.find("umask"); it != e.end()) {
        const YAML::Node& n = it->second.value;
        const std::string text = n.IsScalar() ? n.Scalar() : "";
        if (text.empty() || text.size() > 4 || text.find_first_not_of("01234567") != std::string::npos ||
            std::stoul(text, nullptr, 8) > 0777) {
            fail(n.Mark(), "umask: expected octal permission bits like 022 or 027, got " + shown(text));
        }
        c.umask = static_cast<unsigned>(std::stoul(text, nullptr, 8));
    }
    if (const auto it = e.find("tcp_congestion"); it != e.end()) {
        const YAML::Node& n = it->second.value;
        const std::string text = n.IsScalar() ? n.Scalar() : "";
        // The kernel's names: at most 15 characters (TCP_CA_NAME_MAX), letters, digits, '_'.
        if (text.empty() || text.size() > 15 ||
            text.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) {
            fail(n.Mark(), "tcp_congestion: expected a congestion control like cubic or bbr, got " + shown(text));
        }
        c.tcp_congestion = text;
    }
    if (const auto it = e.find("log_level"); it != e.end()) {
        const YAML::Node& n = it->second.value;
        const auto level = parse_log_level(n.IsScalar() ? n.Scalar() : "");
        if (!level) {
            fail(n.Mark(), "log_level: expected one of " + std::string(log_level_names) + ", got " +
                               shown(n.IsScalar() ? n.Scalar() : ""));
        }
        c.log_level = *level;
    }
    return c;
}

std::string read_text(const fs::path& file, std::size_t limit) {
    const std::string origin = file.string();
    std::error_code ec;
    if (fs::is_directory(file, ec)) throw InputError(origin + ": cannot read: is a directory");
    return read_text_file(file, origin, limit, std::to_string(limit >> 10) + " KiB");
}

}  // namespace detail::config_file

using namespace detail::config_file;

DaemonConfig parse_daemon_config(std::string_view yaml, std::string_view origin, const fs::path& base_dir) {
    const Reader reader(origin);
    return parse_document(yaml, reader, "config file",
                          [&](const YAML::Node& root) { return reader.daemon(root, base_dir); });
}

DaemonConfig load_daemon_config(const fs::path& file) {
    std::error_code ec;
    fs::path base = fs::absolute(file, ec).parent_path();
    if (ec) base = file.parent_path();
    return parse_daemon_config(read_text(file, max_text_bytes), file.string(), base);
}

net::Identity read_identity(const fs::path& file) {
    const std::string origin = file.string();
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
        throw InputError(origin + ": cannot read the identity: " + std::generic_category().message(errno));
    }
    if (!S_ISREG(st.st_mode)) throw InputError(origin + ": the identity is not a regular file");
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        throw InputError(origin + ": the identity (a private key) is open to others: chmod 600 " + origin);
    }
    return net::parse_identity(read_text(file, max_identity_bytes), origin);
}

}  // namespace hetcast
