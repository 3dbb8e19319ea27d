#pragma once
// A participant's task list (sends, receives, deliveries), run on the job's own thread,
// and the events it reports to the job's coordinator.
#include <functional>
#include <memory>
#include <string>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/job.hpp"
#include "../job/job_state.hpp"
#include "../transfer/parked.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"
#include "peer_emulation.hpp"
#include "peer_inbox.hpp"
#include "peer_pieces.hpp"

namespace hetcast::detail {

class TaskRunner {
public:
    /// An event of a job this member coordinates itself (it has no connection to send it on).
    using LocalEvent = std::function<void(std::uint64_t job, const std::string& who, const JobEvent& e)>;
    /// The parts outlive this (Peer::Impl holds them all).
    TaskRunner(PeerCore& core, Connections& connections, const Emulation& emulation, PieceRelay& pieces,
               ParkedStore& parked, Inbox& inbox, LocalEvent local)
        : core_(core), connections_(connections), emulation_(emulation), pieces_(pieces), parked_(parked),
          inbox_(inbox), local_(std::move(local)) {}

    /// Runs `job`'s task list to its end, then reports done or failed; the job's thread.
    void run(const std::shared_ptr<Job>& job);
    /// Reports `e` to the job's coordinator.
    void emit(Job& job, const JobEvent& e);

private:
    /// Blocks until message m is in and verified (or fails), then returns its body.
    std::shared_ptr<const net::MessageBody> wait_recv(Job& job, MessageId m);
    void deliver(const Job& job, MessageId m, const std::shared_ptr<const net::MessageBody>& body);
    /// A verified bundle (message m) lands as its tree (runtime/tree.hpp);
    /// throws naming what did not land, after landing all it could.
    void land_bundle(const Job& job, MessageId m, const FileSink& bundle) const;

    PeerCore& core_;
    Connections& connections_;
    const Emulation& emulation_;
    PieceRelay& pieces_;
    ParkedStore& parked_;
    Inbox& inbox_;
    LocalEvent local_;
};

}  // namespace hetcast::detail
