#pragma once
/// What a cut-through plan may lose behind FIFO host NICs that its fluid prediction does not
/// show (docs/model.md, "The FIFO lottery"). Flows that share a FIFO split it anew from one
/// window to the next, anywhere from 10% to 190% of an even share (measured on netlab); a
/// relay that passes on what such a flow brings it can forward no faster than it arrives,
/// window by window, so its own flow gets on average E[min(u, f)] of the u it could carry,
/// not min(u, mean f). With a feed far faster than the relay's own flow nothing is lost; with
/// a feed just faster, up to a quarter.
#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {

/// How far a flow's share of a FIFO strays from its mean, either way, as a fraction of it.
inline constexpr double fifo_lottery_spread = 0.9;

/// E[min(u, f)] / u for a feed f uniform on [(1 − spread)·s, (1 + spread)·s]: what a flow
/// that could carry `u` keeps behind a feed of mean rate `s`. In (0, 1]; 1 when u ≤ (1 −
/// spread)·s. Throws InputError unless u, s > 0 and 0 ≤ spread < 1.
[[nodiscard]] double lottery_keep(double u, double s, double spread = fifo_lottery_spread);

/// The completion of `s` (its timeline `tl`, as simulate() gave it on `net`) when flows draw
/// lots: a relay's flow keeps lottery_keep() of its predicted rate against its feed's mean
/// when the feed's sender NIC is full with it and other flows at once (else it keeps at most
/// the feed's mean), feed before follower, and each flow ends when its bytes have gone at
/// that rate. Only where host NICs are FIFOs (capacity.queues: fifo) and the plan cuts
/// through; tl.completion everywhere else. Never less than tl.completion.
[[nodiscard]] double lottery_completion(const Network& net, const Schedule& s, const Timeline& tl);

}  // namespace hetcast
