#include "hetcast/runtime/measure.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "hetcast/error.hpp"

namespace hetcast {

LinkFit fit_link(const std::vector<PingSample>& samples, double max_bandwidth) {
    std::map<double, double> best;  // size → minimum half round trip
    for (const auto& s : samples) {
        const double half = s.round_trip() / 2;
        auto [it, fresh] = best.emplace(s.size, half);
        if (!fresh) it->second = std::min(it->second, half);
    }
    if (best.size() < 2) throw InputError("a link fit needs samples of at least two sizes");
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double n = static_cast<double>(best.size());
    for (const auto& [x, y] : best) {
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    const double intercept = (sy - slope * sx) / n;
    LinkFit f;
    f.sizes = best.size();
    f.bandwidth = slope > 1.0 / max_bandwidth ? 1.0 / slope : max_bandwidth;
    f.latency = std::max(0.0, intercept);
    return f;
}

double estimate_offset(const std::vector<PingSample>& samples) {
    if (samples.empty()) throw InputError("no samples to estimate a clock offset from");
    const auto best = std::min_element(samples.begin(), samples.end(), [](const PingSample& a, const PingSample& b) {
        return a.round_trip() < b.round_trip();
    });
    return best->peer_time - (best->sent + best->round_trip() / 2);
}

double exchange_offset(double t1, double t2, double t3, double t4) { return ((t2 - t1) + (t3 - t4)) / 2; }

}  // namespace hetcast
