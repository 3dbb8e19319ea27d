#include "probe_rows.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <vector>

#include "hetcast/map/probe.hpp"
#include "hetcast/map/probe_site.hpp"

namespace hetcast::bench {
namespace {

struct Row {
    std::size_t hosts = 0;
    bool every_pair = false;
    std::size_t subnets = 0, measurements = 0, flows = 0;
    double measured = 0, wall = 0;
    bool right = false;
};

Row run(std::size_t hosts, bool every_pair, bool shuffled = false) {
    SiteParams p;
    p.shuffled = shuffled;
    const Site site = random_site(hosts, 26000 + hosts, p);
    SiteMeasure m(site, hosts);
    ProbeOptions o;
    o.pair_matrices = false;
    o.structure_hosts = every_pair ? 0 : 2;
    const MeasureFlows f = [&m](const auto& flows, double s) { return m(flows, s); };
    const auto t0 = std::chrono::steady_clock::now();
    const ProbeResult r = every_pair ? probe_capacities(Matrix(hosts, std::vector<double>(hosts, 1e-4)), f, o)
                                     : probe_structure(hosts, f, o);
    Row row;
    row.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    row.hosts = hosts;
    row.every_pair = every_pair;
    row.subnets = site.subnets.size();
    row.measurements = r.measurements;
    row.flows = r.flows;
    row.measured = r.measured_seconds;
    const auto sets = [](const Subnets& s) {
        std::set<std::set<NodeId>> out;
        for (const auto& g : s) out.emplace(g.begin(), g.end());
        return out;
    };
    row.right = sets(r.subnets) == sets(site.subnets);
    return row;
}

}  // namespace

bool run_probe_rows() {
    std::printf("\n| probe on generated sites | hosts | subnets | measurements | flows | flows per host | simulated s | "
                "subnets right | growth (flows) | CPU-side s |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|\n");
    bool ok = true;
    const Row pairs = run(100, true);
    std::printf("| every pair (steps 1-9) | %zu | %zu | %zu | %zu | %.0f | %.1f | %s |  | %.2f |\n", pairs.hosts,
                pairs.subnets, pairs.measurements, pairs.flows, static_cast<double>(pairs.flows) / 100, pairs.measured,
                pairs.right ? "yes" : "**no**", pairs.wall);
    std::fflush(stdout);
    Row first;
    for (std::size_t hosts : {100, 1000, 5000}) {
        const Row r = run(hosts, false);
        std::string growth;
        if (first.hosts == 0) {
            first = r;
        } else {
            const double e = std::log(static_cast<double>(r.flows) / static_cast<double>(first.flows)) /
                             std::log(static_cast<double>(r.hosts) / static_cast<double>(first.hosts));
            char buf[32];
            std::snprintf(buf, sizeof buf, "N^%.2f", e);
            growth = buf;
            ok = ok && static_cast<double>(r.flows) <= 12 * static_cast<double>(first.flows) * static_cast<double>(r.hosts) /
                                                           static_cast<double>(first.hosts) / 10;
        }
        ok = ok && r.right;
        std::printf("| structure first | %zu | %zu | %zu | %zu | %.1f | %.1f | %s | %s | %.2f |\n", r.hosts, r.subnets,
                    r.measurements, r.flows, static_cast<double>(r.flows) / static_cast<double>(r.hosts), r.measured,
                    r.right ? "yes" : "**no**", growth.c_str(), r.wall);
        std::fflush(stdout);
    }
    // Hosts numbered at random: blocks of neighbours find pieces of subnets, merged after.
    // Shown, not checked: not yet right at these sizes (README, "Scale").
    for (std::size_t hosts : {100, 1000}) {
        const Row r = run(hosts, false, true);
        std::printf("| structure first, hosts numbered at random | %zu | %zu | %zu | %zu | %.1f | %.1f | %s |  | %.2f |\n",
                    r.hosts, r.subnets, r.measurements, r.flows, static_cast<double>(r.flows) / static_cast<double>(r.hosts),
                    r.measured, r.right ? "yes" : "**no**", r.wall);
        std::fflush(stdout);
    }
    return ok;
}

}  // namespace hetcast::bench
