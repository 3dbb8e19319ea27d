// `hetcast sweep --live`: every algorithm × size pushed on the running cluster, achieved
// next to predicted (lib/src/sweep/live.cpp does the bookkeeping; this file the pushes).
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "daemon_link.hpp"
#include "hetcast/error.hpp"
#include "hetcast/files.hpp"
#include "hetcast/model/units.hpp"
#include "hetcast/runtime/report.hpp"
#include "hetcast/sweep/live.hpp"
#include "hetcast/sweep/sweep.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using nlohmann::json;

namespace hetcast::cli {
namespace {

/// A payload of `bytes` random bytes (the same for every run and algorithm), written once.
fs::path payload(const fs::path& dir, double bytes) {
    const auto n = static_cast<std::uint64_t>(bytes);
    const fs::path p = dir / ("payload-" + std::to_string(n) + ".bin");
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && fs::file_size(p, ec) == n) return p;
    std::mt19937_64 rng(n);
    std::vector<std::uint64_t> block(1 << 16);
    std::string tmp_name = "." + p.filename().string() + ".tmp";
    const fs::path tmp = dir / tmp_name;
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        for (std::uint64_t left = n; left > 0;) {
            for (auto& w : block) w = rng();
            const auto k = std::min<std::uint64_t>(left, block.size() * sizeof(std::uint64_t));
            out.write(reinterpret_cast<const char*>(block.data()), static_cast<std::streamsize>(k));
            left -= k;
        }
        if (!out) throw Error("cannot write " + tmp.string());
    }
    fs::rename(tmp, p);
    return p;
}

}  // namespace

int cmd_sweep_live(const std::vector<std::string>& args) {
    DaemonOptions daemon;
    std::string algos = "auto,flat,binomial,ecef,ecef-la,lcf,flat-tree", sizes = "1MiB,8MiB,32MiB", to, out_dir, dest,
                title;
    int repeat = 3;
    po::options_description opts(
        "hetcast sweep --live: push generated payloads on the running cluster with every algorithm and size,\n"
        "`repeat` times each (interleaved), and compare what each push achieved with what the model predicted\n\n"
        "  hetcast sweep --live -o DIR [--algos auto,flat,...] [--sizes 1MiB,8MiB,32MiB] [--repeat 3]\n"
        "                [--to a,b,c] [--config FILE | --from NODE]\n\n"
        "writes DIR/live.csv (every push), DIR/live-summary.txt and DIR/live.svg (achieved against predicted;\n"
        "needs gnuplot); the payloads are DIR/payload-SIZE.bin, read by the source daemon\n\noptions");
    opts.add_options()("help,h", "show this help")("live", "measure on the running cluster (this mode)")(
        "algos,a", po::value(&algos), "comma-separated algorithms (default auto,flat,binomial,ecef,ecef-la,lcf,flat-tree)")(
        "sizes,s", po::value(&sizes), "comma-separated payload sizes (default 1MiB,8MiB,32MiB)")(
        "repeat,r", po::value(&repeat), "pushes per algorithm and size (default 3)")(
        "to", po::value(&to), "destinations (default: every other member)")(
        "dest", po::value(&dest), "folder under each destination root where the payloads land")(
        "output,o", po::value(&out_dir), "folder for the payloads, the CSV, the summary and the plot (required)")(
        "title", po::value(&title), "plot title");
    add_daemon_options(opts, daemon);
    po::variables_map vm;
    if (parse_options(args, opts, vm)) return 0;
    if (out_dir.empty()) throw InputError("sweep --live: -o DIR is required (payloads, CSV and plot go there)");
    if (repeat < 1 || repeat > 100) throw InputError("--repeat must be between 1 and 100");
    sweep::LiveSettings settings;
    settings.algorithms = split_commas(algos);
    settings.repeat = repeat;
    for (const auto& s : split_commas(sizes)) {
        const double b = parse_bytes(s);
        if (b < 1) throw InputError("--sizes: '" + s + "' is empty");
        settings.sizes.push_back(b);
    }
    if (settings.algorithms.empty()) throw InputError("--algos: no algorithm named");
    if (settings.sizes.empty()) throw InputError("--sizes: no size given");
    const fs::path dir = fs::absolute(out_dir);
    fs::create_directories(dir);
    if (::access(dir.c_str(), W_OK) != 0) throw InputError("-o: '" + dir.string() + "' is not writable");

    const bool tty = ::isatty(STDERR_FILENO) != 0;
    const auto push = [&](const std::string& algo, double size, int) {
        const fs::path file = payload(dir, size);
        auto client = connect_daemon(daemon);
        const json req{{"cmd", "push"}, {"files", {file.string()}}, {"algo", algo}, {"dest", dest},
                       {"model", "nonblocking"}, {"to", split_commas(to)}};
        const json answer = client->call(req, [](const json&) {});
        if (!answer.contains("reports") || answer["reports"].empty()) {
            throw InputError(answer.value("error", std::string("the daemon refused the push")));
        }
        const JobReport r = report_from_json(answer["reports"][0]);
        sweep::LiveResult res{r.algorithm, r.achieved, r.predicted, r.lower_bound, r.ok(), ""};
        for (const auto& o : r.outcomes) {
            if (!o.ok && res.error.empty()) res.error = o.dest + ": " + o.error;
        }
        return res;
    };
    const auto rows = sweep::run_live(settings, push, [&](std::size_t done, std::size_t total, const sweep::LiveRow& row) {
        const std::string line = "sweep --live: " + std::to_string(done) + "/" + std::to_string(total) + " pushes, last " +
                                 row.algorithm + " " + std::to_string(static_cast<std::uint64_t>(row.size)) + " B: " +
                                 (row.result.ok ? std::to_string(row.result.achieved) + " s" : "failed");
        if (tty) {
            std::cerr << "\r\033[K" << line << std::flush;
        } else {
            std::cerr << line << '\n';
        }
    });
    if (tty) std::cerr << "\r\033[K";
    const auto summary = sweep::summarise_live(rows);
    std::ostringstream table;
    sweep::print_live_summary(table, summary);
    std::cout << table.str();
    std::ostringstream csv;
    sweep::write_live_csv(csv, rows);
    write_file_atomically(dir / "live.csv", csv.str());
    write_file_atomically(dir / "live-summary.txt", table.str());
    if (title.empty()) title = "hetcast sweep --live: achieved against predicted, " + std::to_string(repeat) + " runs each";
    const bool svg = sweep::render_svg(dir / "live.svg", sweep::live_gnuplot_script(rows, title, dir / "live.svg"));
    std::cout << "\nwrote " << (dir / "live.csv").string() << ", live-summary.txt and " << (svg ? "live.svg" : "live.gp")
              << '\n';
    bool all_ok = true;
    for (const auto& r : rows) all_ok = all_ok && r.result.ok;
    return all_ok ? 0 : 1;
}

}  // namespace hetcast::cli
