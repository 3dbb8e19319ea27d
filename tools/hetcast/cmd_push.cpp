#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "commands.hpp"
#include "daemon_link.hpp"
#include "hetcast/error.hpp"
#include "hetcast/model/units.hpp"
#include "hetcast/report/json_output.hpp"
#include "hetcast/report/plan_report.hpp"
#include "hetcast/runtime/byte_text.hpp"
#include "hetcast/runtime/nodeset.hpp"
#include "hetcast/runtime/report.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace hetcast::cli {
namespace {

/// One line on a terminal, redrawn in place: the file in flight, the bytes every destination
/// holds over the bytes of the push, the rate since the first byte moved (set-up excluded),
/// ETA.
class ProgressBar {
public:
    explicit ProgressBar(bool on) : on_(on) {}
    void update(const std::string& label, double got, double owed) {
        if (!on_ || owed <= 0) return;
        const auto now = std::chrono::steady_clock::now();
        if (!moving_ && got > 0) {
            // The first report of moved bytes: the rate counts from here, over what came after.
            moving_ = true;
            start_ = now;
            base_ = got;
        }
        const double secs = moving_ ? std::chrono::duration<double>(now - start_).count() : 0;
        const double rate = secs > 0.2 ? (got - base_) / secs : 0;
        const double frac = std::min(1.0, got / owed);
        constexpr int width = 30;
        const int fill = static_cast<int>(frac * width);
        const std::string eta = rate > 0 && got < owed ? format_seconds((owed - got) / rate) : "-";
        const std::string shown = label.size() > 32 ? "..." + label.substr(label.size() - 29) : label;
        char speed[32] = "- MiB/s";
        if (rate > 0) std::snprintf(speed, sizeof speed, "%.1f MiB/s", rate / 1048576);
        std::fprintf(stderr, "\r\033[K%s [%s%s] %5.1f%%  %.1f/%.1f MiB  %s  ETA %s", shown.c_str(),
                     std::string(fill, '#').c_str(), std::string(width - fill, ' ').c_str(), 100 * frac,
                     got / 1048576, owed / 1048576, speed, eta.c_str());
        std::fflush(stderr);
        drawn_ = true;
    }
    /// Clears the line for a line of text; the next update draws it again.
    void clear() {
        if (drawn_) std::fprintf(stderr, "\r\033[K");
        drawn_ = false;
    }
    void done() {
        clear();
        moving_ = false;
    }

private:
    bool on_;
    bool drawn_ = false;
    bool moving_ = false;
    double base_ = 0;
    std::chrono::steady_clock::time_point start_{};
};

std::atomic<int> interrupts{0};

/// First Ctrl-C: the job is cancelled everywhere (by the watcher in Cancel). Second: detach.
extern "C" void on_interrupt(int) {
    if (interrupts.fetch_add(1) >= 1) {
        constexpr char m[] = "\nhetcast push: detached; the job goes on ('hetcast jobs', 'hetcast cancel JOB')\n";
        (void)!::write(STDERR_FILENO, m, sizeof m - 1);
        ::_exit(130);
    }
}

/// While a push runs: turns a Ctrl-C into a cancel of its job, once the job's id is known.
class Cancel {
public:
    explicit Cancel(const DaemonOptions& daemon) : daemon_(daemon) {
        struct sigaction sa {};
        sa.sa_handler = on_interrupt;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGINT, &sa, &old_);
        watcher_ = std::thread([this] { watch(); });
    }
    ~Cancel() {
        done_ = true;
        watcher_.join();
        ::sigaction(SIGINT, &old_, nullptr);
    }
    void job(const std::string& id) {
        std::lock_guard lock(mu_);
        job_ = id;
    }
    [[nodiscard]] bool asked() const { return interrupts > 0; }

private:
    void watch() {
        bool sent = false;
        while (!done_) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (sent || interrupts == 0) continue;
            std::string id;
            {
                std::lock_guard lock(mu_);
                id = job_;
            }
            if (id.empty()) continue;
            sent = true;
            std::fprintf(stderr, "\r\033[Khetcast push: cancelling job %s everywhere (Ctrl-C again to detach)\n", id.c_str());
            try {
                (void)connect_daemon(daemon_)->call({{"cmd", "cancel"}, {"job", id}, {"all", true}});
            } catch (const std::exception& e) {
                std::fprintf(stderr, "hetcast push: could not cancel job %s: %s\n", id.c_str(), e.what());
            }
        }
    }
    DaemonOptions daemon_;
    struct sigaction old_ {};
    std::atomic<bool> done_{false};
    std::mutex mu_;
    std::string job_;
    std::thread watcher_;
};

/// push --verbose: one line per member whose state changed since the last progress frame.
class MemberStates {
public:
    void update(const json& members, ProgressBar& bar) {
        for (const auto& m : members) {
            const std::string name = m.value("name", std::string()), state = m.value("state", std::string());
            auto& seen = states_[name];
            if (seen == state) continue;
            seen = state;
            bar.clear();
            const auto owed = m.value("owed", std::uint64_t{0});
            std::string bytes;
            if (owed > 0) {
                char b[64];
                std::snprintf(b, sizeof b, " (%.1f/%.1f MiB)", m.value("bytes", 0.0) / 1048576,
                              static_cast<double>(owed) / 1048576);
                bytes = b;
            }
            std::fprintf(stderr, "hetcast push: %s %s%s\n", name.c_str(), state.c_str(), bytes.c_str());
        }
    }
    void reset() { states_.clear(); }

private:
    std::map<std::string, std::string> states_;
};

}  // namespace

int cmd_push(const std::vector<std::string>& args) {
    DaemonOptions daemon;
    std::vector<std::string> files;
    std::string to, exclude, algos = "auto", dest, model = "nonblocking", pattern, piece, bwlimit;
    po::options_description opts(
        "hetcast push: push files to the cluster along a planned schedule; report achieved vs predicted\n\n"
        "usage: hetcast push [-r] FILE|DIR... (--to NODESET | --all) [--exclude NODESET] [options]\n"
        "       hetcast push --pattern PATTERN.yaml [options]   (several sources at once, Wu's patterns)\n\noptions");
    opts.add_options()
        ("help,h", "show this help")
        ("to", po::value(&to), "destination members, a node set as ClusterShell and pdsh write them: 'a,b,c', "
                                "'ws[01-40,45]', 'r[1-2]n[1-8/2]', '@subnet:N' (a subnet of the map, numbered "
                                "as 'hetcast map show' prints them), '@*' (every member); operators ! & ^ "
                                "(difference, intersection, either but not both), read left to right. The "
                                "member pushing is left out")
        ("all", "every other member of the map")
        ("exclude,x", po::value(&exclude), "leave out the members this node set names (with --to or --all)")
        ("pattern,p", po::value(&pattern), "a pattern file: entries {source, file: /path/on/source | size, dests}; "
                                          "each source serves its own file (or a generated payload of that size)")
        ("algo,a", po::value(&algos), "algorithm (see 'hetcast plan --help'), default auto; a comma-separated "
                                     "list pushes once per algorithm and prints the reports side by side")
        ("dest", po::value(&dest), "folder under each destination's root (default: the root itself)")
        ("recursive,r", "push directories with everything in them, as one job (symbolic links inside are "
                        "sent as links, never followed; a link named on the command line is followed)")
        ("no-preserve", "land files with the source's mode less the destination's umask and the landing "
                        "time as mtime (default: modes and mtimes kept exactly, as rsync -a and scp -p)")
        ("preserve-owner", "also send numeric owners and groups; a destination daemon running as root "
                           "applies them, others ignore them")
        ("piece", po::value(&piece), "bytes per piece when relays cut through, 4KiB..8MiB (default: the daemon's "
                                      "'piece', else 2MiB, more for messages over 128 GiB)")
        ("bwlimit", po::value(&bwlimit), "send at most RATE per member for this push, e.g. 20MiB/s, 100Mbit "
                                          "(a bare number is bytes/s); the plan and its prediction account for it")
        ("model,m", po::value(&model), "execution model to plan and predict with (default nonblocking)")
        ("json", "print the reports as one JSON object (docs/json.md)")
        ("quiet,q", "no progress bar")
        ("verbose,v", "a line on standard error whenever a member's state changes: planned, receiving, "
                      "relaying (holds it and feeds others), sending (the source), done, failed");
    add_daemon_options(opts, daemon);
    po::options_description hidden;
    hidden.add_options()("file", po::value(&files));
    po::positional_options_description pos;
    pos.add("file", -1);
    po::options_description all;
    all.add(opts).add(hidden);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << opts;
        return 0;
    }
    json pattern_text;
    // `@NAME` in --to or --exclude: the cluster file's groups go with the request.
    const NodeGroups groups = (to + exclude).find('@') != std::string::npos ? cluster_groups(daemon) : NodeGroups{};
    if (!pattern.empty()) {
        if (!files.empty() || vm.count("all") || vm.count("to") || vm.count("exclude")) {
            throw InputError("--pattern names sources, files and destinations itself: no FILE, --to, --all or --exclude");
        }
        std::ifstream in(pattern);
        if (!in) throw InputError("cannot read pattern file '" + pattern + "'");
        pattern_text = std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    } else {
        if (files.empty()) throw InputError("no file to push (see 'hetcast push --help')");
        if (vm.count("all") == vm.count("to")) throw InputError("give either --to NODESET or --all");
        // The syntax and the cluster file's groups are checked here, before connecting; the
        // daemon, which has the map, resolves the map's groups and checks the names are members.
        const GroupResolver any_group = named_groups(groups, unresolved_map_groups());
        if (vm.count("to")) (void)expand_nodeset(to, any_group);
        if (vm.count("exclude")) (void)expand_nodeset(exclude, any_group);
    }
    if (!bwlimit.empty() && parse_rate(bwlimit) < 1024) throw InputError("--bwlimit must be at least 1KiB/s");
    const auto algo_list = split_commas(algos);
    if (algo_list.empty()) throw InputError("--algo is empty");
    const bool recursive = vm.count("recursive") != 0;
    for (auto& f : files) {
        if (daemon.from.empty()) {
            // The local daemon reads the file; a missing one is this command's error, said here.
            std::error_code ec;
            if (fs::is_directory(f, ec)) {
                if (!recursive) throw InputError("'" + f + "' is a directory (use -r)");
            } else if (!fs::is_regular_file(f, ec)) {
                throw InputError("'" + f + "' is missing or not a regular file");
            }
            if (::access(f.c_str(), R_OK) != 0) throw InputError("'" + f + "' is not readable");
        }
        f = fs::absolute(f).lexically_normal().string();
    }

    const bool json_out = vm.count("json") != 0;
    ProgressBar bar(!vm.count("quiet") && !json_out && ::isatty(STDERR_FILENO));
    const bool verbose = vm.count("verbose") != 0;
    MemberStates states;
    std::vector<JobReport> reports;
    json json_reports = json::array();
    bool ok = true;
    Cancel cancel(daemon);
    for (const auto& algo : algo_list) {
        if (cancel.asked()) break;
        auto client = connect_daemon(daemon);
        states.reset();
        // "to": the node set's text ([] for --all), expanded by the daemon.
        json names = json::array();
        for (const auto& f : files) names.push_back(bytes_to_json(f));  // file names are bytes
        json req{{"cmd", "push"}, {"files", names}, {"algo", algo}, {"dest", dest}, {"model", model},
                 {"to", vm.count("all") ? json::array() : json(to)}};
        if (vm.count("exclude")) req["exclude"] = exclude;
        if (recursive) req["recursive"] = true;
        if (vm.count("no-preserve")) req["preserve"] = false;
        if (vm.count("preserve-owner")) req["preserve_owner"] = true;
        if (!groups.empty()) req["groups"] = groups;
        if (verbose) req["verbose"] = true;
        if (!piece.empty()) req["piece"] = static_cast<std::uint64_t>(parse_bytes(piece));
        if (!bwlimit.empty()) req["bwlimit"] = static_cast<std::uint64_t>(parse_rate(bwlimit));
        if (!pattern.empty()) {
            req["pattern"] = pattern_text;
            req["pattern_name"] = pattern;
        }
        json answer;
        try {
            answer = client->call(req, [&](const json& p) {
                if (p.contains("job") && p["job"].is_string()) cancel.job(p["job"].get<std::string>());
                if (verbose && p.contains("members") && p["members"].is_array()) states.update(p["members"], bar);
                if (p.contains("everywhere") && p.contains("size")) {
                    // What every destination holds, labelled with the file in flight.
                    const std::string name = p.value("name", std::string());
                    const std::string label = fs::path(name).is_absolute() ? fs::path(name).filename().string() : name;
                    bar.update((label.empty() ? algo : label) + (algo_list.size() > 1 ? " (" + algo + ")" : ""),
                               p["everywhere"].get<double>(), p["size"].get<double>());
                } else if (p.contains("bytes") && p.contains("of")) {
                    bar.update(algo, p["bytes"].get<double>(), p["of"].get<double>());
                }
            });
        } catch (const Error& e) {
            bar.done();
            // The coordinating daemon is gone: its job ends on every member with it.
            const std::string who = daemon.from.empty() ? load_config(daemon).name : daemon.from;
            throw Error("'" + who + "', which coordinated this push, is gone (" + e.what() +
                        "); the push ended on every member without landing anything more");
        }
        bar.done();
        for (const auto& w : answer.value("warnings", json::array())) {
            if (w.is_string()) std::cerr << "hetcast push: warning: " << w.get<std::string>() << '\n';
        }
        if (!answer.contains("reports")) {
            // Refused before anything moved: a planning or input error.
            throw InputError(answer.value("error", std::string("the daemon refused the push")));
        }
        ok = ok && answer.value("ok", false);
        for (const auto& r : answer["reports"]) {
            reports.push_back(report_from_json(r));
            json_reports.push_back(r);
        }
    }
    if (json_out) {
        json out = json_document("push");
        out["ok"] = ok;
        out["reports"] = std::move(json_reports);
        std::cout << dump_json(out) << '\n';
    } else if (algo_list.size() > 1) {
        print_reports_side_by_side(std::cout, reports);
    } else {
        for (const auto& r : reports) print_report(std::cout, r);
    }
    if (!json_out) {
        for (const auto& r : json_reports) {
            const auto t = r.find("tree");
            if (t == r.end() || !t->is_object()) continue;
            std::cout << "tree: " << t->value("files", 0) << " files, " << t->value("dirs", 0) << " directories, "
                      << t->value("links", 0) << " links, " << t->value("bytes", 0) << " bytes\n";
        }
    }
    if (!ok) {
        for (const auto& r : reports) {
            for (const auto& o : r.outcomes) {
                if (!o.ok) std::cerr << "hetcast push: " << o.dest << " failed: " << o.error << '\n';
            }
        }
    }
    if (cancel.asked()) return 130;
    return ok ? 0 : 1;
}

}  // namespace hetcast::cli
