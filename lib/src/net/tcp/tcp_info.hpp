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

/// The least pace set on a socket, bytes/s: a rate that rounds to 0 would stop it for good.
inline constexpr double min_pace = 16 * 1024;

/// The SO_MAX_PACING_RATE that lets `payload_per_s` of payload through (at least
/// min_pace; 0 for none): the kernel paces segments with their IP and TCP headers (52 bytes
/// with timestamps), so a 1448-byte MSS needs 3.6% more. `mss` 0: 1448.
[[nodiscard]] double pacing_rate_for(double payload_per_s, int mss);
/// The MSS of socket `fd` (TCP_MAXSEG); 0 when it cannot tell.
[[nodiscard]] int mss_of(int fd);

}  // namespace hetcast::net::tcp_detail
