#include "hetcast/sched/trees.hpp"

namespace hetcast {

namespace {
Schedule single_message(std::string algo, const Network& net, const PlanRequest& req) {
    return Schedule(std::move(algo), net.size(), {Message{req.root, req.size, req.dests}});
}
}  // namespace

Schedule plan_flat(const Network& net, const PlanRequest& req) {
    Schedule s = single_message("flat", net, req);
    const auto ranks = req.ranked();
    for (std::size_t r = 1; r < ranks.size(); ++r) s.add_transfer(0, req.root, ranks[r]);
    return s;
}

Schedule plan_binomial(const Network& net, const PlanRequest& req) {
    Schedule s = single_message("binomial", net, req);
    const auto ranks = req.ranked();
    const std::size_t p = ranks.size();
    // Round k: every rank r < 2^k sends to r + 2^k. Adding rounds in order puts each node's
    // receive before its sends, and its sends in round order.
    for (std::size_t step = 1; step < p; step *= 2) {
        for (std::size_t r = 0; r < step && r + step < p; ++r) s.add_transfer(0, ranks[r], ranks[r + step]);
    }
    return s;
}

}  // namespace hetcast
