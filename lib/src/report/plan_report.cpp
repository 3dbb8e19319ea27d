#include "hetcast/report/plan_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "hetcast/sim/lower_bound.hpp"

namespace hetcast {

PlanResult plan_and_simulate(const Network& net, const PlanRequest& req, const Algorithm& algo) {
    Schedule s = algo.plan(net, req);
    Timeline tl = simulate(net, s, req.model);
    const double lb = bhat_lower_bound(net, req.root, req.dests, req.size);
    return PlanResult{std::move(s), std::move(tl), lb};
}

std::vector<PlanResult> plan_all(const Network& net, const PlanRequest& req) {
    std::vector<PlanResult> out;
    for (const auto& a : algorithms()) {
        if (a.name == "auto" || (a.applies && !a.applies(net, req))) continue;
        out.push_back(plan_and_simulate(net, req, a));
    }
    std::stable_sort(out.begin(), out.end(), [](const PlanResult& a, const PlanResult& b) {
        return a.timeline.completion < b.timeline.completion;
    });
    return out;
}

nlohmann::json to_json(const Network& net, const PlanRequest& req, const PlanResult& r) {
    nlohmann::json transfers = nlohmann::json::array();
    for (const auto& t : r.timeline.transfers) {
        transfers.push_back({{"message", net.name(r.schedule.messages.at(t.message).source)},
                             {"from", net.name(t.from)},
                             {"to", net.name(t.to)},
                             {"start", t.start},
                             {"sender_free", t.sender_free},
                             {"arrival", t.arrival},
                             {"complete", t.complete}});
    }
    return {{"algorithm", r.schedule.algorithm},
            {"model", std::string(to_string(req.model))},
            {"root", net.name(req.root)},
            {"size", req.size},
            {"completion_time", r.timeline.completion},
            {"lower_bound", r.lower_bound},
            {"transfers", std::move(transfers)}};
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
        << " of " << req.size << " bytes from " << net.name(req.root) << " to " << req.dests.size()
        << " nodes, " << to_string(req.model) << " model\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %4s  %-12s %-12s %12s %12s %12s\n", "#", "from", "to", "start",
                  "sender free", "complete");
    out << line;
    std::size_t k = 0;
    for (const auto& t : r.timeline.transfers) {
        std::snprintf(line, sizeof line, "  %4zu  %-12s %-12s %12s %12s %12s\n", ++k, net.name(t.from).c_str(),
                      net.name(t.to).c_str(), format_seconds(t.start).c_str(),
                      format_seconds(t.sender_free).c_str(), format_seconds(t.complete).c_str());
        out << line;
    }
    out << "completion " << format_seconds(r.timeline.completion) << ", lower bound "
        << format_seconds(r.lower_bound);
    if (r.lower_bound > 0) {
        std::snprintf(line, sizeof line, " (%.2fx the bound)", r.timeline.completion / r.lower_bound);
        out << line;
    }
    out << '\n';
}

void print_comparison(std::ostream& out, const std::vector<PlanResult>& results) {
    char line[160];
    std::snprintf(line, sizeof line, "%-12s %14s %10s\n", "algorithm", "completion", "x bound");
    out << line;
    for (const auto& r : results) {
        const double ratio = r.lower_bound > 0 ? r.timeline.completion / r.lower_bound : 1.0;
        std::snprintf(line, sizeof line, "%-12s %14s %10.2f\n", r.schedule.algorithm.c_str(),
                      format_seconds(r.timeline.completion).c_str(), ratio);
        out << line;
    }
}

}  // namespace hetcast
