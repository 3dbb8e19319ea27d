// How the prober measures: pings between members, and flows measured together
// (cluster_flows.hpp).
#include "cluster_flows.hpp"

#include <algorithm>
#include <barrier>
#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "hetcast/error.hpp"
#include "hetcast/runtime/membership.hpp"
#include "../wire/json_field.hpp"

namespace hetcast::detail {

using json = nlohmann::json;

namespace {

/// The receiver of a flow dials its sender for a measurement to come; returns the connection.
std::uint64_t dial(const ProbeLink& link, const std::string& from, const std::string& to) {
    const json a = link.call(to, {{"cmd", "goodput"}, {"from", from}, {"connect", true}}, call_timeout);
    if (!field<bool>(a, "ok", false, bare)) throw Error(field<std::string>(a, "error", "?", bare));
    return field<std::uint64_t>(a, "connection", 0, bare);
}

constexpr std::size_t ping_rounds_at_once = 2;

/// Of a measurement from `t1` to `t2`: until its last flow had its first bytes, and from
/// its last bytes to the end (`seen` on the prober's clock).
void count_waits(ProbeTimes& times, const std::vector<Arrivals>& seen, std::chrono::steady_clock::time_point t1,
                 std::chrono::steady_clock::time_point t2) {
    const double from = std::chrono::duration<double>(t1.time_since_epoch()).count();
    const double took = std::chrono::duration<double>(t2 - t1).count();
    double first = -1, last = -1;
    for (const Arrivals& a : seen) {
        if (a.empty()) continue;
        first = std::max(first, a.front().first - from);
        last = std::max(last, a.back().first - from);
    }
    if (first < 0) return;
    times.first_bytes += std::clamp(first, 0.0, took);
    times.answers += std::clamp(took - last, 0.0, took);
}

}  // namespace

void note(const ProbeLink& link, const std::string& line) {
    if (link.note) link.note(line);
}

std::vector<PingSample> ping_pair(const ProbeLink& link, const std::string& from, const std::string& to, int reps) {
    const json a = link.call(from, {{"cmd", "ping"}, {"target", to}, {"sizes", {64}}, {"reps", reps}},
                             std::chrono::minutes(2));
    if (!field<bool>(a, "ok", false, bare)) {
        throw Error("'" + from + "' could not measure '" + to + "': " + field<std::string>(a, "error", "?", bare));
    }
    return samples_from_json(a.at("samples"));
}

Matrix ping_latency(const ProbeLink& link, const std::vector<std::string>& names, int reps, Offsets& offsets,
                    const std::function<void(const json&)>& progress, std::size_t partners) {
    const std::size_t n = names.size();
    Matrix lat(n, std::vector<double>(n, 0));
    for (std::size_t i = 0; partners > 0 && i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) lat[i][j] = i == j ? 0 : std::nan("");
    }
    offsets[link.self] = 0.0;
    std::mutex result_mu;
    std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, std::string>> failed;
    const auto measure_pair = [&](std::uint32_t i, std::uint32_t j) {
        try {
            const auto samples = ping_pair(link, names[i], names[j], reps);
            const auto best = std::min_element(samples.begin(), samples.end(), [](const PingSample& a, const PingSample& b) {
                return a.round_trip() < b.round_trip();
            });
            std::lock_guard lock(result_mu);
            lat[i][j] = lat[j][i] = best->round_trip() / 2;
            // The samples are on i's clock with j's stamps: estimate_offset is j's clock minus i's.
            if (names[i] == link.self) offsets[names[j]] = estimate_offset(samples);
            if (names[j] == link.self) offsets[names[i]] = -estimate_offset(samples);
        } catch (const std::exception& e) {
            std::lock_guard lock(result_mu);
            failed.push_back({{i, j}, e.what()});
        }
    };
    std::size_t done = 0, total = 0;
    // Rounds two at a time: each member in two pairs at most. One at a time, 48 members
    // spent 5.4 s in 47 rounds, mostly dialling (a pair's first ping opens its connection).
    auto rounds = round_robin(static_cast<std::uint32_t>(n));
    if (partners > 0 && partners < rounds.size()) {
        rounds.resize(partners);
        // The prober with every member, for their clock offsets: those the rounds left out,
        // a few at once.
        const auto self = static_cast<std::uint32_t>(std::find(names.begin(), names.end(), link.self) - names.begin());
        std::vector<char> met(n, 0);
        for (const auto& round : rounds) {
            for (auto [i, j] : round) {
                if (i == self) met[j] = 1;
                if (j == self) met[i] = 1;
            }
        }
        constexpr std::size_t self_at_once = 8;
        for (std::uint32_t j = 0; j < n && self < n; ++j) {
            if (j == self || met[j]) continue;
            if (rounds.back().size() >= self_at_once || rounds.back().front().first != self) rounds.emplace_back();
            rounds.back().emplace_back(self, j);
        }
    }
    for (const auto& round : rounds) total += round.size();
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> merged;
    for (std::size_t r = 0; r < rounds.size(); r += ping_rounds_at_once) {
        auto& m = merged.emplace_back();
        for (std::size_t k = r; k < std::min(rounds.size(), r + ping_rounds_at_once); ++k) {
            m.insert(m.end(), rounds[k].begin(), rounds[k].end());
        }
    }
    for (const auto& round : merged) {
        std::vector<std::thread> ts;
        for (auto [i, j] : round) ts.emplace_back(measure_pair, i, j);
        for (auto& t : ts) t.join();
        // A pair that failed among many (a connection that timed out on a busy host) is
        // pinged again alone, twice at most, before it ends the probe.
        for (int again = 0; again < 2 && !failed.empty(); ++again) {
            auto retry = std::move(failed);
            failed.clear();
            for (const auto& [pair, why] : retry) {
                note(link, "probe: pinging " + names[pair.first] + " -> " + names[pair.second] + " failed (" + why +
                               "): pinged again");
                measure_pair(pair.first, pair.second);
            }
        }
        if (!failed.empty()) {
            const auto& [pair, why] = failed.front();
            throw Error("probe failed: pinging " + names[pair.first] + " -> " + names[pair.second] + ": " + why);
        }
        done += round.size();
        if (progress) progress({{"progress", {{"phase", "latency"}, {"pairs", done}, {"of", total}}}});
    }
    return lat;
}

std::vector<double> ping_pairs(const ProbeLink& link, const std::vector<std::string>& names,
                               const std::vector<FlowPair>& pairs, int reps) {
    std::vector<double> out(pairs.size(), std::nan(""));
    at_once(pairs.size(), 16, [&](std::size_t p) {
        const std::string &from = names.at(pairs[p].first), &to = names.at(pairs[p].second);
        try {
            double best = std::numeric_limits<double>::infinity();
            for (const PingSample& x : ping_pair(link, from, to, reps)) best = std::min(best, x.round_trip());
            if (std::isfinite(best)) out[p] = best / 2;
        } catch (const std::exception& e) {
            note(link, "probe: pinging " + from + " -> " + to + " failed (" + e.what() + ")");
        }
    });
    return out;
}

void Ahead::prepare(const std::vector<FlowPair>& flows) {
    for (const FlowPair& f : flows) {
        ahead_[f].push_back(std::async(std::launch::async, [this, f] { return dial(link_, names_[f.first], names_[f.second]); }));
    }
}

std::optional<std::future<std::uint64_t>> Ahead::take(const FlowPair& f) {
    const auto it = ahead_.find(f);
    if (it == ahead_.end()) return std::nullopt;
    std::future<std::uint64_t> got = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) ahead_.erase(it);
    return got;
}

std::vector<double> measure_flows(const ProbeLink& link, const std::vector<std::string>& names,
                                  const std::vector<FlowPair>& flows, double seconds, const Offsets& offsets,
                                  ProbeTimes& times, Ahead& ahead) {
    const auto t0 = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point t1;
    const double warmup = std::min(0.1, seconds / 3);
    std::vector<double> rates(flows.size(), 0);
    std::vector<Arrivals> seen(flows.size());
    std::vector<std::string> failed(flows.size()), unrated(flows.size());
    std::barrier connected(static_cast<std::ptrdiff_t>(flows.size()),
                           [&t1]() noexcept { t1 = std::chrono::steady_clock::now(); });
    std::vector<std::optional<std::future<std::uint64_t>>> dialled;
    for (const FlowPair& f : flows) dialled.push_back(ahead.take(f));
    std::vector<std::thread> ts;
    for (std::size_t k = 0; k < flows.size(); ++k) {
        ts.emplace_back([&, k] {
            const std::string& from = names[flows[k].first];
            const std::string& to = names[flows[k].second];
            // An answer that is not ok: the receiver's own word on this flow.
            const auto ask = [&](const json& req, std::chrono::milliseconds timeout, std::string& refused) {
                json a;
                try {
                    a = link.call(to, req, timeout);
                } catch (const Error& e) {
                    if (to != link.self) throw;
                    a = {{"ok", false}, {"error", e.what()}};
                }
                if (!field<bool>(a, "ok", false, bare)) refused = field<std::string>(a, "error", "?", bare);
                return a;
            };
            std::uint64_t connection = 0;
            try {
                connection = dialled[k] ? dialled[k]->get() : dial(link, from, to);
            } catch (const std::exception& e) {
                failed[k] = from + " -> " + to + ": " + e.what();
            }
            connected.arrive_and_wait();
            if (!failed[k].empty()) return;
            try {
                const json a = ask({{"cmd", "goodput"}, {"connection", connection}, {"seconds", seconds}},
                                   call_timeout + std::chrono::milliseconds(std::lround(seconds * 1e3)), unrated[k]);
                if (!unrated[k].empty()) return;
                rates[k] = field<double>(a, "goodput", 0.0, bare);
                const double start = field<double>(a, "start", 0.0, bare) - (offsets.contains(to) ? offsets.at(to) : 0.0);
                for (const auto& p : a.value("arrivals", json::array())) {
                    seen[k].emplace_back(start + p.at(0).get<double>(), p.at(1).get<std::uint64_t>());
                }
            } catch (const std::exception& e) {
                failed[k] = from + " -> " + to + ": " + e.what();
            }
        });
    }
    for (auto& t : ts) t.join();
    const auto t2 = std::chrono::steady_clock::now();
    times.setup += std::chrono::duration<double>(t1 - t0).count();
    times.measuring += std::chrono::duration<double>(t2 - t1).count();
    count_waits(times, seen, t1, t2);
    for (const auto& f : failed) {
        if (!f.empty()) throw Error("measuring " + f);
    }
    std::vector<Arrivals> rated_seen;
    for (std::size_t k = 0; k < flows.size(); ++k) {
        if (unrated[k].empty() && rates[k] > 0) {
            rated_seen.push_back(std::move(seen[k]));
            continue;
        }
        note(link, "probe: " + names[flows[k].first] + " -> " + names[flows[k].second] + " not rated (" +
                       (unrated[k].empty() ? "no rate" : unrated[k]) + "): measured again");
        rates[k] = std::nan("");
    }
    const double least = (seconds - warmup) / 2;
    auto common = common_window_rates(rated_seen, warmup, least);
    if (!common) common = earliest_window_rates(rated_seen, warmup, least);
    if (!common) return rates;
    for (std::size_t k = 0, r = 0; k < flows.size(); ++k) {
        if (std::isnan(rates[k])) continue;
        rates[k] = (*common)[r++];
        if (rates[k] > 0) continue;
        note(link, "probe: " + names[flows[k].first] + " -> " + names[flows[k].second] +
                       " held off while the others ran: measured again");
        rates[k] = std::nan("");
    }
    return rates;
}


}  // namespace hetcast::detail
