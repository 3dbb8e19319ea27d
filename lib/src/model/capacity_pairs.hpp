#pragma once
// What the network file reader and writer share about a network whose pair bandwidths
// follow from its capacities (a file without 'bandwidth'). Internal to lib/src.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "hetcast/model/network.hpp"

namespace hetcast::detail {

/// The rate of i -> j alone: i's NIC out, j's NIC in and disk, and both uplinks across
/// subnets (`subnet_of` may be empty when `c.uplink` is).
inline double capacity_pair_rate(const Capacities& c, const std::vector<std::size_t>& subnet_of, std::size_t i,
                                 std::size_t j) {
    double b = std::min({c.egress[i], c.ingress[j], c.disk[j]});
    if (!c.uplink.empty() && subnet_of[i] != subnet_of[j]) {
        b = std::min({b, c.uplink[subnet_of[i]], c.uplink[subnet_of[j]]});
    }
    return b;
}

}  // namespace hetcast::detail
