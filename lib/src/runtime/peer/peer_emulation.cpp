// Link emulation (a link profile): the emulated host's one CPU, and sends and receives
// that take the profile's overheads and share its NICs and uplinks (link_state.hpp).
#include "peer_emulation.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace hetcast::detail {

Emulation::Emulation(const PeerConfig& cfg) : cfg_(cfg) {
    if (cfg_.link_profile) self_ = cfg_.link_profile->find(cfg_.name);
    if (self_ && cfg_.link_profile->capacities()) link_state_ = std::make_unique<LinkState>(*cfg_.link_profile, cfg_.link_state);
}

std::optional<NodeId> Emulation::profile_id(const std::string& name) const {
    if (!cfg_.link_profile || !self_) return std::nullopt;
    return cfg_.link_profile->find(name);
}

void Emulation::shape(const net::ConnectionPtr& c) const {
    if (auto j = profile_id(c->peer())) {
        const Network& p = *cfg_.link_profile;
        c->set_shape({p.wire(*self_, *j, 0), p.bandwidth().empty() ? 0.0 : p.bandwidth()[*self_][*j],
                      link_state_ ? link_state_->rates(*self_, *j) : std::vector<std::shared_ptr<net::SharedRate>>{}});
    }
}

void Emulation::busy(double seconds) const {
    if (seconds <= 0) return;
    Clock::time_point until;
    {
        std::lock_guard lock(host_mu_);
        host_free_ = std::max(host_free_, Clock::now()) +
                     std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
        until = host_free_;
    }
    std::this_thread::sleep_until(until);
}

void Emulation::send(const std::string& to, double bytes) const {
    if (auto j = profile_id(to)) busy(cfg_.link_profile->send_busy(*self_, *j, bytes));
}

void Emulation::recv(double bytes) const {
    if (self_) busy(cfg_.link_profile->recv_busy(*self_, bytes));
}

}  // namespace hetcast::detail
