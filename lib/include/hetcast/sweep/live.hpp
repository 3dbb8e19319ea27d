#pragma once
/// Live measurement sweeps: every algorithm × size pushed `repeat` times on a running
/// cluster; achieved next to predicted and the lower bound, the measured winner per size
/// next to auto's pick. The pushes themselves are the caller's (a daemon, an embedded Node).
#include <cstddef>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace hetcast::sweep {

/// What one push reports.
struct LiveResult {
    std::string algorithm;  ///< as the report names it ("auto:lcf" for auto's pick)
    double achieved = 0;
    double predicted = 0;
    double lower_bound = 0;
    bool ok = false;
    std::string error;
};

struct LiveRow {
    std::string algorithm;  ///< as asked ("auto")
    double size = 0;
    int run = 0;
    LiveResult result;
};

struct LiveSettings {
    std::vector<std::string> algorithms;
    std::vector<double> sizes;
    int repeat = 3;
};

/// Pushes a payload of `size` bytes with `algorithm`; the `run`-th time.
using LivePush = std::function<LiveResult(const std::string& algorithm, double size, int run)>;

/// Runs every (size, run) round with each algorithm in turn — interleaved, so that a
/// network or machine that drifts during the sweep affects every algorithm alike.
/// `progress(done, total, row)` after each push. A failed push is kept as a row (ok false).
[[nodiscard]] std::vector<LiveRow> run_live(const LiveSettings& settings, const LivePush& push,
                                            const std::function<void(std::size_t, std::size_t, const LiveRow&)>& progress = {});

/// One algorithm at one size: medians over its successful runs.
struct LiveCell {
    std::string algorithm;
    double size = 0;
    std::size_t runs = 0;    ///< successful ones
    std::size_t failed = 0;
    double achieved = 0;     ///< median
    double predicted = 0;    ///< median
    double lower_bound = 0;  ///< median
    double fidelity = 0;     ///< median of |achieved / predicted − 1| over the runs
    std::string picked;      ///< auto's cells: what auto chose (most often)
};

struct LiveSummary {
    std::vector<LiveCell> cells;  ///< by size, then in the settings' algorithm order
    struct PerSize {
        double size = 0;
        std::string winner;       ///< the least median achieved of the algorithms other than auto
        double winner_achieved = 0;
        std::string auto_pick;    ///< empty when auto was not run
        double auto_achieved = 0;
        bool auto_ok = false;     ///< auto's median within 5% of the winner's, or auto picked it
    };
    std::vector<PerSize> sizes;
};
[[nodiscard]] LiveSummary summarise_live(const std::vector<LiveRow>& rows);

/// algorithm,size,run,achieved,predicted,lower_bound,chosen_by_auto,ok,error
void write_live_csv(std::ostream& out, const std::vector<LiveRow>& rows);
/// The per-cell table (median achieved, predicted, bound, |achieved/predicted − 1|), then per
/// size the measured winner next to auto's pick.
void print_live_summary(std::ostream& out, const LiveSummary& s);
/// A gnuplot script (data inline): achieved against predicted per algorithm, log-log, with
/// the line achieved = predicted; writes `svg`.
[[nodiscard]] std::string live_gnuplot_script(const std::vector<LiveRow>& rows, const std::string& title,
                                              const std::filesystem::path& svg);

}  // namespace hetcast::sweep
