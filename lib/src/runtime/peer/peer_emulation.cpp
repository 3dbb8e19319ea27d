// Link emulation (a link profile): the emulated host's one CPU, and sends and receives
// that take the profile's overheads and share its NICs and uplinks (link_state.hpp).
#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "peer_impl.hpp"

namespace hetcast {
using namespace detail;

void Peer::Impl::busy(double seconds) const {
    if (seconds <= 0) return;
    Clock::time_point until;
    {
        std::lock_guard lock(host_mu);
        host_free = std::max(host_free, Clock::now()) +
                    std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
        until = host_free;
    }
    std::this_thread::sleep_until(until);
}

void Peer::Impl::emulate_send(const std::string& to, double bytes) const {
    if (auto j = profile_id(to)) busy(cfg.link_profile->send_busy(*profile_self, *j, bytes));
}

void Peer::Impl::emulate_recv(double bytes) const {
    if (profile_self) busy(cfg.link_profile->recv_busy(*profile_self, bytes));
}

}  // namespace hetcast
