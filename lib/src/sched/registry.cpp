#include <algorithm>
#include <charconv>
#include <string>
#include <unordered_set>

#include "hetcast/error.hpp"
#include "hetcast/sched/auto.hpp"
#include "hetcast/sched/bhat.hpp"
#include "hetcast/sched/grid.hpp"
#include "hetcast/sched/lcf.hpp"
#include "hetcast/sched/optimal.hpp"
#include "hetcast/sched/pipeline.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sched/trees.hpp"

namespace hetcast {

std::vector<NodeId> PlanRequest::ranked() const {
    std::vector<NodeId> r = dests;
    // Rank = distance from the root going up the node order and wrapping around.
    const auto key = [this](NodeId n) { return n >= root ? n - root : n + (1u << 31) - root; };
    std::sort(r.begin(), r.end(), [&](NodeId a, NodeId b) { return key(a) < key(b); });
    r.insert(r.begin(), root);
    return r;
}

std::vector<std::size_t> parse_counts(std::string_view text, std::string_view option) {
    std::vector<std::size_t> out;
    std::string_view rest = text;
    while (true) {
        const auto comma = rest.find(',');
        const std::string_view part = rest.substr(0, comma);
        std::size_t v = 0;
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
        if (part.empty() || ec != std::errc{} || end != part.data() + part.size() || v == 0) {
            throw InputError(std::string(option) + ": '" + std::string(part) +
                             "' is not a whole number of at least 1");
        }
        out.push_back(v);
        if (comma == std::string_view::npos) return out;
        rest.remove_prefix(comma + 1);
    }
}

PlanRequest make_request(const Network& net, NodeId root, std::vector<NodeId> dests, double size,
                         ExecModel model, PlanOptions options) {
    if (root >= net.size()) throw InputError("root out of range");
    if (!(size >= 0) || size > 1e18) throw InputError("size must be a non-negative number of bytes");
    if (dests.empty()) {
        for (NodeId i = 0; i < net.size(); ++i) {
            if (i != root) dests.push_back(i);
        }
    }
    std::unordered_set<NodeId> seen;
    for (NodeId d : dests) {
        if (d >= net.size()) throw InputError("destination out of range");
        if (d == root) throw InputError("the root '" + net.name(root) + "' is in the destination list");
        if (!seen.insert(d).second) throw InputError("destination '" + net.name(d) + "' is listed twice");
    }
    return PlanRequest{root, std::move(dests), size, model, options};
}

const std::vector<Algorithm>& algorithms() {
    static const std::vector<Algorithm> all = {
        {"flat", "the root sends to every destination in rank order", plan_flat, {}},
        {"binomial", "binomial tree over the ranks (MPI default)", plan_binomial, {}},
        {"fnf", "Fastest Node First, Bhat's modified baseline", plan_fnf, {}},
        {"fef", "Fastest Edge First (Bhat 4.3)", plan_fef, {}},
        {"ecef", "Earliest Completing Edge First (Bhat 4.3)", plan_ecef, {}},
        {"ecef-la", "ECEF with look-ahead, eq. 9 (Bhat 4.3)", plan_ecef_la, {}},
        {"ecef-relay", "ECEF that may relay through non-destinations (Bhat 4.3, set I)", plan_ecef_relay, {}},
        {"optimal", "exact minimum by branch and bound, up to 10 participants", plan_optimal,
         [](const Network&, const PlanRequest& r) { return r.dests.size() + 1 <= optimal_max_participants; }},
        // lcf family (paper 002)
        {"lcf", "Largest Cluster First over the subnet map; LCF Multicast (Khuller 3, 4)", plan_lcf, {}},
        {"lcf-degree", "LCF with at most `degree` inter-cluster transfers per cluster (Khuller 5.1, 5.2)",
         plan_lcf_degree,
         [](const Network&, const PlanRequest& r) {
             const auto& d = r.options.degrees;
             return d.empty() ? r.options.degree > 0 : std::find(d.begin(), d.end(), 0) == d.end();
         }},
        {"lcf-matching", "LCF with at most `matching` inter-cluster transfers at a time (Khuller 5.3, 5.4)",
         plan_lcf_matching, [](const Network&, const PlanRequest& r) { return r.options.matching > 0; }},
        {"lcf-interleaved", "Interleaved LCF: holders alternate local and global sends (Khuller 6.2)",
         plan_lcf_interleaved, {}},
        // two-level and grid-aware family (papers 003, 004)
        {"flat-tree", "two-level: the root sends to each subnet coordinator in turn (004 4.1)", plan_flat_tree, {}},
        {"two-level-ecef", "two-level: ECEF among coordinators and inside subnets (004 4.3)", plan_two_level_ecef, {}},
        {"two-level-ecef-la", "two-level: ECEF-LA among subnet coordinators (004 4.4)", plan_two_level_ecef_la, {}},
        {"ecef-lat-min", "grid-aware ECEF-LAt: look-ahead min over B of g + L + T (004 5.1)", plan_ecef_lat_min, {}},
        {"ecef-lat-max", "grid-aware ECEF-LAT: look-ahead max over B of g + L + T (004 5.2)", plan_ecef_lat_max, {}},
        {"bottom-up", "grid-aware BottomUp: max-min, slowest subnet first (004 5.3)", plan_bottom_up, {}},
        {"eco", "ECO: the root reaches each subnet's coordinator, k-ary trees inside (003 4)", plan_eco, {}},
        // pipelined trees (issue 13 §2): relays cut through on large messages
        {"pipeline", "greedy broadcast tree for pipelined throughput on shared capacities (Beaumont et al. 2005)",
         plan_pipeline, {}},
        {"chain", "pipelined chain in rank order, each relay cutting through", plan_chain, {}},
        {"auto", "every applicable algorithm (and X+ct: cut through), simulated; the least predicted completion wins (within 3%, the one least slowed by FIFO links); above 100 hosts only planners that scale, pruned by lower bounds",
         plan_auto, {}},
    };
    return all;
}

namespace {

// "X+ct": X's task lists cut through, as auto weighs them, so a user can ask for auto's pick
// by the name it reports.
const std::vector<Algorithm>& cut_through_variants() {
    static const std::vector<Algorithm> out = [] {
        std::vector<Algorithm> v;
        for (const auto& a : algorithms()) {
            if (a.name == "auto") continue;
            v.push_back({a.name + "+ct", a.summary + ", cut through",
                         [base = a.plan, name = a.name](const Network& net, const PlanRequest& req) {
                             Schedule s = base(net, req);
                             if (s.relay == Relay::cut_through) return s;
                             if (!cuts_through(net, req) || s.messages.size() != 1) {
                                 throw InputError("'" + name + "+ct': this request does not cut through (a message of " +
                                                  std::to_string(static_cast<std::uint64_t>(req.size)) +
                                                  " bytes, or a network without bandwidths); use '" + name + "'");
                             }
                             s = with_cut_through(net, req, std::move(s));
                             s.algorithm += "+ct";
                             return s;
                         },
                         a.applies});
        }
        return v;
    }();
    return out;
}

}  // namespace

const Algorithm& find_algorithm(std::string_view name) {
    for (const auto& a : algorithms()) {
        if (a.name == name) return a;
    }
    for (const auto& a : cut_through_variants()) {
        if (a.name == name) return a;
    }
    std::string known;
    for (const auto& a : algorithms()) known += (known.empty() ? "" : ", ") + a.name;
    throw InputError("unknown algorithm '" + std::string(name) + "' (known: " + known + "; X+ct cuts X through)");
}

}  // namespace hetcast
