#include "hetcast/sim/exec_model.hpp"

#include <algorithm>
#include <limits>

#include "hetcast/error.hpp"

namespace hetcast {
namespace {

// The postal sender time of i (docs/model.md): the cheapest transfer from i to another member
// of its subnet; for a node alone in its subnet, the cheapest transfer between consecutive
// members of any subnet (the cluster model's `local`); without subnets, i's cheapest transfer.
double postal_busy(const Network& net, NodeId i, double m) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    double best = inf;
    if (const auto& subnets = net.subnets()) {
        for (const auto& s : *subnets) {
            if (std::find(s.begin(), s.end(), i) == s.end()) continue;
            for (NodeId j : s) {
                if (j != i) best = std::min(best, net.time(i, j, m));
            }
            break;
        }
        if (best < inf) return best;
        for (const auto& s : *subnets) {
            for (std::size_t a = 0; a + 1 < s.size(); ++a) best = std::min(best, net.time(s[a], s[a + 1], m));
        }
        if (best < inf) return best;
    }
    for (NodeId j = 0; j < net.size(); ++j) {
        if (j != i) best = std::min(best, net.time(i, j, m));
    }
    return best < inf ? best : 0.0;
}

}  // namespace

std::string_view to_string(ExecModel m) {
    switch (m) {
        case ExecModel::blocking: return "blocking";
        case ExecModel::nonblocking: return "nonblocking";
        case ExecModel::postal: return "postal";
    }
    return "?";
}

ExecModel parse_exec_model(std::string_view name) {
    if (name == "blocking") return ExecModel::blocking;
    if (name == "nonblocking") return ExecModel::nonblocking;
    if (name == "postal") return ExecModel::postal;
    throw InputError("unknown model '" + std::string(name) + "' (known: blocking, nonblocking, postal)");
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
    if (model == ExecModel::postal) t.sender_free = t.start + postal_busy(net, from, m);
    t.complete = std::max(t.arrival, receiver_ready) + net.recv_busy(to, m);
    return t;
}

}  // namespace hetcast
