// Sweep output: CSV, the summary table and gnuplot scripts.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>

#include "hetcast/error.hpp"
#include "hetcast/files.hpp"
#include "hetcast/report/plan_report.hpp"
#include "hetcast/sweep/sweep.hpp"

namespace hetcast::sweep {
namespace {

std::string optional_number(std::optional<double> v) { return v ? format_number(*v) : std::string(); }

// A single-quoted gnuplot string: '' stands for a quote.
std::string gp_quote(std::string_view s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

std::string gp_number(double v) { return std::isfinite(v) ? format_number(v) : "NaN"; }

struct Table {
    std::vector<std::size_t> ns;
    std::vector<std::string> algos;
    const Summary* at(std::size_t n, const std::string& algo) const {
        for (const auto* s : cells) {
            if (s->n == n && s->algorithm == algo) return s;
        }
        return nullptr;
    }
    std::vector<const Summary*> cells;
};

Table tabulate(const std::vector<Summary>& summary) {
    Table t;
    for (const auto& s : summary) {
        if (std::find(t.ns.begin(), t.ns.end(), s.n) == t.ns.end()) t.ns.push_back(s.n);
        if (std::find(t.algos.begin(), t.algos.end(), s.algorithm) == t.algos.end()) t.algos.push_back(s.algorithm);
        t.cells.push_back(&s);
    }
    std::sort(t.ns.begin(), t.ns.end());
    return t;
}

// Column headers: quoted, so gnuplot reads names with dashes as one field.
std::string header(const char* first, const std::vector<std::string>& names) {
    std::string h = first;
    for (const auto& a : names) h += " \"" + a + "\"";
    return h + "\n";
}

}  // namespace

std::string csv_field(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
    std::string out = "\"";
    for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string format_number(double v) {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc{} ? std::string(buf, end) : std::string("nan");
}

void write_csv(std::ostream& out, const std::vector<Row>& rows) {
    out << "generator,parameters,n,trial,algorithm,completion_time,lower_bound,optimal\n";
    for (const auto& r : rows) {
        out << csv_field(r.generator) << ',' << csv_field(r.parameters) << ',' << r.n << ',' << r.trial << ','
            << csv_field(r.algorithm) << ',' << format_number(r.completion_time) << ','
            << format_number(r.lower_bound) << ',' << optional_number(r.optimal) << '\n';
    }
}

void write_summary_csv(std::ostream& out, const std::vector<Summary>& summary) {
    out << "n,algorithm,trials,mean_completion,mean_lower_bound,mean_ratio,hit_rate,mean_ratio_optimal\n";
    for (const auto& s : summary) {
        out << s.n << ',' << csv_field(s.algorithm) << ',' << s.trials << ',' << format_number(s.mean_completion)
            << ',' << format_number(s.mean_lower_bound) << ','
            << (std::isfinite(s.mean_ratio) ? format_number(s.mean_ratio) : "") << ','
            << format_number(s.hit_rate) << ',' << optional_number(s.mean_ratio_optimal) << '\n';
    }
}

void print_summary(std::ostream& out, const std::vector<Summary>& summary) {
    char line[256];
    std::snprintf(line, sizeof line, "%6s  %-18s %7s %16s %16s %8s %10s %8s\n", "n", "algorithm", "trials",
                  "mean completion", "mean bound", "x bound", "x optimal", "hit rate");
    out << line;
    std::size_t last_n = 0;
    for (const auto& s : summary) {
        if (last_n != 0 && s.n != last_n) out << '\n';
        last_n = s.n;
        char ratio[32] = "-", opt[32] = "-";
        if (std::isfinite(s.mean_ratio)) std::snprintf(ratio, sizeof ratio, "%.3f", s.mean_ratio);
        if (s.mean_ratio_optimal) std::snprintf(opt, sizeof opt, "%.3f", *s.mean_ratio_optimal);
        std::snprintf(line, sizeof line, "%6zu  %-18s %7zu %16s %16s %8s %10s %7.1f%%\n", s.n, s.algorithm.c_str(),
                      s.trials, format_seconds(s.mean_completion).c_str(), format_seconds(s.mean_lower_bound).c_str(),
                      ratio, opt, 100 * s.hit_rate);
        out << line;
    }
}

std::string gnuplot_script(const std::vector<Summary>& summary, const PlotOptions& o) {
    const Table t = tabulate(summary);
    double top = 0;
    for (const auto* s : t.cells) top = std::max(top, s->mean_completion);
    const bool ms = top < 1;
    const double scale = ms ? 1e3 : 1;
    std::ostringstream gp;
    gp << "# Written by hetcast sweep. Run: gnuplot " << o.svg.stem().string() << ".gp\n"
       << "if (!exists(\"outfile\")) outfile = " << gp_quote(o.svg.string()) << "\n"
       << "set terminal svg size 960," << (o.hit_rate ? 900 : 560)
       << " dynamic noenhanced font 'Helvetica,13' background rgb 'white'\n"
       << "set output outfile\n"
       << "set key outside right top autotitle columnheader\n"
       << "set grid\n"
       << "set xlabel " << gp_quote(o.x_label) << "\n";
    // Matplotlib's tab10, so neighbouring lines stay apart.
    const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                             "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    for (int i = 0; i < 10; ++i) {
        gp << "set linetype " << i + 1 << " linecolor rgb '" << colours[i] << "' linewidth 1.5 pointtype " << i + 1
           << "\n";
    }
    gp << "set linetype cycle 10\n";
    if (!o.note.empty()) {
        gp << "set bmargin 5\n"
           << "set label 99 " << gp_quote(o.note) << " at screen 0.01,0.015 font ',10'\n";
    }
    gp << "$completion << EOD\n" << header("n \"lower bound\"", t.algos);
    for (std::size_t n : t.ns) {
        double bound = std::numeric_limits<double>::quiet_NaN();
        std::size_t most = 0;
        std::string cols;
        for (const auto& a : t.algos) {
            const Summary* s = t.at(n, a);
            cols += ' ';
            cols += s ? gp_number(scale * s->mean_completion) : std::string("NaN");
            if (s && s->trials > most) {
                most = s->trials;
                bound = scale * s->mean_lower_bound;
            }
        }
        gp << n << ' ' << gp_number(bound) << cols << '\n';
    }
    gp << "EOD\n";
    if (o.hit_rate) {
        gp << "$hits << EOD\n" << header("n", t.algos);
        for (std::size_t n : t.ns) {
            gp << n;
            for (const auto& a : t.algos) {
                const Summary* s = t.at(n, a);
                gp << ' ' << (s ? gp_number(100 * s->hit_rate) : std::string("NaN"));
            }
            gp << '\n';
        }
        gp << "EOD\n"
           << "set multiplot layout 2,1\n";
    }
    const std::size_t k = t.algos.size() + 2;
    gp << "set title " << gp_quote(o.title) << "\n"
       << "set ylabel " << gp_quote(std::string("mean completion time (") + (ms ? "ms" : "s") + ")") << "\n"
       << (o.log_y ? "set logscale y\n" : "")
       << "plot for [i=3:" << k << "] $completion using 1:i with linespoints pointsize 0.7, \\\n"
       << "     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'\n";
    if (o.hit_rate) {
        gp << "unset logscale y\n"
           << "set title 'hit rate: share of trials matching the best of all algorithms run'\n"
           << "set ylabel 'hit rate (%)'\n"
           << "set yrange [0:105]\n"
           << "plot for [i=2:" << k - 1 << "] $hits using 1:i with linespoints pointsize 0.7\n"
           << "unset multiplot\n";
    }
    return gp.str();
}

bool render_svg(const std::filesystem::path& svg, const std::string& script) {
    namespace fs = std::filesystem;
    const auto shell_quote = [](const std::string& t) {
        std::string out = "'";
        for (char c : t) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return out + '\'';
    };
    fs::path gp = svg;
    gp.replace_extension(".gp");
    write_file_atomically(gp, script);
    if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
        std::cerr << "gnuplot not found: apt-get install gnuplot-nox, then run gnuplot " << gp.string() << '\n';
        return false;
    }
    fs::path temp = svg;
    temp.replace_filename("." + svg.filename().string() + ".tmp");
    const std::string cmd = "gnuplot -e " + shell_quote("outfile=" + gp_quote(temp.string())) + " " + shell_quote(gp.string());
    if (std::system(cmd.c_str()) != 0) {
        std::error_code ec;
        fs::remove(temp, ec);
        throw Error("gnuplot failed on " + gp.string());
    }
    fs::rename(temp, svg);
    return true;
}

}  // namespace hetcast::sweep
