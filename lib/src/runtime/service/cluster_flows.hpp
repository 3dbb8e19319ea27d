#pragma once
// How the prober measures (cluster_probe.cpp's measure_cluster, measure_join and
// measure_uplink): pings between members, and flows measured together, each receiver on its
// own clock, their rates over the span they share. Not installed.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "at_once.hpp"
#include "hetcast/runtime/cluster_probe.hpp"
#include "hetcast/runtime/measure.hpp"

namespace hetcast::detail {

/// The most one goodput measurement a prober asks for may send (about 10 s at 6 Gbit/s).
inline constexpr std::uint64_t max_bulk_bytes = std::uint64_t{8} << 30;
inline constexpr auto call_timeout = std::chrono::seconds(10);
using Offsets = std::map<std::string, double>;
/// What a member answers or asks here: a field of the wrong type is named by its key alone.
inline constexpr std::string_view bare;

void note(const ProbeLink& link, const std::string& line);
/// `reps` 64-byte pings from `from` to `to`.
std::vector<PingSample> ping_pair(const ProbeLink& link, const std::string& from, const std::string& to, int reps);
/// Latency from 64-byte pings (ECO §3: the minimum round trip), a few round-robin rounds
/// at once: every pair, or with `partners` > 0 only the first `partners` rounds (each host
/// that many partners; the other pairs NaN) and the prober with every member; the clock
/// offsets of the members come with it.
Matrix ping_latency(const ProbeLink& link, const std::vector<std::string>& names, int reps, Offsets& offsets,
                    const std::function<void(const nlohmann::json&)>& progress, std::size_t partners = 0);
/// Each pair (from, to) pinged, a few at once: the one-way latency, NaN where it failed
/// (ProbeOptions::ping).
std::vector<double> ping_pairs(const ProbeLink& link, const std::vector<std::string>& names,
                               const std::vector<FlowPair>& pairs, int reps);

/// Flows dialled ahead (ProbeOptions::prepare) while the measurement before theirs runs:
/// set-up was a fifth of the 48-host probe's time. Used by the prober's thread only.
class Ahead {
public:
    Ahead(const ProbeLink& link, const std::vector<std::string>& names) : link_(link), names_(names) {}
    void prepare(const std::vector<FlowPair>& flows);
    /// The connection dialled ahead for `f`, if one was.
    std::optional<std::future<std::uint64_t>> take(const FlowPair& f);

private:
    const ProbeLink& link_;
    const std::vector<std::string>& names_;
    std::map<FlowPair, std::deque<std::future<std::uint64_t>>> ahead_;
};

/// Flows measured together: every receiver first dials its sender (unless it did ahead), then
/// all are asked at once to measure, each on a thread that waits for its answer. The rates are
/// taken over the span common to all of them (their arrivals on the prober's clock, through
/// the offsets), or when that is less than half of each one's window, over the earliest one's
/// window (earliest_window_rates: a flow held off through it rates 0 and is measured again),
/// else each over its own. A flow whose receiver answered but could not rate it (too little
/// arrived: it starved; its transfer broke off) is NaN, for the probe to measure again; one
/// that could not connect, or whose receiver did not answer, fails the measurement.
std::vector<double> measure_flows(const ProbeLink& link, const std::vector<std::string>& names,
                                  const std::vector<FlowPair>& flows, double seconds, const Offsets& offsets,
                                  ProbeTimes& times, Ahead& ahead);

}  // namespace hetcast::detail
