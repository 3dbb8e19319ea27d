#include "hetcast/runtime/config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
#include <random>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include "hetcast/error.hpp"
#include "hetcast/model/units.hpp"
#include "hetcast/runtime/job.hpp"
#include "../../model/yaml_document.hpp"

namespace hetcast {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t max_text_bytes = std::size_t{1} << 20;    // config and cluster files
constexpr std::size_t max_identity_bytes = std::size_t{64} << 10;
constexpr std::size_t min_chunk = std::size_t{1} << 10;
/// Below the transport's default frame limit (16 MiB) with room for the header.
constexpr std::size_t max_chunk = std::size_t{8} << 20;
constexpr std::size_t max_members = 4096;

struct Entry {
    YAML::Node key;
    YAML::Node value;
};
using Entries = std::map<std::string, Entry, std::less<>>;

/// User text inside a one-line message: short, no control characters.
std::string shown(const std::string& s) {
    constexpr std::size_t limit = 40;
    std::string out = "'";
    for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
        out += std::iscntrl(static_cast<unsigned char>(s[i])) ? '?' : s[i];
    }
    return out + (s.size() > limit ? "...'" : "'");
}

bool has_control(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::iscntrl(c); });
}

bool has_space(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

std::optional<double> to_double(std::string_view v) {
    if (!v.empty() && v.front() == '+') v.remove_prefix(1);
    double out = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (v.empty() || ec != std::errc{} || end != v.data() + v.size()) return std::nullopt;
    return out;
}

/// A port in [lo, 65535] from decimal text.
std::optional<std::uint16_t> to_port(std::string_view s, unsigned lo) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || v < lo || v > 65535) {
        return std::nullopt;
    }
    return static_cast<std::uint16_t>(v);
}

/// "host:port", "[v6]:port". Returns nullopt on a malformed address.
std::optional<std::pair<std::string, std::uint16_t>> split_address(const std::string& s, unsigned lo) {
    std::string host;
    std::string_view port;
    if (!s.empty() && s.front() == '[') {
        const auto close = s.find(']');
        if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':') return std::nullopt;
        host = s.substr(1, close - 1);
        port = std::string_view(s).substr(close + 2);
    } else {
        const auto colon = s.rfind(':');
        if (colon == std::string::npos) return std::nullopt;
        host = s.substr(0, colon);
        if (host.find(':') != std::string::npos) return std::nullopt;  // bare IPv6 needs brackets
        port = std::string_view(s).substr(colon + 1);
    }
    if (host.empty() || has_control(host) || has_space(host)) return std::nullopt;
    const auto p = to_port(port, lo);
    if (!p) return std::nullopt;
    return std::make_pair(host, *p);
}

class Reader {
public:
    explicit Reader(std::string_view origin) : origin_(origin) {}

    [[noreturn]] void fail(const YAML::Mark& at, const std::string& what) const {
        const int line = at.is_null() ? 1 : at.line + 1;
        const int column = at.is_null() ? 1 : at.column + 1;
        throw InputError(origin_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                         what);
    }

    Entries entries(const YAML::Node& map, const std::string& what,
                    std::initializer_list<std::string_view> allowed) const {
        const std::string prefix = what.empty() ? "" : what + ": ";
        if (!map.IsMap()) fail(map.Mark(), prefix + "expected a mapping");
        Entries out;
        for (auto it = map.begin(); it != map.end(); ++it) {
            if (!it->first.IsScalar()) fail(it->first.Mark(), prefix + "expected a key name");
            const std::string& key = it->first.Scalar();
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
                std::string known;
                for (auto a : allowed) known += (known.empty() ? "" : ", ") + std::string(a);
                fail(it->first.Mark(), prefix + "unknown key " + shown(key) + " (known: " + known + ")");
            }
            if (!out.emplace(key, Entry{it->first, it->second}).second) {
                fail(it->first.Mark(), prefix + "duplicate key " + shown(key));
            }
            // No key takes an empty value; yaml-cpp gives such a value no position, so
            // point at its key.
            if (it->second.IsNull()) fail(it->first.Mark(), prefix + shown(key) + " has no value");
        }
        return out;
    }

    /// The value of a required key, or a failure at the mapping.
    const Entry& required(const Entries& e, const YAML::Node& map, std::string_view key,
                          const std::string& what) const {
        const auto it = e.find(key);
        if (it == e.end()) {
            fail(map.Mark(), (what.empty() ? "" : what + ": ") + "missing key '" + std::string(key) + "'");
        }
        return it->second;
    }

    std::string text(const YAML::Node& n, const std::string& what) const {
        if (!n.IsScalar() || n.Scalar().empty()) fail(n.Mark(), what + ": expected a non-empty string");
        if (has_control(n.Scalar())) fail(n.Mark(), what + ": control characters are not allowed");
        return n.Scalar();
    }

    /// A member or daemon name: non-empty, no white space or control characters.
    std::string name(const YAML::Node& n, const std::string& what) const {
        std::string s = text(n, what);
        if (has_space(s)) fail(n.Mark(), what + ": white space is not allowed in " + shown(s));
        return s;
    }

    fs::path path(const YAML::Node& n, const std::string& what, const fs::path& base) const {
        fs::path p = text(n, what);
        if (p.is_relative() && !base.empty()) p = base / p;
        return p.lexically_normal();
    }

    std::pair<std::string, std::uint16_t> address(const YAML::Node& n, const std::string& what,
                                                  unsigned lowest_port) const {
        const std::string s = text(n, what);
        const auto a = split_address(s, lowest_port);
        if (!a) {
            fail(n.Mark(), what + ": expected HOST:PORT with a port in " + std::to_string(lowest_port) +
                               "..65535 ([ADDR]:PORT for IPv6), got " + shown(s));
        }
        return *a;
    }

    std::uint16_t port(const YAML::Node& n, const std::string& what) const {
        const std::string s = n.IsScalar() ? n.Scalar() : "";
        const auto p = to_port(s, 1);
        if (!p) fail(n.Mark(), what + ": expected a port in 1..65535, got " + shown(s));
        return *p;
    }

    std::size_t positive_count(const YAML::Node& n, const std::string& what) const {
        std::size_t v = 0;
        const std::string s = n.IsScalar() ? n.Scalar() : "";
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || v == 0) {
            fail(n.Mark(), what + ": expected a positive whole number, got " + shown(s));
        }
        return v;
    }

    /// A byte count: a whole number or "64KiB", "1.5GiB", "10MB" (see parse_bytes).
    std::uint64_t bytes(const YAML::Node& n, const std::string& what) const {
        if (!n.IsScalar() || n.Scalar().empty()) fail(n.Mark(), what + ": expected a byte count like 64MiB");
        double v = 0;
        try {
            v = parse_bytes(n.Scalar());
        } catch (const InputError& e) {
            fail(n.Mark(), what + ": " + e.what());
        }
        if (!std::isfinite(v) || v < 1) fail(n.Mark(), what + ": must be at least 1 byte, got " + shown(n.Scalar()));
        return static_cast<std::uint64_t>(std::floor(v));
    }

    double number(const YAML::Node& n, const std::string& what, bool positive) const {
        const std::string s = n.IsScalar() ? n.Scalar() : "";
        const auto v = to_double(s);
        if (!v) fail(n.Mark(), what + ": expected a number, got " + shown(s));
        if (!std::isfinite(*v) || *v < 0 || (positive && *v == 0)) {
            fail(n.Mark(), what + " must be " + (positive ? "positive" : "non-negative") +
                               " and finite, got " + shown(s));
        }
        return *v;
    }

    /// Seconds (fractions allowed) in [lo, hi], as milliseconds.
    std::chrono::milliseconds seconds(const YAML::Node& n, const std::string& what, double lo, double hi,
                                      const std::string& range) const {
        const double s = number(n, what, true);
        if (s < lo || s > hi) fail(n.Mark(), what + ": expected seconds between " + range + ", got " + shown(n.Scalar()));
        return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(s * 1000)));
    }

    const YAML::Node& sequence(const YAML::Node& n, const std::string& what) const {
        if (!n.IsSequence()) fail(n.Mark(), what + ": expected a list");
        return n;
    }

    DaemonConfig daemon(const YAML::Node& root, const fs::path& base) const {
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
                                             "log_level", "job_timeout", "heartbeat", "history", "metrics"});
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
                                                    "requests_per_peer"});
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

    std::vector<net::Revocation> revoked(const YAML::Node& root) const {
        const Entries e = entries(root, "", {"revoked"});
        const YAML::Node& seq = sequence(required(e, root, "revoked", "").value, "revoked");
        std::vector<net::Revocation> out;
        for (std::size_t i = 0; i < seq.size(); ++i) {
            const std::string what = "revoked[" + std::to_string(i) + "]";
            const Entries f = entries(seq[i], what, {"name", "since", "order"});
            net::Revocation r;
            r.name = name(required(f, seq[i], "name", what).value, what + ".name");
            const YAML::Node& since = required(f, seq[i], "since", what).value;
            try {
                r.since = since.as<std::int64_t>();
            } catch (const YAML::Exception&) {
                fail(since.Mark(), what + ".since: expected seconds since the epoch");
            }
            if (const auto it = f.find("order"); it != f.end()) r.order = text(it->second.value, what + ".order");
            out.push_back(std::move(r));
        }
        return out;
    }

    ClusterFile cluster(const YAML::Node& root) const {
        const Entries e = entries(root, "", {"members", "groups"});
        const YAML::Node& seq = sequence(required(e, root, "members", "").value, "members");
        if (seq.size() == 0) fail(seq.Mark(), "members: a cluster needs at least one member");
        if (seq.size() > max_members) {
            fail(seq.Mark(), "members: more than " + std::to_string(max_members) + " members");
        }
        std::vector<Member> out;
        std::set<std::string> names;
        std::set<std::pair<std::string, std::uint16_t>> addresses;
        for (std::size_t i = 0; i < seq.size(); ++i) {
            const YAML::Node& m = seq[i];
            const std::string what = "members[" + std::to_string(i) + "]";
            const Entries f = entries(m, what, {"name", "host", "port"});
            Member member;
            const YAML::Node& name_node = required(f, m, "name", what).value;
            member.name = name(name_node, what + ".name");
            member.host = text(required(f, m, "host", what).value, what + ".host");
            if (has_space(member.host)) {
                fail(f.at("host").value.Mark(), what + ".host: white space is not allowed");
            }
            member.port = port(required(f, m, "port", what).value, what + ".port");
            if (!names.insert(member.name).second) {
                fail(name_node.Mark(), what + ": duplicate member name " + shown(member.name));
            }
            if (!addresses.emplace(member.host, member.port).second) {
                fail(m.Mark(), what + ": duplicate address " + shown(member.host + ":" +
                                                                     std::to_string(member.port)));
            }
            out.push_back(std::move(member));
        }
        ClusterFile file{std::move(out), {}};
        if (const auto it = e.find("groups"); it != e.end()) file.groups = groups(it->second.value);
        return file;
    }

    /// `groups:`, each checked by expanding it: the map's groups stand for no names here.
    NodeGroups groups(const YAML::Node& map) const {
        if (!map.IsMap()) fail(map.Mark(), "groups: expected a mapping of names to node sets");
        NodeGroups out;
        std::vector<std::pair<std::string, YAML::Mark>> where;  // in the file's order
        for (auto it = map.begin(); it != map.end(); ++it) {
            const std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
            if (!valid_group_name(name)) {
                fail(it->first.Mark(), "groups: " + shown(name) +
                                           " is not a group name (letters, digits, '.', '_', '-', from a letter or digit)");
            }
            const std::string what = "groups." + name;
            if (out.count(name)) fail(it->first.Mark(), "groups: duplicate group " + shown(name));
            if (it->second.IsNull()) fail(it->first.Mark(), "groups: " + shown(name) + " has no value");
            out.emplace(name, text(it->second, what));
            where.emplace_back(name, it->second.Mark());
        }
        const GroupResolver resolve = named_groups(out, unresolved_map_groups());
        for (const auto& [name, mark] : where) {
            try {
                (void)resolve(name);
            } catch (const InputError& e) {
                std::string why = e.what();
                if (const std::string self = "group '@" + name + "': "; why.starts_with(self)) why.erase(0, self.size());
                fail(mark, "groups." + name + ": " + why);
            }
        }
        return out;
    }

private:
    std::string origin_;
};

template <typename F>
auto parse_document(std::string_view yaml_text, const Reader& reader, const char* kind, F&& build) {
    try {
        if (yaml_text.size() > max_text_bytes) reader.fail(YAML::Mark(), "larger than 1 MiB");
        const auto doc = detail::load_yaml_document(yaml_text);
        if (doc.second) reader.fail(*doc.second, "expected a single YAML document");
        if (!doc.root || doc.root.IsNull()) reader.fail(YAML::Mark(), std::string("empty ") + kind);
        return build(doc.root);
    } catch (const InputError&) {
        throw;
    } catch (const YAML::Exception& e) {
        reader.fail(e.mark, e.msg);
    } catch (const std::exception& e) {
        reader.fail(YAML::Mark(), std::string("cannot parse: ") + e.what());
    }
}

std::string read_text(const fs::path& file, std::size_t limit) {
    const std::string origin = file.string();
    const auto cannot_read = [&](int err) {
        return InputError(origin + ": cannot read: " + std::generic_category().message(err));
    };
    std::error_code ec;
    if (fs::is_directory(file, ec)) throw InputError(origin + ": cannot read: is a directory");
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(file.c_str(), "rb"), &std::fclose);
    if (!f) throw cannot_read(errno);
    std::string text;
    std::vector<char> buf(1 << 16);
    while (true) {
        const std::size_t got = std::fread(buf.data(), 1, buf.size(), f.get());
        text.append(buf.data(), got);
        if (text.size() > limit) {
            throw InputError(origin + ": cannot read: larger than " + std::to_string(limit >> 10) + " KiB");
        }
        if (got < buf.size()) break;
    }
    if (std::ferror(f.get())) throw cannot_read(errno ? errno : EIO);
    return text;
}

/// Writes `text` to `file` atomically: a temporary file beside it (`mode`), fsync, rename
/// (or, when not `replace`, a link that fails if `file` exists), fsync of the folder.
/// Throws Error on failure and leaves `file` untouched.
void write_atomically(const fs::path& file, const std::string& text, unsigned mode = 0644, bool replace = true) {
    const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
    std::random_device rd;
    const fs::path temp = dir / ("." + file.filename().string() + ".tmp-" + std::to_string(::getpid()) +
                                 "-" + std::to_string(rd()));
    const auto failed = [&](const std::string& what, int err) {
        return Error("cannot write " + file.string() + ": " + what + ": " +
                     std::generic_category().message(err));
    };
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode));
    if (fd < 0) throw failed("create " + temp.string(), errno);
    const auto discard = [&] {
        std::error_code ignored;
        fs::remove(temp, ignored);
    };
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            discard();
            throw failed("write", err);
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) {
        const int err = errno;
        ::close(fd);
        discard();
        throw failed("fsync", err);
    }
    if (::close(fd) != 0) {
        const int err = errno;
        discard();
        throw failed("close", err);
    }
    if (replace ? ::rename(temp.c_str(), file.c_str()) != 0 : ::link(temp.c_str(), file.c_str()) != 0) {
        const int err = errno;
        discard();
        throw failed(replace ? "rename" : "link", err);
    }
    if (!replace) discard();
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
}

}  // namespace

void write_file_atomically(const fs::path& file, const std::string& text, unsigned mode, bool replace) {
    write_atomically(file, text, mode, replace);
}

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

ClusterFile parse_cluster_file(std::string_view yaml, std::string_view origin) {
    const Reader reader(origin);
    return parse_document(yaml, reader, "cluster file",
                          [&](const YAML::Node& root) { return reader.cluster(root); });
}

ClusterFile load_cluster_file(const fs::path& file) {
    return parse_cluster_file(read_text(file, max_text_bytes), file.string());
}

std::vector<Member> parse_cluster(std::string_view yaml, std::string_view origin) {
    return parse_cluster_file(yaml, origin).members;
}

std::vector<Member> load_cluster(const fs::path& file) {
    return parse_cluster(read_text(file, max_text_bytes), file.string());
}

std::vector<net::Revocation> parse_revoked(std::string_view yaml, std::string_view origin) {
    const Reader reader(origin);
    return parse_document(yaml, reader, "revocation list", [&](const YAML::Node& root) { return reader.revoked(root); });
}

std::vector<net::Revocation> load_revoked(const fs::path& file) {
    return parse_revoked(read_text(file, max_text_bytes), file.string());
}

void save_revoked(const fs::path& file, const std::vector<net::Revocation>& revoked) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "revoked" << YAML::Value << YAML::BeginSeq;
    for (const auto& r : revoked) {
        out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << r.name << YAML::Key
            << "since" << YAML::Value << r.since;
        if (!r.order.empty()) out << YAML::Key << "order" << YAML::Value << YAML::DoubleQuoted << r.order;
        out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
    if (!out.good()) throw Error("cannot write " + file.string() + ": " + out.GetLastError());
    std::string text = std::string(out.c_str()) + "\n";
    (void)parse_revoked(text, file.string());
    write_atomically(file, text);
}

void save_cluster(const fs::path& file, const std::vector<Member>& members) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "members" << YAML::Value << YAML::BeginSeq;
    for (const Member& m : members) {
        out << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << m.name;
        out << YAML::Key << "host" << YAML::Value << YAML::DoubleQuoted << m.host;
        out << YAML::Key << "port" << YAML::Value << static_cast<unsigned>(m.port);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
    if (!out.good()) throw Error("cannot write " + file.string() + ": " + out.GetLastError());
    std::string text = out.c_str();
    text += '\n';
    // Refuse to write what load_cluster would refuse to read.
    (void)parse_cluster(text, file.string());
    write_atomically(file, text);
}

}  // namespace hetcast
