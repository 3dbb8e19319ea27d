#pragma once
/// Execution models: how one transfer occupies its sender and receiver.
/// Both the planners and the simulator use step(), so a plan's internal estimate and
/// the simulated timeline never disagree.
#include <optional>
#include <string>
#include <string_view>

#include "hetcast/model/network.hpp"

namespace hetcast {

enum class ExecModel {
    /// Bhat §3.1: the transfer occupies sender and receiver for its whole time(i→j, m).
    blocking,
    /// Wu §2: the sender is busy S_i(m); the message arrives after the wire time; the
    /// receiver takes R_j(m) once it has arrived and the receiver is free.
    nonblocking,
    /// Khuller §6: the sender is busy for the local time of its subnet for any send; the
    /// message is complete time(i→j, m) after the send starts (`local` inside a cluster,
    /// `global` across in the cluster model). See docs/model.md for the local time.
    postal,
};

[[nodiscard]] std::string_view to_string(ExecModel m);
/// Throws InputError on an unknown name.
[[nodiscard]] ExecModel parse_exec_model(std::string_view name);

/// Times of one transfer.
struct StepTimes {
    double start = 0;        ///< the sender starts the send
    double sender_free = 0;  ///< the sender may start its next task
    double arrival = 0;      ///< the last byte is in the receiver's network buffer
    double complete = 0;     ///< the receiver holds the message
};

/// The times of transfer i→j of an m-byte message when the sender reaches the send
/// at `sender_ready` and the receiver reaches the receive at `receiver_ready`.
[[nodiscard]] StepTimes step(const Network& net, ExecModel model, NodeId from, NodeId to, double m,
                             double sender_ready, double receiver_ready);

}  // namespace hetcast
