#include "hetcast/map/eco.hpp"

#include "hetcast/error.hpp"

namespace hetcast {

Subnets eco_partition(const Matrix&, double) { throw Error("eco_partition: not implemented yet"); }
Matrix eco_edge_costs(const Network& net, double m) {
    return net.latency().empty() ? net.cost_matrix(m) : net.latency();
}

}  // namespace hetcast
