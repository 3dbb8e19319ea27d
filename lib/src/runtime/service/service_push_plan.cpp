// A push planned on the map: the map with its --bwlimit, a plan around relays that do not
// answer.
#include "service_push_plan.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/push_options.hpp"
#include "hetcast/runtime/push_plan.hpp"

namespace hetcast::detail {

namespace {

// Nodes with tasks in `s` that are neither the root, a destination nor in `known`: relays.
std::vector<NodeId> outside_relays(const Schedule& s, NodeId root, const std::vector<NodeId>& dests,
                                   const std::vector<NodeId>& known) {
    const auto in = [](const std::vector<NodeId>& set, NodeId v) { return std::find(set.begin(), set.end(), v) != set.end(); };
    std::vector<NodeId> out;
    for (NodeId v = 0; v < s.tasks.size(); ++v) {
        if (v == root || s.tasks[v].empty() || in(dests, v) || in(known, v)) continue;
        out.push_back(v);
    }
    return out;
}

}  // namespace

JobSpec plan_around_down(const Network& net, PlanRequest pr, const std::string& algo, std::uint64_t piece,
                         const std::function<std::vector<std::string>(const std::vector<std::string>&)>& ask,
                         const std::function<void(const std::string&)>& warn) {
    JobSpec spec = plan_push_only(net, pr, algo, piece);
    const auto avoided = [&](NodeId v) { return std::find(pr.options.avoid.begin(), pr.options.avoid.end(), v) != pr.options.avoid.end(); };
    std::vector<NodeId> asked_already;
    for (std::vector<NodeId> relays = outside_relays(spec.schedule, pr.root, pr.dests, {}); !relays.empty();
         relays = outside_relays(spec.schedule, pr.root, pr.dests, asked_already)) {
        std::vector<std::string> names;
        for (NodeId v : relays) names.push_back(net.name(v));
        const std::vector<std::string> errors = ask(names);
        asked_already.insert(asked_already.end(), relays.begin(), relays.end());
        const std::size_t before = pr.options.avoid.size();
        for (std::size_t i = 0; i < relays.size(); ++i) {
            if (errors[i].empty()) continue;
            warn("not relaying through '" + names[i] + "': " + errors[i]);
            pr.options.avoid.push_back(relays[i]);
        }
        if (pr.options.avoid.size() == before) break;
        spec = plan_push_only(net, pr, algo, piece);
        for (NodeId v : outside_relays(spec.schedule, pr.root, pr.dests, {})) {
            if (avoided(v)) {
                throw Error("push: " + spec.schedule.algorithm + " relays through '" + net.name(v) +
                            "', which does not answer; try another --algo");
            }
        }
    }
    return spec;
}

std::optional<Network> map_for_push(std::optional<Network> net, std::uint64_t bwlimit) {
    if (!net) throw InputError("no map yet: run 'hetcast probe' first");
    return capped_for_push(*net, bwlimit);
}

}  // namespace hetcast::detail
