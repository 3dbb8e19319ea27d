#pragma once
/// Generated sites for the probe at scale (tests, hetcast-bench): hosts in subnets behind
/// uplinks, and a measuring callback over them that shares capacity max-min like the flow
/// model (sim/flow.hpp), solved per group of flows that share something, so that a
/// measurement of 5000 flows costs milliseconds.
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "hetcast/map/probe.hpp"

namespace hetcast {

struct SiteParams {
    std::size_t min_subnet = 4, max_subnet = 30;  ///< hosts per subnet, uniform
    double slowest_nic = 100e6 / 8;               ///< bytes/s; NICs up to 10× that, log-uniform
    /// Of the hosts, this share is slower than every uplink both ways (0.4–0.8× the slowest):
    /// no reading tells where they are.
    double slow_share = 0;
    bool shuffled = false;  ///< hosts numbered at random instead of subnet by subnet
};

/// Uplinks 1.5–3× slower than the slowest NIC of a host that is not slow, within 1.7× of each
/// other; each NIC's two directions within 10%. Deterministic for a seed.
struct Site {
    Subnets subnets;
    std::vector<std::size_t> subnet_of;
    Capacities capacities;
    std::vector<char> slow;
};
[[nodiscard]] Site random_site(std::size_t hosts, std::uint64_t seed, const SiteParams& p = {});

/// The flow model's max-min rates on `site` times noise uniform in ±`noise`; with
/// probability `disturbed` a measurement reads every flow at half its rate (a busy host),
/// never twice the same set of flows.
class SiteMeasure {
public:
    SiteMeasure(const Site& site, std::uint64_t seed, double noise = 0.05, double disturbed = 0.1)
        : site_(site), rng_(seed), noise_(noise), disturbed_(disturbed) {}
    std::vector<double> operator()(const std::vector<FlowPair>& flows, double seconds);

private:
    const Site& site_;
    std::mt19937_64 rng_;
    double noise_, disturbed_;
    std::set<std::vector<FlowPair>> hit_;
};

}  // namespace hetcast
