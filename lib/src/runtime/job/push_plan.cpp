#include "hetcast/runtime/push_plan.hpp"

#include <system_error>
#include <utility>

#include "hetcast/error.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/sched/auto.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/throughput.hpp"

namespace hetcast {

JobSpec plan_push(const Network& net, const PlanRequest& req, const std::string& algo, std::uint64_t piece) {
    JobSpec spec = plan_push_only(net, req, algo, piece);
    set_bounds(net, req, push_throughput(net, req), spec);
    return spec;
}

double push_throughput(const Network& net, const PlanRequest& req) {
    return net.capacities() && !req.dests.empty() ? steady_state_throughput(net, req.root, req.dests) : 0;
}

std::future<double> push_throughput_async(const Network& net, PlanRequest req) {
    auto run = [&net, req = std::move(req)] { return push_throughput(net, req); };
    try {
        return std::async(std::launch::async, run);
    } catch (const std::system_error&) {
        return std::async(std::launch::deferred, std::move(run));
    }
}

double push_lower_bound(const Network& net, const PlanRequest& req, Relay relay, double throughput) {
    return broadcast_lower_bound(net, req.root, req.dests, req.size, relay, throughput);
}

void set_bounds(const Network& net, const PlanRequest& req, double throughput, JobSpec& spec) {
    spec.throughput_bound = throughput;
    spec.lower_bound = push_lower_bound(net, req, spec.schedule.relay, throughput);
}

JobSpec plan_push_only(const Network& net, const PlanRequest& req, const std::string& algo, std::uint64_t piece) {
    if (piece != 0 && (piece < min_piece || piece > max_piece)) {
        throw InputError("piece: must be between 4KiB and 8MiB, got " + std::to_string(piece) + " bytes");
    }
    if (piece != 0 && req.size / static_cast<double>(piece) > static_cast<double>(max_pieces)) {
        throw InputError("piece: " + std::to_string(piece) + " bytes cut this message into more than " +
                         std::to_string(max_pieces) + " pieces");
    }
    // Every planner weighs its cut-through plans with the piece asked for.
    PlanRequest asked = req;
    if (piece != 0) asked.options.piece = piece;
    JobSpec spec;
    spec.network = &net;
    spec.model = req.model;
    if (algo == "auto") {
        AutoChoice choice = plan_auto_explained(net, asked);
        spec.schedule = std::move(choice.best);
        spec.candidates = std::move(choice.predicted);
    } else {
        spec.schedule = find_algorithm(algo).plan(net, asked);
    }
    if (piece != 0 && spec.schedule.relay == Relay::cut_through) spec.schedule.piece = piece;
    spec.replan = [&net, req, algo, piece](const std::vector<NodeId>& dests, const std::vector<NodeId>& avoid) {
        PlanOptions options = req.options;
        options.avoid.insert(options.avoid.end(), avoid.begin(), avoid.end());
        return plan_push_only(net, make_request(net, req.root, dests, req.size, req.model, options), algo, piece).schedule;
    };
    return spec;
}

}  // namespace hetcast
