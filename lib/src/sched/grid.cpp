// Two-level broadcast over a subnet map: ECO (Lowekamp & Beguelin §4) and the grid-aware
// heuristics of Barchet-Steffenel & Mounié (§4–5). See grid.hpp for the pLogP mapping.
#include "hetcast/sched/grid.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "hetcast/error.hpp"
#include "hetcast/map/eco.hpp"
#include "hetcast/sched/bhat.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

Subnets subnets_of(const Network& net, const PlanRequest& req) {
    if (net.subnets()) return *net.subnets();
    return eco_partition(eco_edge_costs(net, req.size), req.options.tolerance);
}

// The participants grouped by subnet. Group 0 is the root's; the others follow the subnet
// map's order from the root's subnet on, wrapping around (the "clusters list" of 004 §4.1).
struct Groups {
    std::vector<NodeId> coord;
    std::vector<std::vector<NodeId>> members;  // participants besides the coordinator, ascending
    [[nodiscard]] std::size_t size() const { return coord.size(); }
};

Groups group(const Network& net, const PlanRequest& req) {
    const Subnets map = subnets_of(net, req);
    std::vector<std::size_t> subnet(net.size(), npos);
    for (std::size_t k = 0; k < map.size(); ++k) {
        for (NodeId n : map[k]) subnet.at(n) = k;
    }
    const auto subnet_at = [&](NodeId n) {
        if (subnet[n] == npos) throw Error("subnet map misses node '" + net.name(n) + "'");
        return subnet[n];
    };
    std::vector<std::vector<NodeId>> dests(map.size());
    for (NodeId d : req.dests) dests[subnet_at(d)].push_back(d);
    const std::size_t home = subnet_at(req.root);
    Groups g;
    for (std::size_t s = 0; s < map.size(); ++s) {
        const std::size_t k = (home + s) % map.size();
        auto& d = dests[k];
        std::sort(d.begin(), d.end());
        if (k == home) {
            g.coord.push_back(req.root);
        } else if (d.empty()) {
            continue;
        } else {
            // Sorted, so the first of equal costs has the lower id.
            auto best = d.begin();
            double best_cost = net.time(req.root, *best, req.size);
            for (auto it = d.begin() + 1; it != d.end(); ++it) {
                const double c = net.time(req.root, *it, req.size);
                if (c < best_cost) {
                    best_cost = c;
                    best = it;
                }
            }
            g.coord.push_back(*best);
            d.erase(best);
        }
        g.members.push_back(std::move(d));
    }
    return g;
}

// Each group's ECEF broadcast over its participants and its time T_k.
struct Local {
    std::vector<std::optional<Schedule>> plan;  // empty for a group with no members
    std::vector<double> time;
};

Local local_ecef(const Network& net, const PlanRequest& req, const Groups& g) {
    Local l;
    for (std::size_t k = 0; k < g.size(); ++k) {
        if (g.members[k].empty()) {
            l.plan.emplace_back();
            l.time.push_back(0.0);
            continue;
        }
        const PlanRequest sub{g.coord[k], g.members[k], req.size, req.model, req.options};
        l.plan.emplace_back(plan_ecef(net, sub));
        l.time.push_back(simulate(net, *l.plan.back(), req.model).completion);
    }
    if (!net.local_broadcast().empty()) {
        for (std::size_t k = 0; k < g.size(); ++k) l.time[k] = net.local_broadcast()[g.coord[k]];
    }
    return l;
}

PlanRequest coordinators_request(const PlanRequest& req, const Groups& g) {
    return PlanRequest{req.root, std::vector<NodeId>(g.coord.begin() + 1, g.coord.end()), req.size,
                       req.model, req.options};
}

Schedule single_message(const char* algo, const Network& net, const PlanRequest& req) {
    return Schedule(algo, net.size(), {Message{req.root, req.size, req.dests}});
}

// The inter-subnet schedule, then each subnet's local tasks after its coordinator's last
// inter-subnet send: the coordinators' lists are extended, the members' lists are new.
Schedule assemble(const char* algo, const Network& net, const PlanRequest& req, const Schedule& inter,
                  const Groups& g, const Local& l) {
    Schedule s = single_message(algo, net, req);
    for (NodeId c : g.coord) s.tasks[c] = inter.tasks[c];
    for (std::size_t k = 0; k < g.size(); ++k) {
        if (!l.plan[k]) continue;
        const auto& local = l.plan[k]->tasks;
        auto& own = s.tasks[g.coord[k]];
        own.insert(own.end(), local[g.coord[k]].begin(), local[g.coord[k]].end());
        for (NodeId n : g.members[k]) s.tasks[n] = local[n];
    }
    return s;
}

Schedule flat_inter(const Network& net, const PlanRequest& req, const Groups& g) {
    Schedule s = single_message("", net, req);
    for (std::size_t k = 1; k < g.size(); ++k) s.add_transfer(0, req.root, g.coord[k]);
    return s;
}

// The greedy state over the coordinators (004 §3): A holds the groups whose coordinator
// has the message, B the others; ready_[k] is RT of coordinator k.
class Inter {
public:
    Inter(const Network& net, const PlanRequest& req, const Groups& g)
        : net_(net), req_(req), g_(g), sched_(single_message("", net, req)), ready_(g.size(), 0.0),
          cost_(g.size() * g.size(), 0.0) {
        const std::size_t n = g.size();
        for (std::size_t a = 0; a < n; ++a) {
            for (std::size_t b = 0; b < n; ++b) {
                if (a != b) cost_[a * n + b] = net.time(g.coord[a], g.coord[b], req.size);
            }
        }
        a_.push_back(0);
        for (std::size_t k = 1; k < n; ++k) b_.push_back(k);
    }

    [[nodiscard]] bool done() const { return b_.empty(); }
    [[nodiscard]] const std::vector<std::size_t>& a() const { return a_; }
    [[nodiscard]] const std::vector<std::size_t>& b() const { return b_; }
    [[nodiscard]] NodeId node(std::size_t k) const { return g_.coord[k]; }
    /// g + L from coordinator a to coordinator b.
    [[nodiscard]] double cost(std::size_t a, std::size_t b) const { return cost_[a * g_.size() + b]; }
    /// RT_a + g_ab + L_ab: when b would hold the message if a sent to it now (b is idle).
    [[nodiscard]] double complete_if(std::size_t a, std::size_t b) const {
        return step(net_, req_.model, node(a), node(b), req_.size, ready_[a], 0.0).complete;
    }

    void send(std::size_t a, std::size_t b) {
        const StepTimes t = step(net_, req_.model, node(a), node(b), req_.size, ready_[a], 0.0);
        ready_[a] = t.sender_free;
        ready_[b] = t.complete;
        sched_.add_transfer(0, node(a), node(b));
        a_.push_back(b);
        b_.erase(std::find(b_.begin(), b_.end(), b));
    }

    Schedule take() { return std::move(sched_); }

private:
    const Network& net_;
    const PlanRequest& req_;
    const Groups& g_;
    Schedule sched_;
    std::vector<double> ready_;
    std::vector<double> cost_;
    std::vector<std::size_t> a_;
    std::vector<std::size_t> b_;
};

struct Choice {
    double key = inf;
    std::size_t from = 0;
    std::size_t to = 0;
    NodeId from_id = 0;
    NodeId to_id = 0;
    // Lower key first; ties to the lower sender id, then the lower receiver id.
    [[nodiscard]] bool better_than(const Choice& o) const {
        if (key != o.key) return key < o.key;
        if (from_id != o.from_id) return from_id < o.from_id;
        return to_id < o.to_id;
    }
};

// ECEF-LAt and ECEF-LAT (004 §5.1, §5.2): the look-ahead over B \ {j} of g_jk + L_jk + T_k,
// by min or by max.
Schedule lookahead_t(const Network& net, const PlanRequest& req, const Groups& g,
                     const std::vector<double>& t, bool by_max) {
    Inter in(net, req, g);
    while (!in.done()) {
        Choice best;
        for (std::size_t j : in.b()) {
            double f = by_max ? -inf : inf;
            for (std::size_t k : in.b()) {
                if (k == j) continue;
                const double v = in.cost(j, k) + t[k];
                f = by_max ? std::max(f, v) : std::min(f, v);
            }
            if (in.b().size() == 1) f = 0.0;
            for (std::size_t i : in.a()) {
                const Choice here{in.complete_if(i, j) + f, i, j, in.node(i), in.node(j)};
                if (here.better_than(best)) best = here;
            }
        }
        in.send(best.from, best.to);
    }
    return in.take();
}

Schedule bottom_up(const Network& net, const PlanRequest& req, const Groups& g, const std::vector<double>& t) {
    Inter in(net, req, g);
    while (!in.done()) {
        Choice pick{-inf};
        for (std::size_t j : in.b()) {
            Choice reach;
            for (std::size_t i : in.a()) {
                const Choice here{in.complete_if(i, j), i, j, in.node(i), in.node(j)};
                if (here.better_than(reach)) reach = here;
            }
            reach.key += t[j];
            if (reach.key > pick.key || (reach.key == pick.key && reach.to_id < pick.to_id)) pick = reach;
        }
        in.send(pick.from, pick.to);
    }
    return in.take();
}

template <class InterPlanner>
Schedule two_level(const char* algo, const Network& net, const PlanRequest& req, InterPlanner inter) {
    const Groups g = group(net, req);
    const Local l = local_ecef(net, req, g);
    return assemble(algo, net, req, inter(g, l), g, l);
}

}  // namespace

Schedule plan_flat_tree(const Network& net, const PlanRequest& req) {
    return two_level("flat-tree", net, req, [&](const Groups& g, const Local&) { return flat_inter(net, req, g); });
}

Schedule plan_two_level_ecef(const Network& net, const PlanRequest& req) {
    return two_level("two-level-ecef", net, req,
                     [&](const Groups& g, const Local&) { return plan_ecef(net, coordinators_request(req, g)); });
}

Schedule plan_two_level_ecef_la(const Network& net, const PlanRequest& req) {
    return two_level("two-level-ecef-la", net, req,
                     [&](const Groups& g, const Local&) { return plan_ecef_la(net, coordinators_request(req, g)); });
}

Schedule plan_ecef_lat_min(const Network& net, const PlanRequest& req) {
    return two_level("ecef-lat-min", net, req,
                     [&](const Groups& g, const Local& l) { return lookahead_t(net, req, g, l.time, false); });
}

Schedule plan_ecef_lat_max(const Network& net, const PlanRequest& req) {
    return two_level("ecef-lat-max", net, req,
                     [&](const Groups& g, const Local& l) { return lookahead_t(net, req, g, l.time, true); });
}

Schedule plan_bottom_up(const Network& net, const PlanRequest& req) {
    return two_level("bottom-up", net, req,
                     [&](const Groups& g, const Local& l) { return bottom_up(net, req, g, l.time); });
}

Schedule plan_eco(const Network& net, const PlanRequest& req) {
    const std::size_t k = req.options.degree;
    if (k == 0) throw InputError("eco: the tree degree must be at least 1");
    const Groups g = group(net, req);
    Schedule s = flat_inter(net, req, g);
    s.algorithm = "eco";
    for (std::size_t c = 0; c < g.size(); ++c) {
        const auto ranks = PlanRequest{g.coord[c], g.members[c], req.size, req.model, req.options}.ranked();
        for (std::size_t r = 1; r < ranks.size(); ++r) s.add_transfer(0, ranks[(r - 1) / k], ranks[r]);
    }
    return s;
}

}  // namespace hetcast
