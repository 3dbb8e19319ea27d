// Kept apart from connection.hpp: glibc's <netinet/tcp.h> has no tcpi_bytes_received, and
// <linux/tcp.h>, which has it, cannot be included beside it.
#include "tcp_info.hpp"

#include <netinet/in.h>
#include <linux/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

namespace hetcast::net::tcp_detail {

std::optional<std::uint64_t> kernel_bytes_received(int fd) {
    tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return std::nullopt;
    // Kernels before 4.1 return a shorter struct without the counter.
    if (len < offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) return std::nullopt;
    return info.tcpi_bytes_received;
}

std::string set_congestion(int fd, const std::string& name) {
    if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(), static_cast<socklen_t>(name.size())) == 0) return {};
    const int e = errno;
    if (e == ENOENT) return "this kernel has no such congestion control (see /proc/sys/net/ipv4/tcp_available_congestion_control)";
    if (e == EPERM) return "not allowed to this user (net.ipv4.tcp_allowed_congestion_control lists what is; root may use any)";
    return std::strerror(e);
}

std::string congestion_of(int fd) {
    constexpr socklen_t most = 16;  // the kernel's TCP_CA_NAME_MAX
    char name[most + 1] = {};
    socklen_t len = most;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return {};
    return std::string(name, ::strnlen(name, len));
}

double pacing_rate_for(double payload_per_s, int mss) {
    if (!(payload_per_s > 0)) return 0;
    const double seg = mss > 0 ? mss : 1448;
    return std::max(payload_per_s, min_pace) * (seg + 52) / seg;
}

int mss_of(int fd) {
    int mss = 0;
    socklen_t len = sizeof mss;
    return ::getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) == 0 ? mss : 0;
}

}  // namespace hetcast::net::tcp_detail
