#pragma once
// A peer's connections: the members it knows and the control connection kept with each
// (dialled once: requests, pings, a job's plan, start, events and cancels), a job's data
// lanes (a connection each, never the control one), and when each member was last heard.
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/wire.hpp"
#include "../job/job_state.hpp"
#include "../wire/directory.hpp"
#include "../wire/lanes.hpp"
#include "peer_core.hpp"

namespace hetcast::detail {

class Connections {
public:
    /// `core` outlives this (Peer::Impl holds both).
    explicit Connections(PeerCore& core) : core_(core) {}

    /// The members known and the control connection kept with each (wire/directory.hpp).
    MemberDirectory& directory() { return directory_; }
    const MemberDirectory& directory() const { return directory_; }
    /// `name`'s address: from `hint` (a job's participants) if it is there, else the members.
    std::optional<Member> address(const std::string& name, const std::vector<Member>* hint) const;
    /// The control connection with a member (dialled once, kept). Throws when `name` is
    /// not known or cannot be reached.
    net::ConnectionPtr conn_to(const std::string& name, const std::vector<Member>* hint = nullptr);
    /// The data lane of `job` to `name`: a connection of its own, dialled on the first send.
    /// Throws when the job is aborted meanwhile (the new lane is reset).
    net::ConnectionPtr lane_to(Job& job, const std::string& name);
    /// Dials the lanes of this member's sends while the job is set up, so that no handshake
    /// lies on the timeline the plan predicted (a small job's transfers take milliseconds);
    /// all at once, each from a thread of its own. The number of members it sends to.
    std::size_t dial_lanes(Job& job);
    /// Ends a job's lanes: reset (what is queued and in the kernel is dropped) or closed.
    /// Under job.mu.
    static void end_lanes(Job& job, bool reset, const std::string& why);
    /// Notes that `c` brought data of `job`: a lane to close when the job ends here. Under job.mu.
    void note_lane(Job& job, const net::ConnectionPtr& c);
    /// `c` closed: the lane it was, if it was one.
    std::optional<Lane> lane_closed(const net::Connection* c) { return lanes_.closed(c); }
    bool carries(const net::Connection* c) const { return lanes_.carries(c); }
    /// A frame came from `who`: what tells a coordinator that a participant still runs.
    void hear(const std::string& who);
    /// When a frame last came from `who` (steady clock, seconds; 0: never).
    double last_heard(const std::string& who) const;

private:
    PeerCore& core_;
    MemberDirectory directory_;
    /// The job each known lane carries (wire/lanes.hpp).
    LaneTable lanes_;
    mutable std::mutex heard_mu_;
    std::map<std::string, double> heard_;
};

}  // namespace hetcast::detail
