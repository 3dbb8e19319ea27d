// hetcastd: the hetcast peer daemon. Thin: parses flags, starts a hetcast::Service, waits
// for SIGINT/SIGTERM. The logic lives in lib/ (hetcast/runtime/service.hpp).
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>

#include <boost/program_options.hpp>

#include "build_version.hpp"
#include "hetcast/error.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/runtime/service.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

std::mutex log_mu;
std::ofstream log_file;  // state_dir/hetcastd.log, once the config is read

/// One line on stderr and in the log file: `2026-11-23T15:00:00.123Z LEVEL text`.
void log_line(const char* level, const std::string& text) {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char stamp[40];
    const std::size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    std::snprintf(stamp + n, sizeof stamp - n, ".%03dZ", static_cast<int>(ms));
    std::lock_guard lock(log_mu);
    std::cerr << stamp << ' ' << level << ' ' << text << std::endl;
    if (log_file.is_open()) log_file << stamp << ' ' << level << ' ' << text << std::endl;
}

/// The library logs plain lines; the ones reporting a failure are warnings.
void log_from_service(const std::string& text) {
    for (const char* bad : {"fail", "refus", "error", "cannot", "wrong", "abort", "lost"}) {
        if (text.find(bad) != std::string::npos) return log_line("WARN", text);
    }
    log_line("INFO", text);
}

/// `HOST:PORT` or `[ADDR]:PORT`.
void parse_listen(const std::string& s, hetcast::DaemonConfig& cfg) {
    const auto colon = s.rfind(':');
    std::string host = colon == std::string::npos ? "" : s.substr(0, colon);
    const std::string port = colon == std::string::npos ? "" : s.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    std::size_t used = 0;
    unsigned long p = 0;
    try {
        p = std::stoul(port, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (host.empty() || used != port.size() || port.empty() || p > 65535) {
        throw hetcast::InputError("--listen: expected HOST:PORT with a port 0..65535, got '" + s + "'");
    }
    cfg.host = host;
    cfg.port = static_cast<std::uint16_t>(p);
}

}  // namespace

int main(int argc, char** argv) {
    std::string config, name, listen, dest_root, state_dir, link_profile, join, identity, cluster;
    po::options_description opts("hetcastd: the hetcast peer daemon (logs to stderr and STATE_DIR/hetcastd.log)\n\n"
                                 "  hetcastd --config FILE [flags overriding the file]\n\noptions");
    opts.add_options()("help,h", "show this help")("version", "print the version and exit")(
        "config,c", po::value(&config), "daemon configuration (YAML, see conf/hetcastd.yaml); required")(
        "name", po::value(&name), "this member's name")(
        "listen", po::value(&listen), "listen address HOST:PORT ([ADDR]:PORT for IPv6; port 0: ephemeral)")(
        "dest-root", po::value(&dest_root), "folder under which received files land")(
        "state-dir", po::value(&state_dir), "folder for the map and logs")(
        "identity", po::value(&identity), "this member's identity file (hetcast keys issue NAME; mode 0600)")(
        "cluster", po::value(&cluster), "cluster file: the members and their addresses")(
        "link-profile", po::value(&link_profile), "network file to emulate links with (one-machine demos)")(
        "join", po::value(&join), "HOST:PORT of a running member: join its cluster (member list and map come from it)");

    hetcast::DaemonConfig cfg;
    try {
        po::variables_map vm;
        po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << opts;
            return 0;
        }
        if (vm.count("version")) {
            std::cout << "hetcastd " << hetcast::build::version_line() << '\n';
            return 0;
        }
        if (config.empty()) throw hetcast::InputError("--config FILE is required (see --help)");
        cfg = hetcast::load_daemon_config(config);
        if (!name.empty()) cfg.name = name;
        if (!listen.empty()) parse_listen(listen, cfg);
        if (!dest_root.empty()) cfg.dest_root = fs::absolute(dest_root);
        if (!state_dir.empty()) cfg.state_dir = fs::absolute(state_dir);
        if (!link_profile.empty()) cfg.link_profile = fs::absolute(link_profile);
        if (!identity.empty()) cfg.identity_file = fs::absolute(identity);
        if (!cluster.empty()) cfg.cluster_file = fs::absolute(cluster);
        if (!join.empty()) cfg.seeds.insert(cfg.seeds.begin(), join);
    } catch (const po::error& e) {
        std::cerr << "hetcastd: " << e.what() << " (see --help)\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "hetcastd: " << e.what() << '\n';
        return 2;
    }

    // Every thread the service starts inherits this mask; only sigwait below sees the signals.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);

    std::error_code ec;
    fs::create_directories(cfg.state_dir, ec);
    log_file.open(cfg.state_dir / "hetcastd.log", std::ios::app);
    if (!log_file) {
        std::cerr << "hetcastd: cannot open " << (cfg.state_dir / "hetcastd.log").string() << " for appending\n";
        return 1;
    }

    std::unique_ptr<hetcast::Service> service;
    try {
        service = std::make_unique<hetcast::Service>(cfg, log_from_service);
    } catch (const hetcast::InputError& e) {
        std::cerr << "hetcastd: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "hetcastd: " << e.what() << '\n';
        return 1;
    }
    try {
        service->start();
    } catch (const std::exception& e) {
        std::cerr << "hetcastd: " << e.what() << '\n';
        return 1;
    }
    log_line("INFO", "ready: '" + cfg.name + "' (hetcast " + hetcast::version() + ") on port " +
                         std::to_string(service->port()));

    int sig = 0;
    sigwait(&stop_signals, &sig);
    log_line("INFO", std::string("stopping on ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
    service->stop();
    service.reset();
    log_line("INFO", "stopped");
    return 0;
}
