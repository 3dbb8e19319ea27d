#include "hetcast/sim/exec_model.hpp"

#include <algorithm>

#include "hetcast/error.hpp"

namespace hetcast {

std::string_view to_string(ExecModel m) {
    switch (m) {
        case ExecModel::blocking: return "blocking";
        case ExecModel::nonblocking: return "nonblocking";
    }
    return "?";
}

ExecModel parse_exec_model(std::string_view name) {
    if (name == "blocking") return ExecModel::blocking;
    if (name == "nonblocking") return ExecModel::nonblocking;
    throw InputError("unknown model '" + std::string(name) + "' (known: blocking, nonblocking)");
}

StepTimes step(const Network& net, ExecModel model, NodeId from, NodeId to, double m,
               double sender_ready, double receiver_ready) {
    StepTimes t;
    if (model == ExecModel::blocking) {
        t.start = std::max(sender_ready, receiver_ready);
        t.sender_free = t.arrival = t.complete = t.start + net.time(from, to, m);
        return t;
    }
    t.start = sender_ready;
    t.sender_free = t.start + net.send_busy(from, to, m);
    t.arrival = t.sender_free + net.wire(from, to, m);
    t.complete = std::max(t.arrival, receiver_ready) + net.recv_busy(to, m);
    return t;
}

}  // namespace hetcast
