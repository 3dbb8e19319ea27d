#include "hetcast/sweep/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <iterator>
#include <limits>
#include <mutex>
#include <thread>

#include "hetcast/error.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "patterns.hpp"
#include "settings.hpp"

namespace hetcast::sweep {
namespace {

using detail::max_nodes;
using detail::Settings;

std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
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
    PlanOptions options;
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
    p.options = c.options;
    if (!c.options.degrees.empty()) throw InputError("--degree: one number for every cluster in a sweep");
    if (c.options.degree == 0 || c.options.matching == 0) throw InputError("--degree and --matching must be at least 1");
    const auto runs = [&](std::string_view name) {
        return std::any_of(p.runners.begin(), p.runners.end(), [&](const Runner& r) { return r.single && r.name == name; });
    };
    if (runs("lcf-degree") || runs("eco")) p.parameters += " degree=" + std::to_string(c.options.degree);
    if (runs("lcf-matching")) p.parameters += " matching=" + std::to_string(c.options.matching);
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
                                   ExecModel model, LocalStart start, const PlanOptions& options) {
    if (r.pattern) return simulate(net, r.pattern->plan(net, msgs, model), model).completion;
    if (msgs.size() != 1) throw InputError("'" + r.name + "' plans a single source only");
    const Message& m = msgs.front();
    const PlanRequest req = make_request(net, m.source, m.dests, m.size, model, options);
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
            const auto c = run_instance(r, sc.net, msgs, p.settings.model, p.settings.local_start, p.options);
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

std::vector<std::string> pattern_algorithm_names() {
    std::vector<std::string> out;
    for (const auto& p : detail::pattern_planners()) out.push_back(p.name);
    return out;
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
