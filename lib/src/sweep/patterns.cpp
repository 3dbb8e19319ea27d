#include "patterns.hpp"

#if __has_include("hetcast/sched/wu.hpp")
#include "hetcast/sched/wu.hpp"
#define HETCAST_SWEEP_HAVE_PATTERNS 1
#endif
#if __has_include("hetcast/sim/pattern_bound.hpp")
#include "hetcast/sim/pattern_bound.hpp"
#define HETCAST_SWEEP_HAVE_WU_BOUND 1
#endif

namespace hetcast::sweep::detail {
namespace {

#ifdef HETCAST_SWEEP_HAVE_PATTERNS
PatternRequest pattern_request(const std::vector<Message>& messages, ExecModel model) {
    PatternRequest req;
    req.messages = messages;
    req.model = model;
    return req;
}
#endif

}  // namespace

const std::vector<PatternPlanner>& pattern_planners() {
    static const std::vector<PatternPlanner> all = [] {
        std::vector<PatternPlanner> out;
#ifdef HETCAST_SWEEP_HAVE_PATTERNS
        for (const auto& a : pattern_algorithms()) {
            out.push_back({a.name, [&a](const Network& net, const std::vector<Message>& messages, ExecModel model) {
                               return a.plan(net, pattern_request(messages, model));
                           }});
        }
#endif
        return out;
    }();
    return all;
}

std::optional<double> pattern_lower_bound([[maybe_unused]] const Network& net,
                                          [[maybe_unused]] const std::vector<Message>& messages,
                                          [[maybe_unused]] ExecModel model) {
#ifdef HETCAST_SWEEP_HAVE_WU_BOUND
    return hetcast::pattern_lower_bound(net, pattern_request(messages, model));
#else
    return std::nullopt;
#endif
}

}  // namespace hetcast::sweep::detail
