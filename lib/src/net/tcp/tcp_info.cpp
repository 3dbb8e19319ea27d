// Kept apart from connection.hpp: glibc's <netinet/tcp.h> has no tcpi_bytes_received, and
// <linux/tcp.h>, which has it, cannot be included beside it.
#include "tcp_info.hpp"

#include <netinet/in.h>
#include <linux/tcp.h>
#include <sys/socket.h>

#include <cstddef>

namespace hetcast::net::tcp_detail {

std::optional<std::uint64_t> kernel_bytes_received(int fd) {
    tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return std::nullopt;
    // Kernels before 4.1 return a shorter struct without the counter.
    if (len < offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) return std::nullopt;
    return info.tcpi_bytes_received;
}

}  // namespace hetcast::net::tcp_detail
