#include "auto_rows.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <optional>
#include <ostream>
#include <sstream>
#include <vector>

#include "hetcast/model/generators.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/sched/auto.hpp"
#include "hetcast/sched/plan.hpp"

namespace hetcast::bench {
namespace {

constexpr std::size_t subnet_hosts = 20;
constexpr double gbit = 1e9 / 8;
constexpr double subnet_latency = 50e-6;
constexpr double across_latency = 200e-6;

struct Row {
    std::size_t hosts;
    double max_seconds;  // 0: no target
    double max_mib;      // 0: no target
    bool load;           // parse the map's YAML text too
};

struct Measured {
    bool done = false;
    double seconds = 0;
    double cpu = 0;
    double peak_mib = 0;
    double predicted = 0;
    std::size_t candidates = 0;
};

double cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The child's half: plan once (with `from_yaml`, load the map from its YAML text first, as
// `hetcast plan` does, and time both), write seconds, completion and candidates to `fd`.
[[noreturn]] void plan_in_child(std::size_t hosts, bool from_yaml, int fd) {
    std::optional<Network> net;
    std::string text;
    if (from_yaml) {
        std::ostringstream out;
        write_capacity_map(out, capacity_map(hosts, 26000 + hosts));
        text = out.str();
    } else {
        net = capacity_map(hosts, 26000 + hosts);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    if (from_yaml) net = parse_network(text, "generated map");
    const PlanRequest req = make_request(*net, 0, {}, 1024.0 * 1024 * 1024, ExecModel::nonblocking);
    const AutoChoice c = plan_auto_explained(*net, req);
    const double cpu = cpu_seconds() - cpu0;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double best = 0;
    for (const auto& [name, t] : c.predicted) {
        if ("auto:" + name == c.best.algorithm) best = t;
    }
    const double out[4] = {s, best, static_cast<double>(c.predicted.size()), cpu};
    const bool ok = write(fd, out, sizeof out) == static_cast<ssize_t>(sizeof out);
    _exit(ok ? 0 : 1);
}

Measured measure(std::size_t hosts, bool from_yaml, double limit) {
    int fds[2];
    if (pipe(fds) != 0) return {};
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) return {};
    if (pid == 0) {
        close(fds[0]);
        alarm(static_cast<unsigned>(std::ceil(limit)));
        try {
            plan_in_child(hosts, from_yaml, fds[1]);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "hetcast-bench: auto at %zu hosts: %s\n", hosts, e.what());
            _exit(1);
        }
    }
    close(fds[1]);
    double in[4] = {0, 0, 0, 0};
    const bool got = read(fds[0], in, sizeof in) == static_cast<ssize_t>(sizeof in);
    close(fds[0]);
    int status = 0;
    rusage ru{};
    wait4(pid, &status, 0, &ru);
    Measured m;
    m.done = got && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    m.seconds = m.done ? in[0] : limit;
    m.predicted = in[1];
    m.cpu = m.done ? in[3] : limit;
    m.candidates = static_cast<std::size_t>(in[2]);
    m.peak_mib = static_cast<double>(ru.ru_maxrss) / 1024;  // kilobytes on Linux
    return m;
}

}  // namespace

Network capacity_map(std::size_t hosts, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<std::string> names;
    Subnets subnets((hosts + subnet_hosts - 1) / subnet_hosts);
    for (std::size_t i = 0; i < hosts; ++i) {
        names.push_back("s" + std::to_string(i / subnet_hosts) + "h" + std::to_string(i % subnet_hosts));
        subnets[i / subnet_hosts].push_back(static_cast<NodeId>(i));
    }
    Capacities c;
    for (std::size_t i = 0; i < hosts; ++i) c.egress.push_back(rng.uniform({0.1 * gbit, 10 * gbit}));
    c.ingress = c.egress;
    c.disk.assign(hosts, std::numeric_limits<double>::infinity());
    for (std::size_t k = 0; k < subnets.size(); ++k) c.uplink.push_back(rng.uniform({1 * gbit, 10 * gbit}));
    Matrix latency(hosts, std::vector<double>(hosts, 0.0));
    Matrix bandwidth(hosts, std::vector<double>(hosts, 0.0));
    for (std::size_t i = 0; i < hosts; ++i) {
        for (std::size_t j = 0; j < hosts; ++j) {
            if (i == j) continue;
            const std::size_t si = i / subnet_hosts, sj = j / subnet_hosts;
            double b = std::min(c.egress[i], c.ingress[j]);
            if (si != sj) b = std::min({b, c.uplink[si], c.uplink[sj]});
            bandwidth[i][j] = b;
            latency[i][j] = si == sj ? subnet_latency : across_latency;
        }
    }
    Network net = Network::parametric(std::move(names), std::move(latency), std::move(bandwidth),
                                      std::vector<Overhead>(hosts), std::vector<Overhead>(hosts));
    net.set_subnets(std::move(subnets));
    net.set_capacities(std::move(c));
    return net;
}

void write_capacity_map(std::ostream& out, const Network& net, bool full_matrices) {
    const std::size_t n = net.size();
    const auto list = [&](const std::vector<double>& v) {
        out << '[';
        for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
        out << "]\n";
    };
    out.precision(17);
    out << "name: generated capacity map (hetcast-bench --write-map)\nnodes: [";
    for (std::size_t i = 0; i < n; ++i) out << (i ? ", " : "") << net.name(static_cast<NodeId>(i));
    out << "]\n";
    if (full_matrices) {
        out << "latency:\n";
        for (const auto& row : net.latency()) {
            out << "  - ";
            list(row);
        }
        out << "bandwidth:\n";
        for (std::size_t i = 0; i < n; ++i) {
            std::vector<double> row = net.bandwidth()[i];
            row[i] = row[i == 0 ? 1 : 0];  // the diagonal is ignored but must be positive
            out << "  - ";
            list(row);
        }
    } else {
        // The loader derives the pair bandwidths from the capacities, as capacity_map does.
        out << "latency: {subnet: " << subnet_latency << ", across: " << across_latency << "}\n";
    }
    out << "subnets:\n";
    for (const auto& s : *net.subnets()) {
        out << "  - [";
        for (std::size_t i = 0; i < s.size(); ++i) out << (i ? ", " : "") << net.name(s[i]);
        out << "]\n";
    }
    const auto& c = *net.capacities();
    out << "capacity:\n  nic: ";
    list(c.egress);
    out << "  uplink: ";
    list(c.uplink);
}

bool run_auto_rows(double limit) {
    // load: the same from the YAML text --write-map writes (what `hetcast plan FILE` does).
    const std::vector<Row> rows = {{100, 0, 0, false},   {300, 0, 0, false},   {1000, 2, 256, false},
                                   {5000, 20, 0, false}, {1000, 2, 256, true}, {5000, 20, 0, true}};
    std::printf("\n| auto on generated capacity maps | hosts | seconds | CPU seconds | peak MiB | candidates | predicted s | "
                "growth (CPU) | target | result |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
    bool ok = true;
    double prev_s = 0;
    std::size_t prev_n = 0;
    for (const Row& r : rows) {
        if (r.load && !rows[&r - rows.data() - 1].load) prev_n = 0;
        const Measured m = measure(r.hosts, r.load, limit);
        std::string growth;
        if (prev_n && m.done && prev_s > 0) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "N^%.2f",
                          std::log(m.cpu / prev_s) / std::log(static_cast<double>(r.hosts) / prev_n));
            growth = buf;
        }
        std::string target, result;
        if (r.max_seconds > 0) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "<= %g CPU s", r.max_seconds);
            target = buf;
            if (r.max_mib > 0) {
                std::snprintf(buf, sizeof buf, ", <= %g MiB", r.max_mib);
                target += buf;
            }
            // CPU time: the machine may be shared, and planning takes one thread.
            const bool pass = m.done && m.cpu <= r.max_seconds && (r.max_mib == 0 || m.peak_mib <= r.max_mib);
            result = pass ? "pass" : "**miss**";
            ok = ok && pass;
        }
        char secs[32], cpu[32];
        if (m.done) {
            std::snprintf(secs, sizeof secs, "%.2f", m.seconds);
            std::snprintf(cpu, sizeof cpu, "%.2f", m.cpu);
        } else {
            std::snprintf(secs, sizeof secs, "> %.0f (stopped)", limit);
            std::snprintf(cpu, sizeof cpu, "-");
        }
        std::printf("| %s | %zu | %s | %s | %.0f | %zu | %.3f | %s | %s | %s |\n",
                    r.load ? "load + auto, 1 GiB broadcast" : "auto, 1 GiB broadcast", r.hosts, secs, cpu,
                    m.peak_mib, m.candidates, m.predicted, growth.c_str(), target.c_str(), result.c_str());
        std::fflush(stdout);
        if (m.done) {
            prev_s = m.cpu;
            prev_n = r.hosts;
        }
    }
    return ok;
}

}  // namespace hetcast::bench
