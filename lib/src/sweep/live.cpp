#include "hetcast/sweep/live.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include "hetcast/error.hpp"
#include "hetcast/sweep/sweep.hpp"

namespace hetcast::sweep {
namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t k = v.size() / 2;
    return v.size() % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
}

std::string size_text(double bytes) {
    std::ostringstream o;
    if (bytes >= 1 << 20 && std::fmod(bytes, 1 << 20) == 0) {
        o << bytes / (1 << 20) << "MiB";
    } else if (bytes >= 1024 && std::fmod(bytes, 1024) == 0) {
        o << bytes / 1024 << "KiB";
    } else {
        o << bytes << "B";
    }
    return o.str();
}

std::string picked_by_auto(const std::string& reported) {
    return reported.rfind("auto:", 0) == 0 ? reported.substr(5) : std::string();
}

}  // namespace

std::vector<LiveRow> run_live(const LiveSettings& settings, const LivePush& push,
                              const std::function<void(std::size_t, std::size_t, const LiveRow&)>& progress) {
    if (settings.algorithms.empty()) throw InputError("a live sweep needs at least one algorithm");
    if (settings.sizes.empty()) throw InputError("a live sweep needs at least one size");
    if (settings.repeat < 1) throw InputError("--repeat must be at least 1");
    std::vector<LiveRow> rows;
    const std::size_t total = settings.sizes.size() * settings.algorithms.size() * static_cast<std::size_t>(settings.repeat);
    for (double size : settings.sizes) {
        for (int run = 1; run <= settings.repeat; ++run) {
            for (const auto& algo : settings.algorithms) {
                LiveRow row{algo, size, run, {}};
                try {
                    row.result = push(algo, size, run);
                } catch (const InputError&) {
                    throw;  // the request itself is wrong: every other push would be too
                } catch (const std::exception& e) {
                    row.result.ok = false;
                    row.result.error = e.what();
                }
                rows.push_back(row);
                if (progress) progress(rows.size(), total, rows.back());
            }
        }
    }
    return rows;
}

LiveSummary summarise_live(const std::vector<LiveRow>& rows) {
    LiveSummary s;
    std::vector<double> sizes;
    std::vector<std::string> algos;
    for (const auto& r : rows) {
        if (std::find(sizes.begin(), sizes.end(), r.size) == sizes.end()) sizes.push_back(r.size);
        if (std::find(algos.begin(), algos.end(), r.algorithm) == algos.end()) algos.push_back(r.algorithm);
    }
    for (double size : sizes) {
        LiveSummary::PerSize per{size, "", 0, "", 0, false};
        for (const auto& a : algos) {
            LiveCell c{a, size, 0, 0, 0, 0, 0, 0, ""};
            std::vector<double> ach, pred, lb, fid;
            std::map<std::string, int> picks;
            for (const auto& r : rows) {
                if (r.size != size || r.algorithm != a) continue;
                if (!r.result.ok) {
                    ++c.failed;
                    continue;
                }
                ++c.runs;
                ach.push_back(r.result.achieved);
                pred.push_back(r.result.predicted);
                lb.push_back(r.result.lower_bound);
                if (r.result.predicted > 0) fid.push_back(std::abs(r.result.achieved / r.result.predicted - 1));
                if (auto p = picked_by_auto(r.result.algorithm); !p.empty()) ++picks[p];
            }
            if (c.runs == 0 && c.failed == 0) continue;
            c.achieved = median(ach);
            c.predicted = median(pred);
            c.lower_bound = median(lb);
            c.fidelity = median(fid);
            int most = 0;
            for (const auto& [name, count] : picks) {
                if (count > most) {
                    most = count;
                    c.picked = name;
                }
            }
            if (c.runs > 0 && a != "auto" && (per.winner.empty() || c.achieved < per.winner_achieved)) {
                per.winner = a;
                per.winner_achieved = c.achieved;
            }
            if (a == "auto" && c.runs > 0) {
                per.auto_pick = c.picked;
                per.auto_achieved = c.achieved;
            }
            s.cells.push_back(c);
        }
        if (!per.auto_pick.empty() && !per.winner.empty()) {
            per.auto_ok = per.auto_pick == per.winner || per.auto_achieved <= per.winner_achieved * 1.05;
        }
        s.sizes.push_back(per);
    }
    return s;
}

void write_live_csv(std::ostream& out, const std::vector<LiveRow>& rows) {
    out << "algorithm,size,run,achieved,predicted,lower_bound,chosen_by_auto,ok,error\n";
    for (const auto& r : rows) {
        out << csv_field(r.algorithm) << ',' << static_cast<std::uint64_t>(r.size) << ',' << r.run << ','
            << format_number(r.result.achieved) << ',' << format_number(r.result.predicted) << ','
            << format_number(r.result.lower_bound) << ',' << csv_field(picked_by_auto(r.result.algorithm)) << ','
            << (r.result.ok ? 1 : 0) << ',' << csv_field(r.result.error) << '\n';
    }
}

void print_live_summary(std::ostream& out, const LiveSummary& s) {
    std::size_t w = 9;
    for (const auto& c : s.cells) w = std::max(w, c.algorithm.size() + (c.picked.empty() ? 0 : c.picked.size() + 1));
    out << std::left << std::setw(8) << "size" << "  " << std::setw(static_cast<int>(w)) << "algorithm" << std::right
        << "  " << std::setw(10) << "achieved" << "  " << std::setw(10) << "predicted" << "  " << std::setw(10)
        << "bound" << "  " << std::setw(9) << "ach/pred" << "  " << std::setw(9) << "|a/p-1|" << "  runs\n";
    out << std::fixed;
    for (const auto& c : s.cells) {
        const std::string name = c.picked.empty() ? c.algorithm : c.algorithm + ":" + c.picked;
        out << std::left << std::setw(8) << size_text(c.size) << "  " << std::setw(static_cast<int>(w)) << name
            << std::right << std::setprecision(3) << "  " << std::setw(9) << c.achieved << "s  " << std::setw(9)
            << c.predicted << "s  " << std::setw(9) << c.lower_bound << "s  " << std::setprecision(2) << std::setw(8)
            << (c.predicted > 0 ? c.achieved / c.predicted : 0) << "x  " << std::setw(9) << c.fidelity << "  "
            << c.runs << (c.failed ? " (" + std::to_string(c.failed) + " failed)" : "") << '\n';
    }
    out << '\n';
    for (const auto& p : s.sizes) {
        out << std::left << std::setw(8) << size_text(p.size) << "  measured winner " << p.winner;
        if (!p.auto_pick.empty()) {
            out << std::setprecision(2) << ", auto picked " << p.auto_pick << " ("
                << (p.winner_achieved > 0 ? p.auto_achieved / p.winner_achieved : 0) << "x the winner: "
                << (p.auto_ok ? "ok" : "missed") << ")";
        }
        out << '\n';
    }
    out << std::defaultfloat << std::right;
}

std::string live_gnuplot_script(const std::vector<LiveRow>& rows, const std::string& title,
                                const std::filesystem::path& svg) {
    std::vector<std::string> algos;
    for (const auto& r : rows) {
        if (std::find(algos.begin(), algos.end(), r.algorithm) == algos.end()) algos.push_back(r.algorithm);
    }
    std::ostringstream gp;
    gp << "# Written by hetcast sweep --live. Run: gnuplot " << svg.stem().string() << ".gp\n"
       << "if (!exists(\"outfile\")) outfile = '" << svg.string() << "'\n"
       << "set terminal svg size 900,640 dynamic noenhanced font 'Helvetica,13' background rgb 'white'\n"
       << "set output outfile\nset grid\nset key outside right top\nset logscale xy\n"
       << "set title '" << title << "'\nset xlabel 'predicted (s)'\nset ylabel 'achieved (s)'\n";
    for (std::size_t i = 0; i < algos.size(); ++i) {
        gp << "$d" << i << " << EOD\n";
        for (const auto& r : rows) {
            if (r.algorithm == algos[i] && r.result.ok) {
                gp << format_number(r.result.predicted) << ' ' << format_number(r.result.achieved) << '\n';
            }
        }
        gp << "EOD\n";
    }
    gp << "plot x with lines dashtype 2 linecolor rgb 'black' title 'achieved = predicted'";
    for (std::size_t i = 0; i < algos.size(); ++i) {
        gp << ", \\\n     $d" << i << " using 1:2 with points pointsize 1 title '" << algos[i] << "'";
    }
    gp << '\n';
    return gp.str();
}

}  // namespace hetcast::sweep
