#pragma once
// The probe's state while it measures (map/probe.hpp's steps): probe.cpp measures and
// partitions, probe_place.cpp places the hosts set aside and fills in pairs no measurement
// rated. Not installed.
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hetcast/map/probe.hpp"
#include "probe_model.hpp"

namespace hetcast::probing {

/// Uplink tests measure this many times longer than the others. Many flows share one slow
/// FIFO there: some starve for a retransmission timeout (200 ms at least), and when the
/// lost segment arrives the kernel delivers at once everything that crossed the link behind
/// it, so a window about as short as that counts bytes from before it. Seed 1's 20 Mbit/s
/// uplinks in netlab (19.1 of TCP goodput) read 21.4-22.4 in 0.6 s windows, 17.7-19.9 in
/// 1.2 s ones.
constexpr double uplink_window_scale = 4;

/// Whether a reading is a rate: a flow the callback could not rate is NaN.
[[nodiscard]] inline bool rated(double x) { return !std::isnan(x); }

[[nodiscard]] double median(std::vector<double> v);
[[nodiscard]] std::string mbit(double bytes_per_s);
[[nodiscard]] std::string percent(double x);
/// Throws InputError for options out of range, or names that are not one per host.
void check_options(const ProbeOptions& opt, std::size_t n);

/// One call of the callback (windows `scale` times opt.seconds), counted in `out` and
/// checked: a rate per flow, NaN for a flow it could not rate (0 or NaN). Throws Error for
/// a wrong number of rates or one that is negative or infinite. Both probes measure with it.
[[nodiscard]] std::vector<double> measure_once(const MeasureFlows& measure, const ProbeOptions& opt, ProbeResult& out,
                                               const std::vector<FlowPair>& flows, std::string_view phase,
                                               double scale = 1);

/// One measurement of a subnet's uplink: `outs` flows out of it, then flows into it, and
/// every pass's rates (NaN: the flow could not be measured).
struct UplinkRun {
    std::vector<NodeId> subnet;
    std::vector<FlowPair> flows;
    std::size_t outs = 0;
    std::vector<std::vector<double>> passes;
};

/// A subnet found whose rate classes find_hidden() tested: which sit behind an uplink of
/// their own, and what they carried together (the more of out and in).
struct Hidden {
    std::size_t index;
    std::vector<std::vector<NodeId>> classes;
    std::vector<char> behind;  ///< 1: by half the tolerance, 2: by the whole
    std::vector<double> carried;
};

class Prober {
public:
    Prober(const Matrix& latency, const MeasureFlows& measure, const ProbeOptions& opt)
        : lat_(latency), measure_(measure), opt_(opt), n_(latency.size()) {}

    ProbeResult run();

private:
    [[nodiscard]] std::string name(NodeId i) const {
        return i < opt_.names.size() ? opt_.names[i] : std::to_string(i);
    }
    [[nodiscard]] std::string flow_name(const FlowPair& f) const { return name(f.first) + " -> " + name(f.second); }
    [[nodiscard]] bool measured(NodeId i, NodeId j) const { return rated(g_[i][j]); }

    std::vector<double> once(const std::vector<FlowPair>& flows, std::string_view phase, double scale = 1);
    std::vector<std::vector<std::vector<double>>> passes(const std::vector<std::vector<FlowPair>>& sets,
                                                         std::string_view phase, double scale = 1, int count = 0);
    void measure_pairs();
    void again(std::vector<FlowPair> pending, std::size_t size);
    void nic_rates();
    void affinities();
    [[nodiscard]] double normalised(NodeId i, NodeId j) const;
    void costs();
    [[nodiscard]] std::vector<char> set_aside() const;
    [[nodiscard]] double nic(NodeId h) const { return std::min(eg_[h], in_[h]); }
    void use(const Subnets& found);
    bool dissolve(Subnets& found, std::vector<char>& informative);
    [[nodiscard]] Matrix latency_costs(const std::vector<char>& informative) const;
    [[nodiscard]] Subnets partition(const std::vector<char>& informative) const;
    void measure_uplinks(const Subnets& found);
    double uplink_of(const UplinkRun& run, std::size_t k, const Subnets& found);
    [[nodiscard]] bool held_back(const UplinkRun& run, std::size_t k, double factor) const;
    void place(NodeId h, const Subnets& core, Subnets& found);
    [[nodiscard]] bool outside(NodeId h, std::size_t k, const Subnets& core);
    void receive_only(const std::vector<FlowPair>& flows, int count);
    [[nodiscard]] bool closer(NodeId h, const Subnets& core, std::size_t a, std::size_t b) const;
    [[nodiscard]] std::vector<std::size_t> contradictions(NodeId h, const Subnets& core) const;
    [[nodiscard]] std::vector<Hidden> find_hidden(const Subnets& found);
    [[nodiscard]] std::vector<NodeId> beside_uplink(const std::vector<NodeId>& cls, const std::vector<NodeId>& group);
    void split_hidden(Subnets& found, std::vector<char>& informative);
    void estimate_unmeasured(const std::vector<std::size_t>& sub, const std::vector<double>& uplink);
    void finish(Subnets& found);

    const Matrix& lat_;
    const MeasureFlows& measure_;
    const ProbeOptions& opt_;
    const std::size_t n_;
    /// Medians of the pair measurements, NaN for a pair none could rate; the flows each was
    /// measured with (an index into sets_).
    Matrix g_, aff_, cost_;
    /// The largest reading of each pair: what ECO partitions on (see normalised()).
    Matrix top_;
    std::vector<std::vector<std::size_t>> with_;
    std::vector<std::vector<FlowPair>> sets_;
    std::vector<double> eg_, in_;
    std::set<NodeId> alone_;           ///< hosts whose ingress receive_only() measured
    std::set<std::size_t> receiving_;  ///< those measurements, in sets_
    Model model_;
    std::map<std::vector<FlowPair>, std::vector<std::vector<double>>> baselines_;  ///< [pass][flow]
    std::vector<UplinkRun> runs_;
    std::set<NodeId> set_apart_;  ///< hosts outside() found behind an uplink of their own
    std::map<NodeId, std::string> doubt_;  ///< hosts placed on no evidence, and why
    ProbeResult out_;
};

}  // namespace hetcast::probing
