#pragma once
// The structure-first probe's state (map/probe.hpp, probe_structure()): probe_structure.cpp
// finds the subnets, probe_structure_rates.cpp measures NICs and uplinks. Not installed.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hetcast/map/probe.hpp"
#include "probe_model.hpp"
#include "union_find.hpp"

namespace hetcast::probing {

/// The largest sum over one pass of flows first..first+count of a set measured in passes of
/// `per_pass` readings each (run_sets()' `pass_readings`).
[[nodiscard]] double pass_sum(const std::vector<double>& passes, std::size_t per_pass, std::size_t first, std::size_t count);

class Structure {
public:
    Structure(std::size_t n, const Matrix& latency, const MeasureFlows& measure, const ProbeOptions& opt)
        : n_(n), lat_(latency), measure_(measure), opt_(opt), sub_(n, none), eg_(n, 0), in_(n, 0), why_(n),
          limit_(n, 0), tried_with_(n) {}

    ProbeResult run();

    /// A host joining a mapped site: tested against each subnet of `known` (hosts other than
    /// `host`), with `uplink` per subnet; returns the subnet it joins, or none.
    std::size_t join_one(NodeId host, const Subnets& known, const std::vector<double>& uplink,
                         const std::vector<double>& egress, const std::vector<double>& ingress);
    /// Subnet k's uplink measured again on a mapped site (`known`, `uplink`, the NIC rates):
    /// flows out of it and into it at once, as in step 6. The uplink found (inf: the NICs
    /// explain what crossed it) and, when no flow filled it, why in `doubt`.
    double uplink_one(std::size_t k, const Subnets& known, const std::vector<double>& uplink,
                      const std::vector<double>& egress, const std::vector<double>& ingress, std::string& doubt);
    [[nodiscard]] ProbeResult result() { return std::move(out_); }
    [[nodiscard]] double egress(NodeId h) const { return eg_[h]; }
    [[nodiscard]] double ingress(NodeId h) const { return in_[h]; }

private:
    [[nodiscard]] std::string name(NodeId i) const {
        return i < opt_.names.size() ? opt_.names[i] : std::to_string(i);
    }
    [[nodiscard]] double reading(NodeId i, NodeId j) const;
    [[nodiscard]] double tol() const { return 1 + opt_.tolerance; }
    /// Measures the flows together, min(repeats, 2) passes; keeps each flow's largest reading
    /// (an uneven split on a FIFO or a busy host lowers readings, never raises them).
    std::vector<double> run_flows(const std::vector<FlowPair>& flows, std::string_view phase, double scale = 1);
    /// `pass_readings` (when given): per set, every pass's readings one after the other (NaN:
    /// not rated), for sums over one pass (on FIFO links each pass splits a shared link
    /// differently: the largest reading of each flow would add up to more than it carries).
    std::vector<std::vector<double>> run_sets(const std::vector<std::vector<FlowPair>>& sets, std::string_view phase,
                                              double scale = 1, std::vector<std::vector<double>>* pass_readings = nullptr);
    Subnets blocks(std::vector<NodeId> hosts, bool shuffle);
    void groups(Subnets candidates);
    void reverify();
    bool merge();
    void join(std::vector<NodeId> pending);
    void end_passes(std::vector<NodeId> pending);
    void place_rest(const std::vector<NodeId>& rest);
    [[nodiscard]] double own_limit(std::size_t k, std::pair<NodeId, double> to, std::pair<NodeId, double> from,
                                   double best, std::size_t hosts) const;
    /// Whether subnet k may hold h by what h's joins showed (limit_, tried_with_).
    [[nodiscard]] bool may_hold(NodeId h, std::size_t k) const;
    /// Per host of `rest`, the subnet a sharing test places it in, or none; host i's first
    /// `first[i]` candidates of `ranked[i]` are tested first, then four at a time.
    std::vector<std::size_t> sharing(const std::vector<NodeId>& rest, const std::vector<std::vector<std::size_t>>& ranked,
                                     const std::vector<std::size_t>& first);
    void sharing_stage(const std::vector<NodeId>& rest, const std::vector<std::vector<std::size_t>>& ranked,
                       const std::vector<char>& active, const std::vector<std::size_t>& lo,
                       const std::vector<std::size_t>& hi, const std::vector<double>& best_out,
                       const std::vector<double>& best_in, std::vector<std::vector<double>>& kept);
    void nic_estimates();
    void nics();
    void uplinks();
    /// Joins the subnets of each pair (indices into subs_); a joined subnet's uplink is unknown
    /// (inf). False when nothing was joined.
    bool unite(const std::vector<std::pair<std::size_t, std::size_t>>& pairs);
    void finish();
    [[nodiscard]] std::vector<NodeId> by_rate(const std::vector<NodeId>& g, const std::vector<double>& rate) const;
    [[nodiscard]] double evidence(NodeId h, std::size_t k) const;
    /// The subnet where h's evidence is largest, and that evidence (none, 0 without any).
    [[nodiscard]] std::pair<std::size_t, double> best_subnet(NodeId h) const;
    /// The fastest uplink found; 0 when none limited anything.
    [[nodiscard]] double fastest_uplink() const;
    /// Host h's latency to each subnet, the median over its members pinged; NaN for a
    /// subnet with none. Pings (ProbeOptions::ping) more members of a subnet until eight
    /// (or all) are, for every host of `hosts` at once.
    [[nodiscard]] std::vector<std::vector<double>> latency_to_subnets(const std::vector<NodeId>& hosts);

    const std::size_t n_;
    const Matrix& lat_;
    std::unordered_map<std::uint64_t, double> pinged_;  ///< pairs pinged on demand, NaN: no answer
    const MeasureFlows& measure_;
    const ProbeOptions& opt_;
    std::unordered_map<std::uint64_t, double> read_;  ///< the largest reading per ordered pair
    /// Per ordered pair measured in two passes of one set: the larger reading over the smaller.
    std::vector<std::pair<std::uint64_t, double>> pass_ratio_;
    Subnets subs_;
    std::vector<double> up_;  ///< per subnet: the most a test found its uplink to carry (inf: none limited)
    std::vector<std::size_t> sub_;
    std::vector<double> eg_, in_;
    std::vector<std::string> why_;  ///< per host: why its place is in doubt
    /// Per host: a bound its joins showed its own NIC, or its own subnet's uplink, under (0: none).
    std::vector<double> limit_;
    std::vector<std::vector<NodeId>> tried_with_;  ///< per host: a member of each subnet it tried to join
    std::vector<std::string> uplink_doubt_;
    /// Per phase, in the order first met: measurements and their windows' seconds (a note).
    std::vector<std::pair<std::string, std::pair<std::size_t, double>>> spent_;
    ProbeResult out_;
};

}  // namespace hetcast::probing
