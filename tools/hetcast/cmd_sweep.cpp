#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "commands.hpp"
#include "hetcast/error.hpp"
#include "hetcast/files.hpp"
#include "hetcast/sweep/sweep.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace hetcast::cli {
namespace {

const std::vector<std::string> override_keys = {"latency", "bandwidth", "inter-latency", "inter-bandwidth", "size",
                                                "system",  "overhead",  "per-byte",      "classes",         "link",
                                                "messages", "sources",  "dests",         "gap",             "local",
                                                "local-start", "clusters", "global"};

void print_help(const po::options_description& opts) {
    std::cout << opts << "\ngenerators (n is what --nodes counts; default range and model in brackets):\n";
    for (const auto& g : sweep::generators()) {
        std::cout << "  " << g.name << "  [n = " << g.n_means << ", " << g.default_nodes << ", "
                  << to_string(g.default_model) << "]\n      " << g.summary << "\n      takes:";
        for (const auto& k : g.overrides) std::cout << " --" << k;
        std::cout << '\n';
    }
    std::cout << "\nrange overrides (LO:HI, or one value for a fixed parameter):\n";
    for (const auto& k : override_keys) std::printf("  --%-16s %s\n", k.c_str(), sweep::override_help(k).c_str());
    std::cout << "\nsingle-source algorithms (default: all but auto; optimal up to 10 participants, not for grid):\n ";
    for (const auto& a : algorithms()) std::cout << ' ' << a.name;
    const auto patterns = sweep::pattern_algorithm_names();
    std::cout << "\nmulti-source algorithms (wu, wu-multicast; default: all of them; wu also takes single-source\n"
                 "ones, and a name both kinds have, like fef, means the multi-source one there):\n ";
    if (patterns.empty()) std::cout << " none in this build";
    for (const auto& p : patterns) std::cout << ' ' << p;
    std::cout << "\n\nSeeds: trial t at size n uses hash(seed, generator, n, t); results do not depend on --threads.\n"
                 "Hit rate: share of trials in which an algorithm matched the best of all algorithms run\n"
                 "(within a relative 1e-9). wu averages one broadcast from every root per trial.\n";
}

fs::path checked_output(const std::string& file, const char* option) {
    const fs::path p(file);
    if (p.filename().empty()) throw InputError(std::string(option) + ": '" + file + "' names no file");
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        throw InputError(std::string(option) + ": directory '" + dir.string() + "' does not exist");
    }
    if (::access(dir.c_str(), W_OK) != 0) {
        throw InputError(std::string(option) + ": directory '" + dir.string() + "' is not writable");
    }
    return p;
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string name; std::getline(ss, name, ',');) {
        if (!name.empty()) out.push_back(name);
    }
    if (out.empty()) throw InputError("--algos: no algorithm named");
    return out;
}

// A single updating line on stderr: when stderr is a terminal, or once the sweep runs > 1 s.
class ProgressLine {
public:
    explicit ProgressLine(std::string label) : label_(std::move(label)), tty_(::isatty(2) != 0) {}
    ~ProgressLine() { finish(); }
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    void update(std::size_t done, std::size_t total) {
        const double elapsed = seconds_since(start_);
        if (!tty_ && elapsed < 1) return;
        if (shown_ && seconds_since(last_) < (tty_ ? 0.1 : 2.0) && done != total) return;
        last_ = clock::now();
        const double left = done ? elapsed * static_cast<double>(total - done) / static_cast<double>(done) : 0;
        std::fprintf(stderr, "\r%s: %zu/%zu trials (%3.0f%%), %.1f s, ~%.0f s left ", label_.c_str(), done, total,
                     100.0 * static_cast<double>(done) / static_cast<double>(total), elapsed, left);
        std::fflush(stderr);
        shown_ = true;
    }
    void finish() {
        if (shown_) std::fputc('\n', stderr);
        shown_ = false;
    }

private:
    using clock = std::chrono::steady_clock;
    static double seconds_since(clock::time_point t) {
        return std::chrono::duration<double>(clock::now() - t).count();
    }
    std::string label_;
    bool tty_;
    bool shown_ = false;
    clock::time_point start_ = clock::now();
    clock::time_point last_ = start_;
};

}  // namespace

int cmd_sweep(const std::vector<std::string>& args) {
    if (std::find(args.begin(), args.end(), "--live") != args.end()) return cmd_sweep_live(args);
    std::string generator = "bhat", nodes, algos, model, csv, summary_csv, plot, title, degree, matching;
    std::size_t trials = 100, threads = 0;
    std::uint64_t seed = 1;
    po::options_description opts(
        "hetcast sweep: plan and simulate random networks like the papers' figures; a summary per n and\n"
        "algorithm on stdout, progress on stderr\n\noptions");
    opts.add_options()
        ("help,h", "show this help")
        ("generator,g", po::value(&generator), "bhat | bhat-clusters | bhat-multicast | wu | wu-multicast | grid | clusters (default bhat)")
        ("nodes,n", po::value(&nodes), "A:B[:STEP], the n values (default: the generator's)")
        ("trials,t", po::value(&trials), "random trials per n (default 100)")
        ("algos,a", po::value(&algos), "comma-separated algorithms (default: every one that applies)")
        ("seed", po::value(&seed), "base seed (default 1)")
        ("threads,j", po::value(&threads), "worker threads (default: the hardware's)")
        ("model,m", po::value(&model), "blocking | nonblocking | postal (default: the generator's)")
        ("degree", po::value(&degree), "N: lcf-degree's d_i for every cluster and eco's k (default 2)")
        ("matching", po::value(&matching), "B: lcf-matching's inter-cluster transfers at a time (default 1)")
        ("csv", po::value(&csv), "write every trial's rows to FILE")
        ("summary-csv", po::value(&summary_csv), "write the summary (per n and algorithm) to FILE")
        ("plot", po::value(&plot), "write FILE.svg (and its gnuplot script FILE.gp): completion against n")
        ("title", po::value(&title), "plot title")
        ("hit-rate", "add a hit-rate panel to the plot (always for grid)")
        ("logy", "logarithmic completion axis");
    po::options_description ranges("range overrides");
    for (const auto& k : override_keys) ranges.add_options()(k.c_str(), po::value<std::string>(), sweep::override_help(k).c_str());
    po::options_description all;
    all.add(opts).add(ranges);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).run(), vm);
    if (vm.count("help")) {
        print_help(opts);
        return 0;
    }
    po::notify(vm);

    sweep::SweepConfig config;
    config.generator = generator;
    const auto& gen = sweep::find_generator(generator);
    if (!nodes.empty()) config.nodes = sweep::parse_node_range(nodes);
    config.trials = trials;
    if (vm.count("algos")) config.algos = split_list(algos);
    config.seed = seed;
    config.threads = threads;
    if (!model.empty()) config.model = parse_exec_model(model);
    if (vm.count("degree")) {
        const auto d = parse_counts(degree, "--degree");
        if (d.size() != 1) throw InputError("--degree: one number for every cluster in a sweep");
        config.options.degree = d.front();
    }
    if (vm.count("matching")) {
        const auto b = parse_counts(matching, "--matching");
        if (b.size() != 1) throw InputError("--matching: one number B");
        config.options.matching = b.front();
    }
    for (const auto& k : override_keys) {
        if (vm.count(k)) config.overrides[k] = vm[k].as<std::string>();
    }
    std::optional<fs::path> csv_path, summary_path, svg_path;
    if (!csv.empty()) csv_path = checked_output(csv, "--csv");
    if (!summary_csv.empty()) summary_path = checked_output(summary_csv, "--summary-csv");
    if (!plot.empty()) {
        svg_path = checked_output(plot, "--plot");
        if (svg_path->extension() != ".svg") throw InputError("--plot: the file must end in .svg");
    }
    const std::string parameters = sweep::describe(config);

    std::vector<sweep::Row> rows;
    {
        ProgressLine progress("sweep " + generator);
        rows = sweep::run_sweep(config, [&](std::size_t done, std::size_t total) { progress.update(done, total); });
    }
    const auto summary = sweep::summarise(rows);
    std::cout << "sweep " << generator << ": " << trials << " trials per n, seed " << seed << ", " << parameters
              << "\n\n";
    sweep::print_summary(std::cout, summary);

    if (csv_path) {
        std::ostringstream out;
        sweep::write_csv(out, rows);
        write_file_atomically(*csv_path, out.str());
    }
    if (summary_path) {
        std::ostringstream out;
        sweep::write_summary_csv(out, summary);
        write_file_atomically(*summary_path, out.str());
    }
    if (svg_path) {
        sweep::PlotOptions po;
        po.svg = *svg_path;
        po.title = title;
        if (po.title.empty()) {
            po.title = "hetcast sweep --generator ";
            po.title += generator;
            po.title += ": mean of " + std::to_string(trials) + " trials per point";
        }
        po.note = parameters;
        po.x_label = gen.n_means;
        po.hit_rate = generator == "grid" || vm.count("hit-rate");
        po.log_y = vm.count("logy") != 0;
        sweep::render_svg(*svg_path, sweep::gnuplot_script(summary, po));
    }
    return 0;
}

}  // namespace hetcast::cli
