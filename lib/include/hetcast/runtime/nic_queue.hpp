#pragma once
/// How this host's own NIC queues what it sends, read from the kernel's queueing
/// disciplines (rtnetlink). A probe cannot hear it: behind a FIFO NIC the split between a
/// host's flows changes from one window to the next (docs/model.md, "Queues"), so the
/// members say it themselves and the probed map records `capacity.queues: fifo` when most
/// of them queue in FIFOs.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hetcast {

enum class NicQueue { unknown, fifo, fair };

[[nodiscard]] std::string_view to_text(NicQueue q);
/// "fifo", "fair"; anything else is unknown.
[[nodiscard]] NicQueue nic_queue_from_text(std::string_view s);

/// One queueing discipline of a device, as the kernel lists it.
struct Qdisc {
    std::string kind;          ///< "fq_codel", "htb", "pfifo_fast", ...
    std::uint32_t handle = 0;  ///< major:minor, 16 bits each
    std::uint32_t parent = 0;  ///< 0xffffffff at the root
};

/// What a device's egress does to the flows that share it:
/// - fair when any of its disciplines is a per-flow fair one (fq_codel, fq, sfq, cake,
///   fq_pie), or when filters steer its traffic into two or more leaf queues (classes per
///   flow or host pair, as netlab's fair NICs have);
/// - unknown without a root discipline or with `noqueue` (a virtual device: its senders
///   queue in their own sockets);
/// - fifo otherwise (pfifo_fast, pfifo, bfifo, a shaper over one FIFO, codel, red, ...).
/// `filters` counts the classifier entries attached to the device's classful disciplines.
[[nodiscard]] NicQueue classify_nic_queue(const std::vector<Qdisc>& qdiscs, std::size_t filters);

/// The egress disciplines of the device named `ifname` and the classifiers attached to
/// them, from the kernel of the calling thread's network namespace. Empty when there is no
/// such device or the kernel does not answer within a second.
struct DeviceQueues {
    std::vector<Qdisc> qdiscs;
    std::size_t filters = 0;
};
[[nodiscard]] DeviceQueues read_device_queues(const std::string& ifname);

/// The name of the local device that holds `address` (an IPv4 or IPv6 literal, or a name
/// resolved here); empty when none does.
[[nodiscard]] std::string device_of(const std::string& address);

/// classify_nic_queue() of the device that holds `address`; unknown when none does.
[[nodiscard]] NicQueue nic_queue_of(const std::string& address);

}  // namespace hetcast
