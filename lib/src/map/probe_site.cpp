#include "hetcast/map/probe_site.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "hetcast/error.hpp"
#include "hetcast/sim/flow.hpp"
#include "union_find.hpp"

namespace hetcast {

Site random_site(std::size_t hosts, std::uint64_t seed, const SiteParams& p) {
    if (hosts < 2 || p.min_subnet < 1 || p.max_subnet < p.min_subnet) throw InputError("random_site: bad sizes");
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<std::size_t> sizes;
    for (std::size_t left = hosts; left > 0;) {
        std::size_t z = p.min_subnet + rng() % (p.max_subnet - p.min_subnet + 1);
        if (left - std::min(z, left) < p.min_subnet) z = left;  // no runt at the end
        z = std::min(z, left);
        sizes.push_back(z);
        left -= z;
    }
    std::vector<NodeId> number(hosts);
    std::iota(number.begin(), number.end(), NodeId{0});
    if (p.shuffled) std::shuffle(number.begin(), number.end(), rng);
    Site s;
    s.subnet_of.assign(hosts, 0);
    s.slow.assign(hosts, 0);
    auto& c = s.capacities;
    c.egress.assign(hosts, 0);
    c.ingress.assign(hosts, 0);
    c.disk.assign(hosts, std::numeric_limits<double>::infinity());
    double slowest = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0, at = 0; k < sizes.size(); ++k) {
        auto& g = s.subnets.emplace_back();
        for (std::size_t i = 0; i < sizes[k]; ++i, ++at) {
            const NodeId h = number[at];
            g.push_back(h);
            s.subnet_of[h] = k;
            const double r = p.slowest_nic * std::pow(10.0, u(rng));
            c.egress[h] = r * (0.9 + 0.2 * u(rng));
            c.ingress[h] = r * (0.9 + 0.2 * u(rng));
            // Two hosts of each subnet are never slow: the subnet shows.
            s.slow[h] = i >= 2 && u(rng) < p.slow_share;
            if (!s.slow[h]) slowest = std::min({slowest, c.egress[h], c.ingress[h]});
        }
        std::sort(g.begin(), g.end());
    }
    const double umax = slowest / (1.5 + 1.5 * u(rng));
    for (std::size_t k = 0; k < sizes.size(); ++k) c.uplink.push_back(umax * (0.6 + 0.4 * u(rng)));
    const double umin = *std::min_element(c.uplink.begin(), c.uplink.end());
    for (NodeId h = 0; h < hosts; ++h) {
        if (s.slow[h]) c.egress[h] = c.ingress[h] = umin * (0.4 + 0.4 * u(rng));
    }
    return s;
}

std::vector<double> SiteMeasure::operator()(const std::vector<FlowPair>& flows, double) {
    const std::size_t n = site_.subnet_of.size(), subnets = site_.subnets.size();
    const auto& c = site_.capacities;
    // Resources: egress per host, ingress per host, uplink out and in per subnet.
    const auto capacity = [&](std::size_t r) {
        return r < n ? c.egress[r] : r < 2 * n ? c.ingress[r - n] : c.uplink[(r - 2 * n) % subnets];
    };
    std::vector<std::vector<std::size_t>> uses(flows.size());
    for (std::size_t f = 0; f < flows.size(); ++f) {
        const auto [i, j] = flows[f];
        if (i >= n || j >= n || i == j) throw InputError("SiteMeasure: bad flow");
        uses[f] = {i, n + j};
        const std::size_t a = site_.subnet_of[i], b = site_.subnet_of[j];
        if (a != b) {
            uses[f].push_back(2 * n + a);
            uses[f].push_back(2 * n + subnets + b);
        }
    }
    // Flows that share no resource share nothing: solve each connected group alone.
    probing::UnionFind linked(flows.size());
    std::vector<std::size_t> owner(2 * n + 2 * subnets, std::numeric_limits<std::size_t>::max());
    for (std::size_t f = 0; f < flows.size(); ++f) {
        for (std::size_t r : uses[f]) {
            if (owner[r] == std::numeric_limits<std::size_t>::max()) {
                owner[r] = f;
            } else {
                linked.unite(f, owner[r]);
            }
        }
    }
    std::vector<std::vector<std::size_t>> groups(flows.size());
    for (std::size_t f = 0; f < flows.size(); ++f) groups[linked.find(f)].push_back(f);
    std::vector<double> rate(flows.size(), 0);
    std::vector<std::size_t> local(owner.size(), std::numeric_limits<std::size_t>::max());
    for (const auto& g : groups) {
        if (g.empty()) continue;
        std::vector<double> caps;
        std::vector<FlowPath> paths;
        for (std::size_t f : g) {
            FlowPath path{{}, std::numeric_limits<double>::infinity()};
            for (std::size_t r : uses[f]) {
                if (local[r] == std::numeric_limits<std::size_t>::max()) {
                    local[r] = caps.size();
                    caps.push_back(capacity(r));
                }
                path.resources.push_back(local[r]);
            }
            paths.push_back(std::move(path));
        }
        const auto r = max_min_rates(caps, paths);
        for (std::size_t k = 0; k < g.size(); ++k) rate[g[k]] = r[k];
        for (std::size_t f : g) {
            for (std::size_t res : uses[f]) local[res] = std::numeric_limits<std::size_t>::max();
        }
    }
    std::uniform_real_distribution<double> noise(1 - noise_, 1 + noise_), u(0, 1);
    const bool outlier = u(rng_) < disturbed_ && hit_.insert(flows).second;
    for (double& x : rate) x *= noise(rng_) * (outlier ? 0.5 : 1.0);
    return rate;
}

}  // namespace hetcast
