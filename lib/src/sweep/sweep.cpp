#include "hetcast/sweep/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <iterator>
#include <limits>
#include <mutex>
#include <thread>

#include "hetcast/error.hpp"
#include "hetcast/model/units.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "patterns.hpp"

namespace hetcast::sweep {
namespace {

constexpr std::size_t max_nodes = 10000;

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

std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

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

// Every generator's parameters with their defaults; overrides replace some.
struct Settings {
    ExecModel model = ExecModel::blocking;
    BhatParams bhat;            // fig. 4 and 6
    BhatClusterParams clustered;  // fig. 5
    Range size{1e6, 1e6};
    std::size_t system = 100;
    WuParams wu;
    std::string link = "fast";
    PatternParams pattern;
    GridParams grid;
    LocalStart local_start = LocalStart::after_last_send;
    ClusterParams clusters;
};

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

// One algorithm as the sweep runs it: a single-source planner or a pattern planner.
struct Runner {
    std::string name;
    const Algorithm* single = nullptr;
    const detail::PatternPlanner* pattern = nullptr;
};

std::vector<Runner> resolve_runners(const GeneratorInfo& g, const std::vector<std::string>& names) {
    const auto& patterns = detail::pattern_planners();
    std::vector<Runner> out;
    if (names.empty()) {
        if (g.multi_source) {
            if (patterns.empty()) {
                throw InputError("generator " + g.name +
                                 " runs the multi-source algorithms of sched/wu.hpp (fef, ecf, wr, wrp), which this "
                                 "build lacks" + (g.name == "wu" ? "; name single-source ones with --algos" : ""));
            }
            for (const auto& p : patterns) out.push_back({p.name, nullptr, &p});
            return out;
        }
        for (const auto& a : algorithms()) {
            if (a.name == "auto" || (a.name == "optimal" && g.name == "grid")) continue;
            out.push_back({a.name, &a, nullptr});
        }
        return out;
    }
    for (const auto& name : names) {
        if (std::any_of(out.begin(), out.end(), [&](const Runner& r) { return r.name == name; })) {
            throw InputError("algorithm '" + name + "' is listed twice");
        }
        if (g.multi_source) {
            const auto p = std::find_if(patterns.begin(), patterns.end(), [&](const auto& x) { return x.name == name; });
            if (p != patterns.end()) {
                out.push_back({name, nullptr, &*p});
                continue;
            }
            if (g.name != "wu") {
                std::string known;
                for (const auto& x : patterns) known += (known.empty() ? "" : ", ") + x.name;
                throw InputError("generator " + g.name + " needs multi-source algorithms; '" + name +
                                 "' is not one (known: " + (known.empty() ? "none in this build" : known) + ")");
            }
        }
        out.push_back({name, &find_algorithm(name), nullptr});
    }
    return out;
}

struct Prepared {
    const GeneratorInfo* gen = nullptr;
    Settings settings;
    std::vector<std::size_t> ns;
    std::vector<Runner> runners;
    std::string parameters;
    std::size_t threads = 1;
};

Prepared prepare(const SweepConfig& c) {
    Prepared p;
    p.gen = &find_generator(c.generator);
    const GeneratorInfo& g = *p.gen;
    p.settings.model = c.model.value_or(g.default_model);
    if (c.overrides.count("link") && c.overrides.count("bandwidth")) {
        throw InputError("--link and --bandwidth both set the link bandwidth; give one");
    }
    for (const auto& [key, value] : c.overrides) apply(p.settings, g, key, value);
    p.ns = c.nodes.value_or(parse_node_range(g.default_nodes)).values();
    if (c.trials == 0) throw InputError("--trials must be at least 1");
    if (c.trials > 100'000'000) throw InputError("--trials must be at most 100000000");
    const std::size_t first = p.ns.front(), last = p.ns.back();
    if (last > max_nodes) throw InputError("--nodes: at most 10000");
    if (g.name == "wu-multicast" && first < 2) throw InputError("--nodes: a multiple multicast needs at least 2 nodes");
    if (g.name == "bhat-multicast" && last >= p.settings.system) {
        throw InputError("--nodes: at most " + std::to_string(p.settings.system - 1) + " destinations in a " +
                         std::to_string(p.settings.system) + "-node system");
    }
    p.runners = resolve_runners(g, c.algos);
    p.parameters = parameters_text(g, p.settings);
    p.threads = c.threads ? c.threads : std::max(1u, std::thread::hardware_concurrency());
    if (c.threads > 1024) throw InputError("--threads must be at most 1024");
    return p;
}

// A trial's network and the requests whose results it averages.
struct Scenario {
    Network net;
    std::vector<std::vector<Message>> instances;
};

std::vector<NodeId> all_but(std::size_t n, NodeId root) {
    std::vector<NodeId> d;
    for (NodeId i = 0; i < n; ++i) {
        if (i != root) d.push_back(i);
    }
    return d;
}

Scenario make_scenario(const Prepared& p, std::size_t n, std::uint64_t seed) {
    const Settings& s = p.settings;
    const std::uint64_t net_seed = mix(seed ^ 1), req_seed = mix(seed ^ 2);
    Rng rng(req_seed);
    const auto broadcast = [&](Network net, double size) {
        const std::size_t k = net.size();
        return Scenario{std::move(net), {{Message{0, size, all_but(k, 0)}}}};
    };
    const std::string& g = p.gen->name;
    if (g == "bhat") return broadcast(random_bhat(n, net_seed, s.bhat), rng.uniform(s.size));
    if (g == "bhat-clusters") return broadcast(random_bhat_clusters(n, net_seed, s.clustered), rng.uniform(s.size));
    if (g == "grid") return broadcast(random_grid(n, net_seed, s.grid), 0.0);
    if (g == "clusters") return broadcast(random_clusters(n, net_seed, s.clusters), 0.0);
    if (g == "bhat-multicast") {
        const double size = rng.uniform(s.size);
        const auto root = static_cast<NodeId>(rng.below(s.system));
        auto dests = rng.sample(s.system, n, root);
        return Scenario{random_bhat(s.system, net_seed, s.bhat), {{Message{root, size, std::move(dests)}}}};
    }
    Network net = random_wu(n, net_seed, s.wu);
    if (g == "wu-multicast") return Scenario{std::move(net), {random_pattern(n, req_seed, s.pattern)}};
    const double size = random_message_size(rng, s.pattern.messages);
    Scenario sc{std::move(net), {}};
    for (NodeId r = 0; r < n; ++r) sc.instances.push_back({Message{r, size, all_but(n, r)}});
    return sc;
}

std::optional<double> run_instance(const Runner& r, const Network& net, const std::vector<Message>& msgs,
                                   ExecModel model, LocalStart start) {
    if (r.pattern) return simulate(net, r.pattern->plan(net, msgs, model), model).completion;
    if (msgs.size() != 1) throw InputError("'" + r.name + "' plans a single source only");
    const Message& m = msgs.front();
    const PlanRequest req = make_request(net, m.source, m.dests, m.size, model);
    if (r.single->applies && !r.single->applies(net, req)) return std::nullopt;
    return completion_with_local_broadcast(net, simulate(net, r.single->plan(net, req), model), m.source, req.dests,
                                           start);
}

double instance_lower_bound(const Prepared& p, const Network& net, const std::vector<Message>& msgs) {
    if (p.gen->multi_source) {
        if (auto b = detail::pattern_lower_bound(net, msgs, p.settings.model)) return *b;
    }
    double lb = 0;
    for (const auto& m : msgs) lb = std::max(lb, single_source_lower_bound(net, m.source, m.dests, m.size));
    return lb;
}

std::vector<Row> run_trial(const Prepared& p, std::uint64_t seed, std::size_t n, std::size_t trial) {
    const Scenario sc = make_scenario(p, n, trial_seed(seed, p.gen->name, n, trial));
    const auto count = static_cast<double>(sc.instances.size());
    double lb = 0;
    for (const auto& msgs : sc.instances) lb += instance_lower_bound(p, sc.net, msgs);
    std::vector<Row> rows;
    std::optional<double> optimal;
    for (const auto& r : p.runners) {
        double sum = 0;
        bool applies = true;
        for (const auto& msgs : sc.instances) {
            const auto c = run_instance(r, sc.net, msgs, p.settings.model, p.settings.local_start);
            if (!c) {
                applies = false;
                break;
            }
            sum += *c;
        }
        if (!applies) continue;
        rows.push_back(Row{p.gen->name, p.parameters, n, trial, r.name, sum / count, lb / count, std::nullopt});
        if (r.name == "optimal") optimal = rows.back().completion_time;
    }
    for (auto& row : rows) row.optimal = optimal;
    return rows;
}

}  // namespace

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

std::vector<std::string> pattern_algorithm_names() {
    std::vector<std::string> out;
    for (const auto& p : detail::pattern_planners()) out.push_back(p.name);
    return out;
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

std::string describe(const SweepConfig& config) { return prepare(config).parameters; }

std::uint64_t trial_seed(std::uint64_t seed, std::string_view generator, std::size_t n, std::size_t trial) {
    std::uint64_t fnv = 0xcbf29ce484222325ULL;
    for (unsigned char ch : generator) fnv = (fnv ^ ch) * 0x100000001b3ULL;
    std::uint64_t h = mix(seed);
    h = mix(h ^ fnv);
    h = mix(h ^ static_cast<std::uint64_t>(n));
    return mix(h ^ static_cast<std::uint64_t>(trial));
}

double completion_with_local_broadcast(const Network& net, const Timeline& tl, NodeId root,
                                       const std::vector<NodeId>& dests, LocalStart start) {
    const auto& t = net.local_broadcast();
    if (t.empty()) return tl.completion;
    std::vector<double> done(net.size(), 0.0);
    for (const auto& x : tl.transfers) {
        if (start == LocalStart::after_last_send) done[x.from] = std::max(done[x.from], x.sender_free);
        done[x.to] = std::max(done[x.to], x.complete);
    }
    double out = done[root] + t[root];
    for (NodeId d : dests) out = std::max(out, done[d] + t[d]);
    return out;
}

double single_source_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests, double size) {
    const auto& t = net.local_broadcast();
    if (t.empty()) return bhat_lower_bound(net, root, dests, size);
    const auto reach = earliest_reach_times(net, root, size);
    double lb = t[root];
    for (NodeId d : dests) lb = std::max(lb, reach[d] + t[d]);
    return lb;
}

std::vector<Row> run_sweep(const SweepConfig& config, const Progress& progress) {
    const Prepared p = prepare(config);
    const std::size_t total = p.ns.size() * config.trials;
    std::vector<std::vector<Row>> results(total);
    std::atomic<std::size_t> next{0}, done{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex m;
    std::condition_variable cv;
    const auto worker = [&] {
        while (!failed) {
            const std::size_t i = next++;
            if (i >= total) break;
            try {
                results[i] = run_trial(p, config.seed, p.ns[i / config.trials], i % config.trials);
            } catch (...) {
                const std::lock_guard lock(m);
                if (!error) error = std::current_exception();
                failed = true;
            }
            ++done;
            cv.notify_one();
        }
        cv.notify_one();
    };
    {
        std::vector<std::jthread> pool;
        for (std::size_t k = 0; k < std::min(p.threads, total); ++k) pool.emplace_back(worker);
        std::unique_lock lock(m);
        while (done < total && !failed) {
            cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return done == total || failed; });
            if (progress && !failed) {
                lock.unlock();
                progress(done, total);
                lock.lock();
            }
        }
    }
    if (error) std::rethrow_exception(error);
    std::vector<Row> rows;
    for (auto& r : results) std::move(r.begin(), r.end(), std::back_inserter(rows));
    return rows;
}

std::vector<Summary> summarise(const std::vector<Row>& rows) {
    std::map<std::pair<std::size_t, std::size_t>, double> best;
    std::vector<std::string> order;
    for (const auto& r : rows) {
        const auto key = std::pair{r.n, r.trial};
        const auto it = best.find(key);
        if (it == best.end() || r.completion_time < it->second) best[key] = r.completion_time;
        if (std::find(order.begin(), order.end(), r.algorithm) == order.end()) order.push_back(r.algorithm);
    }
    struct Acc {
        std::size_t trials = 0, hits = 0, ratios = 0, optimal = 0;
        double completion = 0, bound = 0, ratio = 0, ratio_optimal = 0;
    };
    std::map<std::pair<std::size_t, std::size_t>, Acc> acc;  // (n, algorithm index)
    for (const auto& r : rows) {
        const auto a = static_cast<std::size_t>(std::find(order.begin(), order.end(), r.algorithm) - order.begin());
        Acc& x = acc[{r.n, a}];
        ++x.trials;
        x.completion += r.completion_time;
        x.bound += r.lower_bound;
        if (r.lower_bound > 0) {
            ++x.ratios;
            x.ratio += r.completion_time / r.lower_bound;
        }
        if (r.optimal && *r.optimal > 0) {
            ++x.optimal;
            x.ratio_optimal += r.completion_time / *r.optimal;
        }
        if (r.completion_time <= best.at({r.n, r.trial}) * (1 + 1e-9)) ++x.hits;
    }
    std::vector<Summary> out;
    for (const auto& [key, x] : acc) {
        const auto t = static_cast<double>(x.trials);
        Summary s{key.first, order[key.second], x.trials, x.completion / t, x.bound / t,
                  x.ratios ? x.ratio / static_cast<double>(x.ratios) : std::numeric_limits<double>::quiet_NaN(),
                  static_cast<double>(x.hits) / t, std::nullopt};
        if (x.optimal) s.mean_ratio_optimal = x.ratio_optimal / static_cast<double>(x.optimal);
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace hetcast::sweep
