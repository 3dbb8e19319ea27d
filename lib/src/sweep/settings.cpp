// The sweep's generators, their parameters and the range overrides (--latency, --gap, ...).
#include <algorithm>
#include <charconv>
#include <cmath>

#include "hetcast/error.hpp"
#include "hetcast/model/units.hpp"
#include "settings.hpp"

namespace hetcast::sweep {
namespace {

using detail::max_nodes;

// Generators by name; the order is the one --help lists.
const std::vector<GeneratorInfo> generator_table = {
    {"bhat", "Bhat fig. 4: latency 10 us-1 ms, bandwidth 10 kB/s-200 MB/s per pair, 1 MB broadcast from p0",
     "nodes", "2:20:2", ExecModel::blocking, {"latency", "bandwidth", "size"}, false},
    {"bhat-clusters",
     "Bhat fig. 5: two clusters half/half; inside 10 us-1 ms, 10-200 MB/s; across 1-20 ms, 10-50 kB/s; 1 MB",
     "nodes", "4:40:4", ExecModel::blocking,
     {"latency", "bandwidth", "inter-latency", "inter-bandwidth", "size"}, false},
    {"bhat-multicast", "Bhat fig. 6: 1 MB multicast from a random root to n random destinations of a 100-node system",
     "destinations", "5:90:5", ExecModel::blocking, {"latency", "bandwidth", "size", "system"}, false},
    {"wu", "Wu 5.1: single broadcast averaged over every root; overhead classes, 1 Gb/s or 155 Mb/s links", "nodes",
     "8:64:8", ExecModel::nonblocking,
     {"overhead", "per-byte", "classes", "link", "latency", "bandwidth", "messages", "size"}, true},
    {"wu-multicast", "Wu 5.2: multiple multicast, random sources, destinations and message lengths", "nodes",
     "8:64:8", ExecModel::nonblocking,
     {"overhead", "per-byte", "classes", "link", "latency", "bandwidth", "messages", "size", "sources", "dests"},
     true},
    {"grid", "Steffenel 004 Table 2: cluster-level grid, L 1-15 ms, g 100-600 ms, T 20-3000 ms; broadcast from k0",
     "clusters", "2:50:2", ExecModel::blocking, {"latency", "gap", "local", "local-start"}, false},
    {"clusters", "Khuller 2: random cluster sizes, cost 1 inside, C across; broadcast from c0n0", "nodes", "4:64:4",
     ExecModel::blocking, {"clusters", "global"}, false},
};

const std::map<std::string, std::string, std::less<>> override_text = {
    {"latency", "LO:HI seconds per link (inside a cluster for bhat-clusters; L for grid)"},
    {"bandwidth", "LO:HI bytes/s per link (inside a cluster for bhat-clusters)"},
    {"inter-latency", "LO:HI seconds per link across the two clusters (default 1e-3:20e-3)"},
    {"inter-bandwidth", "LO:HI bytes/s per link across the two clusters (default 10e3:50e3)"},
    {"size", "LO:HI message size, e.g. 1MB or 1kB:1MiB, uniform per trial (wu: per message)"},
    {"system", "N nodes of the multicast system (default 100)"},
    {"overhead", "LO:HI seconds, fixed part of send and receive overheads (default 80e-6:400e-6)"},
    {"per-byte", "LO:HI seconds per byte of the overheads (default 1e-10:1e-8)"},
    {"classes", "N overhead classes (default 4)"},
    {"link", "fast (1 Gb/s, default) | slow (155 Mb/s)"},
    {"messages", "small (<= 1 kB) | large (1 or 1.5 MB, default) | hybrid"},
    {"sources", "LO:HI share of the nodes that multicast (default 0.05:0.5)"},
    {"dests", "LO:HI share of the other nodes each source reaches (default 0.1:0.9)"},
    {"gap", "LO:HI seconds, g between clusters (default 100e-3:600e-3)"},
    {"local", "LO:HI seconds, T: broadcast time inside a cluster (default 20e-3:3)"},
    {"local-start", "after-send (default: a cluster broadcasts inside once done sending to others) | receipt"},
    {"clusters", "LO:HI number of clusters (default 2:8, at most n)"},
    {"global", "LO:HI cost C of a transfer across clusters, 1 inside (default 2:20)"},
};

double parse_number(std::string_view text, std::string_view what) {
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v)) {
        throw InputError(std::string(what) + ": '" + std::string(text) + "' is not a number");
    }
    return v;
}

std::size_t parse_count(std::string_view text, std::string_view what) {
    std::size_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
        throw InputError(std::string(what) + ": '" + std::string(text) + "' is not a whole number");
    }
    return v;
}

std::pair<std::string_view, std::string_view> split_colon(std::string_view text) {
    const auto c = text.find(':');
    if (c == std::string_view::npos) return {text, text};
    return {text.substr(0, c), text.substr(c + 1)};
}

Range byte_range(std::string_view text) {
    const auto [lo, hi] = split_colon(text);
    const Range r{parse_bytes(lo), parse_bytes(hi)};
    if (r.lo > r.hi) throw InputError("size: '" + std::string(text) + "' has lo > hi");
    return r;
}

std::string range_text(Range r) {
    return r.lo == r.hi ? format_number(r.lo) : format_number(r.lo) + ":" + format_number(r.hi);
}

const char* mix_name(MessageMix m) {
    switch (m) {
        case MessageMix::small: return "small";
        case MessageMix::large: return "large";
        case MessageMix::hybrid: return "hybrid";
    }
    return "?";
}

Range ordered(Range r, std::string_view key) {
    if (r.lo > r.hi) throw InputError("--" + std::string(key) + ": lo must not exceed hi");
    if (r.lo < 0) throw InputError("--" + std::string(key) + ": must not be negative");
    return r;
}

}  // namespace

namespace detail {

void apply(Settings& s, const GeneratorInfo& g, const std::string& key, const std::string& value) {
    if (std::find(g.overrides.begin(), g.overrides.end(), key) == g.overrides.end()) {
        std::string known;
        for (const auto& k : g.overrides) known += (known.empty() ? "--" : ", --") + k;
        throw InputError("--" + key + " does not apply to generator " + g.name + " (it takes " + known + ")");
    }
    const bool wu = g.name.starts_with("wu");
    if (key == "latency") {
        const Range r = ordered(parse_range(value), key);
        if (wu) s.wu.latency = r;
        else if (g.name == "grid") s.grid.latency = r;
        else if (g.name == "bhat-clusters") s.clustered.intra.latency = r;
        else s.bhat.latency = r;
    } else if (key == "bandwidth") {
        const Range r = ordered(parse_range(value), key);
        if (r.lo <= 0) throw InputError("--bandwidth must be positive");
        if (wu) s.wu.bandwidth = r;
        else if (g.name == "bhat-clusters") s.clustered.intra.bandwidth = r;
        else s.bhat.bandwidth = r;
    } else if (key == "inter-latency") {
        s.clustered.inter.latency = ordered(parse_range(value), key);
    } else if (key == "inter-bandwidth") {
        s.clustered.inter.bandwidth = ordered(parse_range(value), key);
        if (s.clustered.inter.bandwidth.lo <= 0) throw InputError("--inter-bandwidth must be positive");
    } else if (key == "size") {
        const Range r = byte_range(value);
        if (wu) {
            s.pattern.messages.mix = MessageMix::small;
            s.pattern.messages.small = r;
        } else {
            s.size = r;
        }
    } else if (key == "system") {
        s.system = parse_count(value, "--system");
        if (s.system < 2 || s.system > max_nodes) throw InputError("--system must be in 2..10000");
    } else if (key == "overhead") {
        s.wu.fixed = ordered(parse_range(value), key);
    } else if (key == "per-byte") {
        s.wu.per_byte = ordered(parse_range(value), key);
    } else if (key == "classes") {
        s.wu.classes = parse_count(value, "--classes");
        if (s.wu.classes == 0 || s.wu.classes > max_nodes) throw InputError("--classes must be in 1..10000");
    } else if (key == "link") {
        if (value != "fast" && value != "slow") throw InputError("--link must be fast or slow");
        s.link = value;
        const double rate = value == "fast" ? wu_fast_link : wu_slow_link;
        s.wu.bandwidth = {rate, rate};
    } else if (key == "messages") {
        if (value == "small") s.pattern.messages.mix = MessageMix::small;
        else if (value == "large") s.pattern.messages.mix = MessageMix::large;
        else if (value == "hybrid") s.pattern.messages.mix = MessageMix::hybrid;
        else throw InputError("--messages must be small, large or hybrid");
    } else if (key == "sources" || key == "dests") {
        const Range r = ordered(parse_range(value), key);
        if (r.hi > 1 || r.lo <= 0) throw InputError("--" + key + " is a share of the nodes: 0 < lo <= hi <= 1");
        (key == "sources" ? s.pattern.sources : s.pattern.dests) = r;
    } else if (key == "gap") {
        s.grid.gap = ordered(parse_range(value), key);
    } else if (key == "local") {
        s.grid.local = ordered(parse_range(value), key);
    } else if (key == "local-start") {
        if (value == "after-send") s.local_start = LocalStart::after_last_send;
        else if (value == "receipt") s.local_start = LocalStart::on_receipt;
        else throw InputError("--local-start must be after-send or receipt");
    } else if (key == "clusters") {
        s.clusters.clusters = ordered(parse_range(value), key);
        if (s.clusters.clusters.lo < 1 || std::ceil(s.clusters.clusters.lo) > std::floor(s.clusters.clusters.hi)) {
            throw InputError("--clusters must hold a whole number of clusters, at least 1");
        }
    } else if (key == "global") {
        s.clusters.global = ordered(parse_range(value), key);
    }
}

std::string parameters_text(const GeneratorInfo& g, const Settings& s) {
    std::string out = "model=" + std::string(to_string(s.model));
    const auto add = [&](const std::string& k, const std::string& v) { out += " " + k + "=" + v; };
    const bool wu = g.name.starts_with("wu");
    const bool clustered = g.name == "bhat-clusters";
    for (const auto& k : g.overrides) {
        if (k == "latency") {
            add(k, range_text(wu ? s.wu.latency
                              : g.name == "grid" ? s.grid.latency
                              : clustered ? s.clustered.intra.latency
                                          : s.bhat.latency));
        }
        if (k == "bandwidth" && !wu) add(k, range_text(clustered ? s.clustered.intra.bandwidth : s.bhat.bandwidth));
        if (k == "inter-latency") add(k, range_text(s.clustered.inter.latency));
        if (k == "inter-bandwidth") add(k, range_text(s.clustered.inter.bandwidth));
        if (k == "size" && !wu) add(k, range_text(s.size));
        if (k == "system") add(k, std::to_string(s.system));
        if (k == "overhead") add(k, range_text(s.wu.fixed));
        if (k == "per-byte") add(k, range_text(s.wu.per_byte));
        if (k == "classes") add(k, std::to_string(s.wu.classes));
        if (k == "bandwidth" && wu) add(k, range_text(s.wu.bandwidth));
        if (k == "messages") {
            const auto& m = s.pattern.messages;
            add(k, m.mix == MessageMix::large ? "large" : std::string(mix_name(m.mix)) + "(" + range_text(m.small) + ")");
        }
        if (k == "sources") add(k, range_text(s.pattern.sources));
        if (k == "dests") add(k, range_text(s.pattern.dests));
        if (k == "gap") add(k, range_text(s.grid.gap));
        if (k == "local") add(k, range_text(s.grid.local));
        if (k == "local-start") add(k, s.local_start == LocalStart::on_receipt ? "receipt" : "after-send");
        if (k == "clusters") add(k, range_text(s.clusters.clusters));
        if (k == "global") add(k, range_text(s.clusters.global));
    }
    return out;
}

}  // namespace detail

const std::vector<GeneratorInfo>& generators() { return generator_table; }

const GeneratorInfo& find_generator(std::string_view name) {
    for (const auto& g : generator_table) {
        if (g.name == name) return g;
    }
    std::string known;
    for (const auto& g : generator_table) known += (known.empty() ? "" : ", ") + g.name;
    throw InputError("unknown generator '" + std::string(name) + "' (known: " + known + ")");
}

std::string override_help(std::string_view key) {
    const auto it = override_text.find(key);
    return it == override_text.end() ? std::string() : it->second;
}

std::vector<std::size_t> NodeRange::values() const {
    std::vector<std::size_t> v;
    for (std::size_t n = first; n <= last; n += step) v.push_back(n);
    return v;
}

NodeRange parse_node_range(std::string_view text) {
    const auto bad = [&](const std::string& why) {
        return InputError("--nodes '" + std::string(text) + "': " + why + " (expected A, A:B or A:B:STEP)");
    };
    std::vector<std::string_view> parts;
    std::string_view rest = text;
    while (true) {
        const auto c = rest.find(':');
        parts.push_back(rest.substr(0, c));
        if (c == std::string_view::npos) break;
        rest.remove_prefix(c + 1);
    }
    if (parts.size() > 3) throw bad("too many fields");
    std::vector<std::size_t> v;
    for (auto part : parts) {
        std::size_t x = 0;
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), x);
        if (part.empty() || ec != std::errc{} || end != part.data() + part.size()) throw bad("not a whole number");
        v.push_back(x);
    }
    NodeRange r{v[0], v.size() > 1 ? v[1] : v[0], v.size() > 2 ? v[2] : 1};
    if (r.first == 0) throw bad("n must be at least 1");
    if (r.first > r.last) throw bad("A must not exceed B");
    if (r.step == 0) throw bad("STEP must be at least 1");
    if (r.last > max_nodes) throw bad("at most 10000");
    return r;
}

Range parse_range(std::string_view text) {
    const auto [lo, hi] = split_colon(text);
    if (hi.find(':') != std::string_view::npos) throw InputError("range '" + std::string(text) + "': expected x or lo:hi");
    const Range r{parse_number(lo, "range"), parse_number(hi, "range")};
    if (r.lo > r.hi) throw InputError("range '" + std::string(text) + "': lo must not exceed hi");
    return r;
}

}  // namespace hetcast::sweep
