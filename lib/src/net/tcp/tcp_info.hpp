#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace hetcast::net::tcp_detail {

/// Payload bytes the kernel has received on socket `fd` (TCP_INFO, RFC 4898's
/// HCThruOctetsReceived), whether or not anyone has read them yet; none when it cannot tell.
std::optional<std::uint64_t> kernel_bytes_received(int fd);

/// Makes socket `fd` run congestion control `name` (TCP_CONGESTION): empty when it does,
/// else why not, in a few words.
std::string set_congestion(int fd, const std::string& name);

/// The congestion control socket `fd` runs; empty when it cannot tell.
std::string congestion_of(int fd);

}  // namespace hetcast::net::tcp_detail
