// hetcastd: the hetcast peer daemon. Thin: parses flags, starts a hetcast::Service, waits
// for SIGINT/SIGTERM. The logic lives in lib/ (hetcast/runtime/service.hpp).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include <boost/program_options.hpp>
#include <systemd/sd-daemon.h>

#include "build_version.hpp"
#include "hetcast/error.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/runtime/service.hpp"
#include "logging.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using hetcast::LogLevel;
using hetcastd::log_line;

namespace {

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

const char* level_name(LogLevel l) {
    constexpr const char* names[] = {"trace", "debug", "info", "warn", "error"};
    return names[static_cast<int>(l)];
}

/// systemd's readiness protocol ($NOTIFY_SOCKET; nothing without it).
void notify(const std::string& state) { (void)sd_notify(0, state.c_str()); }

}  // namespace

int main(int argc, char** argv) {
    std::string config, name, listen, dest_root, state_dir, link_profile, join, identity, cluster, log_level;
    po::options_description opts("hetcastd: the hetcast peer daemon (logs to stderr and STATE_DIR/hetcastd.log; to the\n"
                                 "journal with syslog priorities when systemd connects stderr to it)\n\n"
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
        "join", po::value(&join), "HOST:PORT of a running member: join its cluster (member list and map come from it)")(
        "log-level", po::value(&log_level), "log lines from LEVEL up: trace, debug, info (default), warn, error");

    // Under systemd's journal a failure to start is an error there too (SyslogLevelPrefix).
    const bool journal = hetcastd::stderr_is_journal();
    const char* failed = journal ? "<3>hetcastd: " : "hetcastd: ";
    hetcast::DaemonConfig cfg;
    // The file, then the flags over it: at start and again on SIGHUP.
    const auto read_config = [&](const std::optional<LogLevel>& level) {
        hetcast::DaemonConfig c = hetcast::load_daemon_config(config);
        if (level) c.log_level = *level;
        if (!name.empty()) c.name = name;
        if (!listen.empty()) parse_listen(listen, c);
        if (!dest_root.empty()) c.dest_root = fs::absolute(dest_root);
        if (!state_dir.empty()) c.state_dir = fs::absolute(state_dir);
        if (!link_profile.empty()) c.link_profile = fs::absolute(link_profile);
        if (!identity.empty()) c.identity_file = fs::absolute(identity);
        if (!cluster.empty()) c.cluster_file = fs::absolute(cluster);
        if (!join.empty()) c.seeds.insert(c.seeds.begin(), join);
        return c;
    };
    std::optional<LogLevel> level;
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
        if (vm.count("log-level") && !(level = hetcast::parse_log_level(log_level))) {
            throw hetcast::InputError("--log-level: expected one of " + std::string(hetcast::log_level_names) +
                                      ", got '" + log_level + "'");
        }
        if (config.empty()) throw hetcast::InputError("--config FILE is required (see --help)");
        cfg = read_config(level);
    } catch (const po::error& e) {
        std::cerr << failed << e.what() << " (see --help)\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << failed << e.what() << '\n';
        return 2;
    }

    // Every thread the service starts inherits this mask; only sigwait below sees the signals.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);

    std::error_code ec;
    fs::create_directories(cfg.state_dir, ec);
    try {
        hetcastd::start_logging(cfg.log_level, journal, cfg.state_dir / "hetcastd.log");
    } catch (const std::exception&) {
        std::cerr << failed << "cannot open " << (cfg.state_dir / "hetcastd.log").string() << " for appending\n";
        return 1;
    }

    std::unique_ptr<hetcast::Service> service;
    try {
        service = std::make_unique<hetcast::Service>(cfg, log_line);
    } catch (const hetcast::InputError& e) {
        std::cerr << failed << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << failed << e.what() << '\n';
        return 1;
    }
    try {
        service->start();
    } catch (const hetcast::InputError& e) {
        std::cerr << failed << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << failed << e.what() << '\n';
        return 1;
    }
    log_line(LogLevel::info, "ready: '" + cfg.name + "' (hetcast " + hetcast::version() + ") on port " +
                         std::to_string(service->port()));
    notify("READY=1\nSTATUS=serving on port " + std::to_string(service->port()) + "\nMAINPID=" + std::to_string(::getpid()));

    int sig = 0;
    while (sigwait(&stop_signals, &sig) == 0 && sig == SIGHUP) {
        // Re-reads what can change while serving; a bad file changes nothing.
        notify("RELOADING=1");
        try {
            const hetcast::DaemonConfig next = read_config(level);
            if (next.log_level != cfg.log_level) {
                // Said at whichever of the two levels shows an info line.
                const std::string line = std::string("SIGHUP: log_level ") + level_name(cfg.log_level) + " -> " +
                                         level_name(next.log_level);
                if (next.log_level > cfg.log_level) log_line(LogLevel::info, line);
                hetcastd::set_log_level(next.log_level);
                if (next.log_level < cfg.log_level) log_line(LogLevel::info, line);
            }
            const auto changes = service->reload(next);
            for (const auto& line : changes) log_line(LogLevel::info, "SIGHUP: " + line);
            if (changes.empty() && next.log_level == cfg.log_level) log_line(LogLevel::info, "SIGHUP: nothing changed");
            cfg.log_level = next.log_level;
        } catch (const std::exception& e) {
            log_line(LogLevel::error, std::string("SIGHUP: kept the running configuration: ") + e.what());
        }
        notify("READY=1");
    }
    log_line(LogLevel::info, std::string("stopping on ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
    notify("STOPPING=1");
    service->stop();
    service.reset();
    log_line(LogLevel::info, "stopped");
    return 0;
}
