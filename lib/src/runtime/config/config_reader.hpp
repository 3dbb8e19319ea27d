#pragma once
// What reading the daemon's config (config.cpp) and cluster files (cluster_file.cpp)
// share: a YAML reader that fails with origin:line:column, value checks, file I/O.
// Internal to lib/src/runtime/config.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "hetcast/error.hpp"
#include "hetcast/model/units.hpp"
#include "hetcast/runtime/config.hpp"
#include "../../model/yaml_document.hpp"

namespace hetcast::detail::config_file {

namespace fs = std::filesystem;

inline constexpr std::size_t max_text_bytes = std::size_t{1} << 20;    // config and cluster files
inline constexpr std::size_t max_identity_bytes = std::size_t{64} << 10;
inline constexpr std::size_t min_chunk = std::size_t{1} << 10;
/// Below the transport's default frame limit (16 MiB) with room for the header.
inline constexpr std::size_t max_chunk = std::size_t{8} << 20;
inline constexpr std::size_t max_members = 4096;

using Entry = YamlEntry;
using Entries = YamlEntries;
using detail::has_control;

/// User text inside a one-line message: short, no control characters.
inline std::string shown(const std::string& s) { return quoted_text(s); }

inline bool has_space(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

inline std::optional<double> to_double(std::string_view v) {
    if (!v.empty() && v.front() == '+') v.remove_prefix(1);
    double out = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (v.empty() || ec != std::errc{} || end != v.data() + v.size()) return std::nullopt;
    return out;
}

/// A port in [lo, 65535] from decimal text.
inline std::optional<std::uint16_t> to_port(std::string_view s, unsigned lo) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || v < lo || v > 65535) {
        return std::nullopt;
    }
    return static_cast<std::uint16_t>(v);
}

/// "host:port", "[v6]:port". Returns nullopt on a malformed address.
inline std::optional<std::pair<std::string, std::uint16_t>> split_address(const std::string& s, unsigned lo) {
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

class Reader : public YamlReader {
public:
    using YamlReader::YamlReader;

    /// No key of these files takes an empty value.
    Entries entries(const YAML::Node& map, const std::string& what,
                    std::initializer_list<std::string_view> allowed) const {
        return YamlReader::entries(map, what, allowed, true);
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

    DaemonConfig daemon(const YAML::Node& root, const fs::path& base) const;

    std::vector<net::Revocation> revoked(const YAML::Node& root) const;

    ClusterFile cluster(const YAML::Node& root) const;

    /// `groups:`, each checked by expanding it: the map's groups stand for no names here.
    NodeGroups groups(const YAML::Node& map) const;
};

template <typename F>
auto parse_document(std::string_view yaml_text, const Reader& reader, const char* kind, F&& build) {
    return reader.document(yaml_text, max_text_bytes, "1 MiB", kind, std::forward<F>(build));
}

/// A file's text, refusing more than `limit` bytes. Throws InputError("file: cannot read: why").
std::string read_text(const std::filesystem::path& file, std::size_t limit);

}  // namespace hetcast::detail::config_file
