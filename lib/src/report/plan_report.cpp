#include "hetcast/report/plan_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "hetcast/sim/lottery.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/pattern_bound.hpp"

namespace hetcast {
namespace {

// The transfer table shared by print_plan and print_pattern: one line per transfer, in
// timeline order; `with_message` adds a column with the transfer's message index.
void print_transfers(std::ostream& out, const Network& net, const Timeline& tl, bool with_message) {
    char line[256];
    char msg[32] = "";
    if (with_message) std::snprintf(msg, sizeof msg, "%4s  ", "msg");
    std::snprintf(line, sizeof line, "  %4s  %s%-12s %-12s %12s %12s %12s\n", "#", msg, "from", "to", "start",
                  "sender free", "complete");
    out << line;
    std::size_t k = 0;
    for (const auto& t : tl.transfers) {
        if (with_message) std::snprintf(msg, sizeof msg, "%4u  ", static_cast<unsigned>(t.message));
        std::snprintf(line, sizeof line, "  %4zu  %s%-12s %-12s %12s %12s %12s\n", ++k, msg,
                      net.name(t.from).c_str(), net.name(t.to).c_str(), format_seconds(t.start).c_str(),
                      format_seconds(t.sender_free).c_str(), format_seconds(t.complete).c_str());
        out << line;
    }
}

// A byte count as an integer when it is one (1048576, not 1.04858e+06).
std::string format_bytes(double bytes) {
    char buf[64];
    if (bytes == std::floor(bytes) && std::fabs(bytes) < 1e18) std::snprintf(buf, sizeof buf, "%.0f", bytes);
    else std::snprintf(buf, sizeof buf, "%g", bytes);
    return buf;
}

std::string nodes(std::size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

// "completion X, lower bound Y (Z x the bound)".
void print_summary(std::ostream& out, const PlanResult& r) {
    out << "completion " << format_seconds(r.timeline.completion) << ", lower bound "
        << format_seconds(r.lower_bound);
    if (r.lower_bound > 0) {
        char line[64];
        std::snprintf(line, sizeof line, " (%.2fx the bound)", r.timeline.completion / r.lower_bound);
        out << line;
    }
    out << '\n';
}

// Sorted by completion time; stable, so ties keep the registry's order.
void sort_by_completion(std::vector<PlanResult>& out) {
    std::stable_sort(out.begin(), out.end(), [](const PlanResult& a, const PlanResult& b) {
        return a.timeline.completion < b.timeline.completion;
    });
}

PatternResult plan_pattern_with_bound(const Network& net, const PatternRequest& req, const PatternAlgorithm& algo,
                                      double lower_bound) {
    Schedule s = algo.plan(net, req);
    Timeline tl = simulate(net, s, req.model);
    return PatternResult{std::move(s), std::move(tl), lower_bound};
}

/// Bytes as a whole number when they are one (a size read from "64KiB" always is).
nlohmann::json bytes_json(double bytes) {
    if (bytes >= 0 && bytes < 0x1p53 && bytes == std::floor(bytes)) return static_cast<std::uint64_t>(bytes);
    return bytes;
}

nlohmann::json messages_json(const Network& net, const Schedule& s) {
    nlohmann::json messages = nlohmann::json::array();
    for (std::size_t k = 0; k < s.messages.size(); ++k) {
        const Message& m = s.messages[k];
        nlohmann::json dests = nlohmann::json::array();
        for (NodeId d : m.dests) dests.push_back(net.name(d));
        messages.push_back({{"id", k}, {"source", net.name(m.source)}, {"size", bytes_json(m.size)}, {"dests", std::move(dests)}});
    }
    return messages;
}

nlohmann::json transfers_json(const Network& net, const Timeline& tl) {
    nlohmann::json transfers = nlohmann::json::array();
    for (const auto& t : tl.transfers) {
        transfers.push_back({{"message", t.message},
                             {"from", net.name(t.from)},
                             {"to", net.name(t.to)},
                             {"start", t.start},
                             {"sender_free", t.sender_free},
                             {"arrival", t.arrival},
                             {"complete", t.complete}});
    }
    return transfers;
}

std::string relay_name(const Schedule& s) {
    return s.relay == Relay::cut_through ? "cut-through" : "store-and-forward";
}

}  // namespace

PlanResult plan_and_simulate(const Network& net, const PlanRequest& req, const Algorithm& algo) {
    Schedule s = algo.plan(net, req);
    Timeline tl = simulate(net, s, req.model);
    const double lb = broadcast_lower_bound(net, req.root, req.dests, req.size, s.relay);
    return PlanResult{std::move(s), std::move(tl), lb};
}

std::vector<PlanResult> plan_all(const Network& net, const PlanRequest& req) {
    std::vector<PlanResult> out;
    for (const auto& a : algorithms()) {
        if (a.name == "auto" || (a.applies && !a.applies(net, req))) continue;
        out.push_back(plan_and_simulate(net, req, a));
    }
    sort_by_completion(out);
    return out;
}

PatternResult plan_pattern_and_simulate(const Network& net, const PatternRequest& req,
                                        const PatternAlgorithm& algo) {
    return plan_pattern_with_bound(net, req, algo, pattern_lower_bound(net, req));
}

std::vector<PatternResult> plan_pattern_all(const Network& net, const PatternRequest& req) {
    const double lb = pattern_lower_bound(net, req);  // also validates the pattern against net
    std::vector<PatternResult> out;
    for (const auto& a : pattern_algorithms()) out.push_back(plan_pattern_with_bound(net, req, a, lb));
    sort_by_completion(out);
    return out;
}

PatternResult plan_pattern_auto(const Network& net, const PatternRequest& req) {
    auto all = plan_pattern_all(net, req);
    PatternResult best = std::move(all.front());
    best.schedule.algorithm = "auto:" + best.schedule.algorithm;
    return best;
}

nlohmann::json to_json(const Network& net, const PlanRequest& req, const PlanResult& r) {
    return {{"algorithm", r.schedule.algorithm},
            {"model", std::string(to_string(req.model))},
            {"root", net.name(req.root)},
            {"size", bytes_json(req.size)},
            {"completion_time", r.timeline.completion},
            {"lower_bound", r.lower_bound},
            {"relay", relay_name(r.schedule)},
            {"piece", r.schedule.relay == Relay::cut_through ? r.schedule.piece : 0},
            {"messages", messages_json(net, r.schedule)},
            {"transfers", transfers_json(net, r.timeline)}};
}

nlohmann::json to_json(const Network& net, const PatternRequest& req, const PatternResult& r) {
    return {{"algorithm", r.schedule.algorithm},
            {"model", std::string(to_string(req.model))},
            {"completion_time", r.timeline.completion},
            {"lower_bound", r.lower_bound},
            {"relay", relay_name(r.schedule)},
            {"piece", r.schedule.relay == Relay::cut_through ? r.schedule.piece : 0},
            {"messages", messages_json(net, r.schedule)},
            {"transfers", transfers_json(net, r.timeline)}};
}

std::string format_seconds(double s) {
    char buf[64];
    const double a = std::fabs(s);
    if (a == 0) return "0 s";
    if (a < 1e-3) std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
    else if (a < 1) std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
    else std::snprintf(buf, sizeof buf, "%.4g s", s);
    return buf;
}

void print_plan(std::ostream& out, const Network& net, const PlanRequest& req, const PlanResult& r) {
    out << r.schedule.algorithm << ": " << (req.dests.size() + 1 == net.size() ? "broadcast" : "multicast")
        << " of " << format_bytes(req.size) << " bytes from " << net.name(req.root) << " to "
        << nodes(req.dests.size()) << ", " << to_string(req.model) << " model\n";
    if (r.schedule.relay == Relay::cut_through) {
        out << "relays cut through, pieces of " << format_bytes(static_cast<double>(r.schedule.piece)) << " bytes\n";
    }
    print_transfers(out, net, r.timeline, false);
    print_summary(out, r);
    if (const double l = lottery_completion(net, r.schedule, r.timeline); l > r.timeline.completion * 1.005) {
        out << "behind FIFO host NICs, with their lottery: " << format_seconds(l) << " (docs/model.md)\n";
    }
}

void print_pattern(std::ostream& out, const Network& net, const PatternRequest& req, const PatternResult& r) {
    const auto& messages = r.schedule.messages;
    out << r.schedule.algorithm << ": " << messages.size() << (messages.size() == 1 ? " message" : " messages")
        << ", " << to_string(req.model) << " model\n";
    for (std::size_t k = 0; k < messages.size(); ++k) {
        const Message& m = messages[k];
        out << "  message " << k << ": " << (m.dests.size() + 1 == net.size() ? "broadcast" : "multicast")
            << " of " << format_bytes(m.size) << " bytes from " << net.name(m.source) << " to " << nodes(m.dests.size()) << '\n';
    }
    print_transfers(out, net, r.timeline, true);
    print_summary(out, r);
}

void print_comparison(std::ostream& out, const std::vector<PlanResult>& results) {
    // The name column is as wide as the longest name ("auto:two-level-ecef-la").
    int width = 9;
    for (const auto& r : results) width = std::max(width, static_cast<int>(r.schedule.algorithm.size()));
    char line[256];
    std::snprintf(line, sizeof line, "%-*s %14s %10s\n", width, "algorithm", "completion", "x bound");
    out << line;
    for (const auto& r : results) {
        const double ratio = r.lower_bound > 0 ? r.timeline.completion / r.lower_bound : 1.0;
        std::snprintf(line, sizeof line, "%-*s %14s %10.2f\n", width, r.schedule.algorithm.c_str(),
                      format_seconds(r.timeline.completion).c_str(), ratio);
        out << line;
    }
}

}  // namespace hetcast
