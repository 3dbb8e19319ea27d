#pragma once
// hetcast-bench's rows for the probe at scale (issue 26 §1): the structure-first probe against
// the flow model on generated sites.

namespace hetcast::bench {

/// Prints per size (100, 1000, 5000 hosts; every pair at 100 for comparison) the
/// measurements, flows and simulated seconds, whether the subnets came out right, and the
/// growth; true when they did every time and the flows grew at most linearly (×12 per ×10).
[[nodiscard]] bool run_probe_rows();

}  // namespace hetcast::bench
