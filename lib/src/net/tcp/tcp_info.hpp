#pragma once
#include <cstdint>
#include <optional>

namespace hetcast::net::tcp_detail {

/// Payload bytes the kernel has received on socket `fd` (TCP_INFO, RFC 4898's
/// HCThruOctetsReceived), whether or not anyone has read them yet; none when it cannot tell.
std::optional<std::uint64_t> kernel_bytes_received(int fd);

}  // namespace hetcast::net::tcp_detail
