#pragma once
/// Turns a Schedule into a predicted timeline under an execution model.
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/exec_model.hpp"

namespace hetcast {

struct Transfer {
    MessageId message = 0;
    NodeId from = 0;
    NodeId to = 0;
    double start = 0;
    double sender_free = 0;
    double arrival = 0;
    double complete = 0;
};

struct Timeline {
    std::vector<Transfer> transfers;  ///< in order of start time, then from, then to
    double completion = 0;            ///< latest `complete` over all (message, destination)
};

/// How messages in flight on the same directed link behave in the non-blocking model. Wu's
/// model (000 §3), which the planners use, gives each of them the whole link at once; a
/// real link (and hetcast's link emulation) carries one message's bytes at a time, so a
/// message's m/B on the wire starts only when the previous one on that link has left.
enum class LinkUse { whole_link_each, one_at_a_time };

/// Simulates every node running its task list in order. Throws InfeasibleSchedule when
/// a node relays a message it does not hold yet, a destination is never reached or is
/// reached twice, a send has no matching receive (or the reverse), or the lists deadlock.
/// A cut-through schedule goes to simulate_flows() (with or without capacities) and only
/// in the non-blocking model: InputError in the others.
[[nodiscard]] Timeline simulate(const Network& net, const Schedule& s, ExecModel model,
                                LinkUse links = LinkUse::whole_link_each);

}  // namespace hetcast
