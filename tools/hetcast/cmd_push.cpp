#include <cmath>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <mutex>
#include <thread>

#include "commands.hpp"
#include "daemon_link.hpp"
#include "hetcast/error.hpp"
#include "hetcast/model/units.hpp"
#include "hetcast/report/json_output.hpp"
#include "hetcast/report/plan_report.hpp"
#include "hetcast/runtime/byte_text.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/nodeset.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "hetcast/runtime/push_options.hpp"
#include "hetcast/runtime/report.hpp"
#include "hetcast/runtime/upload.hpp"
#include "hetcast/sched/schedule.hpp"

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
    [[nodiscard]] std::string job() {
        std::lock_guard lock(mu_);
        return job_;
    }

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

/// "90", "90s", "15m", "2h", "1d" (a number and a unit, none: seconds; fractions allowed),
/// or "none"; in milliseconds, 0 for none.
std::uint64_t parse_duration(const std::string& text, const std::string& what) {
    if (text == "none") return 0;
    const auto bad = [&]() -> InputError {
        return InputError(what + ": expected a duration like 90s, 15m, 2h or none, got '" + text.substr(0, 40) + "'");
    };
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        throw bad();
    }
    const std::string unit = text.substr(used);
    const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : -1;
    if (scale < 0 || !std::isfinite(v) || text.find_first_of("0123456789") != 0) throw bad();
    const double ms = v * scale * 1000;
    if (ms < 1000) throw InputError(what + ": at least 1 s, got '" + text + "'");
    if (ms > 366.0 * 86400 * 1000) throw InputError(what + ": at most a year, got '" + text + "'");
    return static_cast<std::uint64_t>(ms);
}

/// The exit status of pushes, from their reports (hetcast(1)): 0 every destination has
/// the files, 4 some do, 1 none does (or the push was cancelled).
int push_status(const std::vector<JobReport>& reports) {
    bool any_ok = false, any_failed = false, cancelled = false;
    for (const auto& r : reports) {
        for (const auto& o : r.outcomes) {
            (o.ok ? any_ok : any_failed) = true;
            cancelled = cancelled || (!o.ok && o.error.rfind("cancelled", 0) == 0);
        }
    }
    if (!any_failed) return reports.empty() ? exit_failed : exit_ok;
    if (cancelled) return exit_failed;  // stopped on purpose, whatever had landed
    return any_ok ? exit_partial : exit_failed;
}

/// The reports of a push (or a re-attached one) as push prints them; its exit status.
int print_push_answers(const std::vector<JobReport>& reports, json json_reports, bool json_out, bool side_by_side,
                       const char* cmd) {
    const int status = push_status(reports);
    if (json_out) {
        json out = json_document(cmd);
        out["ok"] = status == exit_ok;
        out["reports"] = std::move(json_reports);
        std::cout << dump_json(out) << '\n';
    } else if (side_by_side) {
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
    for (const auto& r : reports) {
        for (const auto& o : r.outcomes) {
            if (!o.ok) std::cerr << "hetcast " << cmd << ": " << o.dest << " failed: " << o.error << '\n';
        }
    }
    return status;
}

/// Draws a push's progress frames (push and wait).
struct ProgressView {
    ProgressBar& bar;
    MemberStates& states;
    bool verbose;
    std::string label;
    void operator()(const json& p) {
        if (verbose && p.contains("members") && p["members"].is_array()) states.update(p["members"], bar);
        if (p.contains("everywhere") && p.contains("size")) {
            // What every destination holds, labelled with the file in flight.
            const std::string name = p.value("name", std::string());
            const std::string shown = fs::path(name).is_absolute() ? fs::path(name).filename().string() : name;
            bar.update(shown.empty() ? label : shown, p["everywhere"].get<double>(), p["size"].get<double>());
        } else if (p.contains("bytes") && p.contains("of")) {
            bar.update(label, p["bytes"].get<double>(), p["of"].get<double>());
        }
    }
};

}  // namespace

int cmd_push(const std::vector<std::string>& args) {
    DaemonOptions daemon;
    std::vector<std::string> files;
    std::string to, exclude, algos = "auto", dest, model = "nonblocking", pattern, piece, bwlimit, timeout;
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
                                      "'piece', else chosen per plan; an upload: 2MiB, more over 128 GiB)")
        ("bwlimit", po::value(&bwlimit), "send at most RATE per member for this push, e.g. 20MiB/s, 100Mbit "
                                          "(a bare number is bytes/s); the plan and its prediction account for it")
        ("timeout", po::value(&timeout), "cancel the push if it has not ended after DURATION (90s, 15m, 2h; "
                                          "default: the daemon's job_timeout, none unless configured): a push "
                                          "otherwise runs as long as it makes progress")
        ("model,m", po::value(&model), "execution model to plan and predict with (default nonblocking)")
        ("upload", "stream FILE from this machine's disk through the member this command talks to, which "
                   "forwards it as it arrives (the default with no local daemon and no --from)")
        ("remote", "read FILE at the member pushing, under its serve_roots (the default with a local daemon "
                   "or --from)")
        ("json", "print the reports as one JSON object (docs/json.md)")
        ("quiet,q", "no progress bar")
        ("verbose,v", "a line on standard error whenever a member's state changes: queued (the push waits "
                      "for members busy with other jobs), planned, receiving, relaying (holds it and feeds others), "
                      "sending (the source), done, failed");
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
    if (!dest.empty()) check_path_limits(dest, "--dest");
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
    PushOptions options;  // the same struct, check and encoding as an embedded Node's
    options.bwlimit = bwlimit.empty() ? 0 : static_cast<std::uint64_t>(parse_rate(bwlimit));
    options.piece = piece.empty() ? 0 : static_cast<std::uint64_t>(parse_bytes(piece));
    options.timeout = std::chrono::milliseconds(timeout.empty() ? 0 : parse_duration(timeout, "--timeout"));
    check(options);
    const auto algo_list = split_commas(algos);
    if (algo_list.empty()) throw InputError("--algo is empty");
    const bool recursive = vm.count("recursive") != 0;
    if (vm.count("upload") && vm.count("remote")) throw InputError("give --upload or --remote, not both");
    if (vm.count("upload") && !pattern.empty()) throw InputError("--pattern files are read at their sources: no --upload");
    // The operator's disk is the source when no daemon runs here (as scp and pdcp read it);
    // a member's serve_roots with a local daemon (the same disk) or a member named by --from.
    const bool upload = pattern.empty() && !vm.count("remote") &&
                        (vm.count("upload") || (daemon.from.empty() && without_local_daemon(daemon)));
    for (auto& f : files) {
        if (upload || (daemon.from.empty() && !vm.count("remote"))) {
            // This disk's file (an upload, or the local daemon reads it): a missing one is this
            // command's error, said here.
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
    Cancel cancel(daemon);
    std::optional<LocalFile> local;
    for (const auto& algo : algo_list) {
        if (cancel.asked()) break;
        auto client = connect_daemon(daemon);
        if (upload && !local) {
            // Cut as the member cuts what it sends (its `piece`), so that each piece it
            // forwards is one it has checked.
            std::uint64_t cut = options.piece;
            if (cut == 0) cut = client->call({{"cmd", "hello"}}).value("piece", std::uint64_t{0});
            const bool asked = !piece.empty();
            const auto cut_for = [cut, asked](std::uint64_t size) {
                std::uint64_t p = cut != 0 ? cut : piece_for(static_cast<double>(size));
                while (!asked && p != 0 && p < max_piece && piece_count(size, p) > max_upload_pieces) p *= 2;
                return p;
            };
            if (!vm.count("quiet") && !json_out && ::isatty(STDERR_FILENO)) {
                std::fprintf(stderr, "hetcast push: reading %s for its SHA-256...", files.size() == 1 ? files[0].c_str() : "the files");
                std::fflush(stderr);
            }
            if (files.size() == 1 && !recursive) {
                std::error_code ec;
                const std::uint64_t size = fs::file_size(files[0], ec);
                if (cut_for(size) == 0) throw InputError("'" + files[0] + "' is too large to push");
                local = describe_local_file(files[0], cut_for(size));
            } else {
                local = describe_local_tree(files, TreeOptions{recursive, vm.count("preserve-owner") != 0}, cut_for);
            }
            if (!vm.count("quiet") && !json_out && ::isatty(STDERR_FILENO)) std::fprintf(stderr, "\r\033[K");
            if (cancel.asked()) break;
        }
        states.reset();
        // "to": the node set's text ([] for --all), expanded by the daemon.
        json names = json::array();
        for (const auto& f : files) names.push_back(bytes_to_json(f));  // file names are bytes
        json req{{"cmd", "push"}, {"files", names}, {"dest", dest}, {"model", model},
                 {"to", vm.count("all") ? json::array() : json(to)}};
        if (vm.count("exclude")) req["exclude"] = exclude;
        if (recursive) req["recursive"] = true;
        if (vm.count("no-preserve")) req["preserve"] = false;
        if (vm.count("preserve-owner")) req["preserve_owner"] = true;
        if (!groups.empty()) req["groups"] = groups;
        if (verbose) req["verbose"] = true;
        options.algo = algo;
        write_push_options(options, req);
        if (!pattern.empty()) {
            req["pattern"] = pattern_text;
            req["pattern_name"] = pattern;
        }
        if (local) {
            req["upload"] = to_json(local->spec);
            if (!local->tree.empty()) req["tree"] = tree_to_json(local->tree);
            // Said here: the member's own refusal would not get past the frame limit.
            if (const std::size_t text = req.value("tree", json()).dump().size(); text > max_upload_manifest_bytes) {
                throw InputError("the list of " + std::to_string(local->tree.size()) + " entries takes " +
                                 std::to_string(text >> 10) + " KiB, over the " +
                                 std::to_string(max_upload_manifest_bytes >> 10) + " KiB one upload carries: push the tree in parts");
            }
            if (options.bwlimit > 0) client->limit_rate(options.bwlimit);
        }
        json answer;
        ProgressView view{bar, states, verbose, algo};
        try {
            answer = client->call(req, [&](const json& p) {
                if (local && p.contains("upload") && p["upload"].is_string()) {
                    // The entry member hears of the upload frame by frame and fails it after
                    // stall_timeout without one: frames small enough for a slow uplink.
                    std::size_t chunk = std::size_t{256} << 10;
                    if (options.bwlimit > 0) chunk = std::clamp<std::size_t>(static_cast<std::size_t>(options.bwlimit / 4), 16 << 10, chunk);
                    client->upload(std::stoull(p["upload"].get<std::string>()), local->body, chunk);
                }
                if (p.contains("job") && p["job"].is_string()) cancel.job(p["job"].get<std::string>());
                if (algo_list.size() > 1 && p.contains("everywhere")) {
                    json q = p;
                    const std::string name = p.value("name", std::string());
                    const std::string base = name.empty() ? algo
                                             : fs::path(name).is_absolute() ? fs::path(name).filename().string()
                                                                            : name;
                    q["name"] = base + " (" + algo + ")";
                    return view(q);
                }
                view(p);
            });
        } catch (const Unreachable& e) {
            bar.done();
            // The push does not depend on this connection: the coordinator goes on without it.
            const std::string who = client->name();
            const std::string job = cancel.job();
            throw Unreachable("lost '" + who + "', which coordinates this push (" + e.what() + ")" +
                              (job.empty() ? std::string()
                                           : "; if it runs, the push goes on: 'hetcast wait " + job + "' re-attaches"));
        }
        bar.done();
        for (const auto& w : answer.value("warnings", json::array())) {
            if (w.is_string()) std::cerr << "hetcast push: warning: " << w.get<std::string>() << '\n';
        }
        if (!answer.contains("reports")) {
            // Refused before anything moved: the request's fault (2) or the daemon's (1).
            std::string why = answer.value("error", std::string("the daemon refused the push"));
            if (!local && pattern.empty() && why.find("(serve_roots: ") != std::string::npos) {
                why += "; or stream it from this machine's disk: --upload";
            }
            if (answer.value("input", false)) throw InputError(why);
            throw Error(why);
        }
        for (const auto& r : answer["reports"]) {
            reports.push_back(report_from_json(r));
            json_reports.push_back(r);
        }
    }
    const int status = print_push_answers(reports, std::move(json_reports), json_out, algo_list.size() > 1, "push");
    if (cancel.asked()) return exit_interrupted;
    return status;
}

int cmd_wait(const std::vector<std::string>& args) {
    DaemonOptions daemon;
    std::string job;
    po::options_description opts(
        "hetcast wait: wait for a push to end and print its report, as push does (re-attach after the\n"
        "command that started it was lost); a push that ended: its report from the history\n\n"
        "  hetcast wait JOB [--json] [-q] [-v] [--config FILE] [--from NODE]   (JOB as 'hetcast jobs' lists it)\n\noptions");
    opts.add_options()("help,h", "show this help")("json", "print the report as one JSON object (docs/json.md)")(
        "quiet,q", "no progress bar")("verbose,v", "a line on standard error whenever a member's state changes");
    add_daemon_options(opts, daemon);
    po::variables_map vm;
    if (parse_options_with(args, opts, "job", job, vm)) return 0;
    if (job.empty()) throw InputError("which job? (see 'hetcast jobs' and 'hetcast jobs --history')");
    if (job.find_first_not_of("0123456789") != std::string::npos) {
        throw InputError("'" + job.substr(0, 40) + "' is not a job id (see 'hetcast jobs')");
    }
    const bool json_out = vm.count("json") != 0;
    ProgressBar bar(!vm.count("quiet") && !json_out && ::isatty(STDERR_FILENO));
    MemberStates states;
    ProgressView view{bar, states, vm.count("verbose") != 0, "job " + job};
    json answer;
    for (int hop = 0; hop < 2; ++hop) {
        answer = connect_daemon(daemon)->call({{"cmd", "wait"}, {"job", job}, {"all", true}}, std::ref(view));
        bar.done();
        // Coordinated by another member: asked there (once).
        if (answer.contains("coordinator") && answer["coordinator"].is_string() && hop == 0) {
            daemon.from = answer["coordinator"].get<std::string>();
            continue;
        }
        break;
    }
    if (!answer.contains("reports")) (void)checked(answer, "wait");
    std::vector<JobReport> reports;
    json json_reports = json::array();
    for (const auto& r : answer["reports"]) {
        reports.push_back(report_from_json(r));
        json_reports.push_back(r);
    }
    return print_push_answers(reports, std::move(json_reports), json_out, false, "wait");
}

}  // namespace hetcast::cli
