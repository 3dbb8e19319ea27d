#pragma once
/// Turning ping-pong samples into the cost model (ECO §3: keep the minimum round trip).
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "hetcast/map/probe.hpp"  // round_robin, the rounds pings and probes go in

namespace hetcast {

/// The longest goodput measurement a peer sends or takes.
inline constexpr double max_goodput_seconds = 10;

/// What the receiving member measured of a bulk transfer (Peer::goodput_from).
struct Goodput {
    double rate = 0;          ///< bytes/s from the end of the warm-up to the end of the window
    std::uint64_t bytes = 0;  ///< received in all
    double seconds = 0;       ///< the span the rate was measured over
    /// (time on this peer's steady clock, bytes so far) from the first byte to the end
    /// of the window, the latest arrival of each millisecond.
    std::vector<std::pair<double, std::uint64_t>> arrivals;
};

/// One ping-pong exchange of `size` bytes each way, timed on the prober's clock
/// (`sent`, `received`) and stamped by the peer on its own clock (`peer_time`) when it
/// echoed. Seconds.
struct PingSample {
    double size = 0;
    double sent = 0;
    double peer_time = 0;
    double received = 0;
    [[nodiscard]] double round_trip() const { return received - sent; }
};

/// Latency (s) and bandwidth (bytes/s) of one direction, from the least-squares line
/// half_rtt(size) = latency + size / bandwidth over the minimum round trip per size.
struct LinkFit {
    double latency = 0;
    double bandwidth = 0;
    std::size_t sizes = 0;  ///< distinct sizes the fit used
};

/// Needs at least two distinct sizes; a slope that is not positive (noise on a very fast
/// link) gives `max_bandwidth`. Latency is clamped at zero.
[[nodiscard]] LinkFit fit_link(const std::vector<PingSample>& samples, double max_bandwidth = 1e11);

/// The peer's clock minus the prober's, from the exchange with the smallest round trip:
/// the peer stamped its reply half a round trip after `sent` (Cristian's algorithm).
[[nodiscard]] double estimate_offset(const std::vector<PingSample>& samples);

/// Peer clock minus ours from one exchange with two stamps on each side (NTP's formula):
/// we sent at t1, the peer received at t2 and answered at t3 (its clock), the answer came
/// back at t4. The peer's processing time between t2 and t3 cancels out.
[[nodiscard]] double exchange_offset(double t1, double t2, double t3, double t4);

/// What a receiver saw of one bulk transfer: (time, bytes so far) at arrivals, on the
/// prober's clock (the receiver's minus its offset).
using Arrivals = std::vector<std::pair<double, std::uint64_t>>;

/// The rates of flows measured together, over the span in which every one of them was past
/// its `warmup` (from its first arrival) and not yet at its last arrival: flows that start a
/// little apart would otherwise each count a while with fewer competitors. Bytes between
/// arrivals are interpolated. Nothing when that span is shorter than `least` seconds or a
/// flow has fewer than two arrivals.
[[nodiscard]] std::optional<std::vector<double>> common_window_rates(const std::vector<Arrivals>& flows, double warmup,
                                                                     double least);

/// When flows started together do not overlap for long (one was held off: on a tail-drop
/// FIFO a SYN or the first window can wait a whole retransmission timeout), their own
/// windows would let each count the link alone and their sum overshoot it. Instead: every
/// flow over the earliest one's window (its first arrival plus `warmup` to its last), with
/// no bytes before a flow's first arrival, so a flow held off through it rates 0 (for the
/// probe to measure it again). Nothing for fewer than two flows, or when that window is
/// shorter than `least` seconds (then each flow's own rate is all there is).
[[nodiscard]] std::optional<std::vector<double>> earliest_window_rates(const std::vector<Arrivals>& flows, double warmup,
                                                                       double least);

}  // namespace hetcast
