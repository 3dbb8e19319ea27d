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

namespace {

/// Bytes so far at time t, between the arrivals around it.
double bytes_at(const Arrivals& a, double t) {
    const auto after = std::lower_bound(a.begin(), a.end(), t, [](const auto& p, double x) { return p.first < x; });
    if (after == a.begin()) return static_cast<double>(a.front().second);
    if (after == a.end()) return static_cast<double>(a.back().second);
    const auto& [t1, b1] = *after;
    const auto& [t0, b0] = *std::prev(after);
    return static_cast<double>(b0) + (static_cast<double>(b1) - static_cast<double>(b0)) * (t - t0) / (t1 - t0);
}

}  // namespace

std::optional<std::vector<double>> common_window_rates(const std::vector<Arrivals>& flows, double warmup, double least) {
    double from = -std::numeric_limits<double>::infinity(), to = std::numeric_limits<double>::infinity();
    for (const auto& a : flows) {
        if (a.size() < 2) return std::nullopt;
        from = std::max(from, a.front().first + warmup);
        to = std::min(to, a.back().first);
    }
    if (flows.empty() || !(to - from >= least)) return std::nullopt;
    std::vector<double> rates;
    for (const auto& a : flows) rates.push_back((bytes_at(a, to) - bytes_at(a, from)) / (to - from));
    return rates;
}

std::optional<std::vector<double>> earliest_window_rates(const std::vector<Arrivals>& flows, double warmup, double least) {
    if (flows.size() < 2) return std::nullopt;
    const Arrivals* first = nullptr;
    for (const auto& a : flows) {
        if (a.size() >= 2 && (!first || a.front().first < first->front().first)) first = &a;
    }
    if (!first) return std::nullopt;
    const double from = first->front().first + warmup, to = first->back().first;
    if (!(to - from >= least)) return std::nullopt;
    std::vector<double> rates(flows.size(), 0);
    const auto bytes = [](const Arrivals& a, double t) { return t < a.front().first ? 0.0 : bytes_at(a, t); };
    for (std::size_t k = 0; k < flows.size(); ++k) {
        if (flows[k].empty()) continue;
        rates[k] = std::max(0.0, bytes(flows[k], to) - bytes(flows[k], from)) / (to - from);
    }
    return rates;
}

double exchange_offset(double t1, double t2, double t3, double t4) { return ((t2 - t1) + (t3 - t4)) / 2; }

}  // namespace hetcast
