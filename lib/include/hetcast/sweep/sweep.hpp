#pragma once
/// Simulation sweeps like the papers' figures: for every n of a range and every trial, a
/// random network (and request) from a generator, planned by each algorithm and simulated;
/// then per-n means, ratios to the lower bound and hit rates (paper 004 §6).
///
/// Trial t at size n draws everything from trial_seed(seed, generator, n, t), and the rows
/// come back in (n, trial, algorithm) order, so a sweep is bit for bit the same whatever
/// the thread count.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hetcast/model/generators.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast::sweep {

/// A generator: what it draws, what n counts, and the range overrides it accepts.
struct GeneratorInfo {
    std::string name;
    std::string summary;
    std::string n_means;  ///< "nodes", "clusters", "destinations", …
    std::string default_nodes;
    ExecModel default_model = ExecModel::blocking;
    std::vector<std::string> overrides;  ///< keys of SweepConfig::overrides it takes
    bool multi_source = false;           ///< runs the pattern (multiple-multicast) algorithms
};

/// bhat, bhat-clusters, bhat-multicast, wu, wu-multicast, grid, clusters.
[[nodiscard]] const std::vector<GeneratorInfo>& generators();
/// Throws InputError("unknown generator 'x' (known: ...)").
[[nodiscard]] const GeneratorInfo& find_generator(std::string_view name);
/// What an override key means, for --help.
[[nodiscard]] std::string override_help(std::string_view key);

/// The multi-source (pattern) algorithms this build has; empty when sched/wu.hpp is missing.
[[nodiscard]] std::vector<std::string> pattern_algorithm_names();

struct NodeRange {
    std::size_t first = 0;
    std::size_t last = 0;
    std::size_t step = 1;
    [[nodiscard]] std::vector<std::size_t> values() const;
};
/// "A", "A:B" or "A:B:STEP", 1 ≤ A ≤ B, STEP ≥ 1. Throws InputError otherwise.
[[nodiscard]] NodeRange parse_node_range(std::string_view text);
/// "x" or "lo:hi" of plain numbers, lo ≤ hi. Throws InputError otherwise.
[[nodiscard]] Range parse_range(std::string_view text);

struct SweepConfig {
    std::string generator = "bhat";
    std::optional<NodeRange> nodes;  ///< default: the generator's
    std::size_t trials = 100;
    std::vector<std::string> algos;  ///< empty: every algorithm that applies (no `auto`)
    std::uint64_t seed = 1;
    std::size_t threads = 0;  ///< 0: std::thread::hardware_concurrency()
    std::map<std::string, std::string> overrides;  ///< e.g. {"latency", "10e-6:1e-3"}
    std::optional<ExecModel> model;                ///< default: the generator's
    /// lcf-degree's d_i (one for every cluster), eco's k, lcf-matching's B. A per-cluster
    /// `degrees` list is refused: the number of clusters varies between trials.
    PlanOptions options;
};

/// One trial of one algorithm. `completion_time` and `lower_bound` are means over the
/// trial's instances (wu: one broadcast from every root; otherwise a single request).
struct Row {
    std::string generator;
    std::string parameters;
    std::size_t n = 0;
    std::size_t trial = 0;
    std::string algorithm;
    double completion_time = 0;
    double lower_bound = 0;
    std::optional<double> optimal;  ///< `optimal`'s completion, when it ran on this trial
    friend bool operator==(const Row&, const Row&) = default;
};

/// Called from run_sweep's calling thread, every ~100 ms and once at the end.
using Progress = std::function<void(std::size_t done, std::size_t total)>;

/// Validates the whole config first (InputError), then runs every trial on a thread pool.
/// An algorithm that does not apply to a trial (e.g. `optimal` above 10 participants)
/// gives no row for it.
[[nodiscard]] std::vector<Row> run_sweep(const SweepConfig& config, const Progress& progress = {});

/// The effective parameters of a config, as the rows' `parameters` column holds them.
[[nodiscard]] std::string describe(const SweepConfig& config);

/// Per n and algorithm, in order of n, then of first appearance.
struct Summary {
    std::size_t n = 0;
    std::string algorithm;
    std::size_t trials = 0;
    double mean_completion = 0;
    double mean_lower_bound = 0;
    double mean_ratio = 0;  ///< mean of completion / lower bound (trials with a zero bound skipped)
    /// Share of its trials in which the algorithm matched, within a relative 1e-9, the
    /// least completion of every algorithm run on that trial (paper 004's hit rate).
    double hit_rate = 0;
    std::optional<double> mean_ratio_optimal;  ///< over the trials where `optimal` ran
};
[[nodiscard]] std::vector<Summary> summarise(const std::vector<Row>& rows);

/// The trial seed: a hash of the four, stable across platforms.
[[nodiscard]] std::uint64_t trial_seed(std::uint64_t seed, std::string_view generator, std::size_t n,
                                       std::size_t trial);

/// When a cluster-level node starts its cluster's local broadcast.
enum class LocalStart {
    after_last_send,  ///< once it holds the message and made its last inter-cluster send (004 §3)
    on_receipt,       ///< as soon as it holds the message, overlapping its inter-cluster sends
};

/// The completion time when each node stands for a cluster that broadcasts internally for
/// net.local_broadcast()[k], starting as `start` says; the timeline's completion when the
/// network gives no local broadcast times.
[[nodiscard]] double completion_with_local_broadcast(const Network& net, const Timeline& tl, NodeId root,
                                                     const std::vector<NodeId>& dests,
                                                     LocalStart start = LocalStart::after_last_send);
/// Bhat's bound, plus each destination's local broadcast time when the network gives them.
[[nodiscard]] double single_source_lower_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests,
                                               double size);

// Output.
[[nodiscard]] std::string csv_field(std::string_view text);
/// Shortest text that reads back as the same double.
[[nodiscard]] std::string format_number(double v);
/// generator,parameters,n,trial,algorithm,completion_time,lower_bound,optimal
void write_csv(std::ostream& out, const std::vector<Row>& rows);
/// n,algorithm,trials,mean_completion,mean_lower_bound,mean_ratio,hit_rate,mean_ratio_optimal
void write_summary_csv(std::ostream& out, const std::vector<Summary>& summary);
/// A readable table, one line per n and algorithm.
void print_summary(std::ostream& out, const std::vector<Summary>& summary);

struct PlotOptions {
    std::string title;
    std::string note;  ///< a small line at the foot of the plot (the parameters)
    std::string x_label = "nodes";
    std::filesystem::path svg;  ///< the default output; `gnuplot -e "outfile='x'"` overrides it
    bool hit_rate = false;      ///< a second panel with the hit rate per algorithm
    bool log_y = false;
};
/// A self-contained gnuplot script (data inline): mean completion against n per
/// algorithm, and the mean lower bound dashed.
[[nodiscard]] std::string gnuplot_script(const std::vector<Summary>& summary, const PlotOptions& options);

/// Writes `script` as the .gp next to `svg` and runs gnuplot on it, which writes `svg`
/// (through a temporary, renamed into place). Without gnuplot it says so on stderr (how to
/// install it, and the command to run later) and returns false. Throws Error when gnuplot fails.
bool render_svg(const std::filesystem::path& svg, const std::string& script);

}  // namespace hetcast::sweep
