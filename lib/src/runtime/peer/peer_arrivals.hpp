#pragma once
// What arrives for the jobs a participant has set up: their start, their data (written,
// checked piece by piece for cut-through) and their cancels, each for the job it names.
#include "hetcast/net/transport.hpp"
#include "../transfer/parked.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"
#include "peer_participant.hpp"
#include "peer_pieces.hpp"
#include "peer_tasks.hpp"

namespace hetcast::detail {

class Arrivals {
public:
    /// The parts outlive this (Peer::Impl holds them all).
    Arrivals(PeerCore& core, Connections& connections, PieceRelay& pieces, TaskRunner& runner, Participant& participant,
             ParkedStore& parked)
        : core_(core), connections_(connections), pieces_(pieces), runner_(runner), participant_(participant),
          parked_(parked) {}

    void on_start(const net::ConnectionPtr& c, const net::Frame& f);
    void on_data(const net::ConnectionPtr& c, net::Frame&& f);
    void on_data_end(const net::ConnectionPtr& c, const net::Frame& f);
    void on_cancel(const net::ConnectionPtr& c, const net::Frame& f);
    /// A job_pace: from the job's coordinator, the paces of this member's sends (sim/pace.hpp);
    /// from anyone else, ignored.
    void on_pace(const net::ConnectionPtr& c, const net::Frame& f);

private:
    /// Data of a job this member does not have (over, or refused): the lane is reset, so
    /// its sender stops at once; logged.
    void refuse_lane(const net::ConnectionPtr& c, const net::Frame& f);
    void cancel(const net::ConnectionPtr& c, const net::Frame& f, Job& job);

    PeerCore& core_;
    Connections& connections_;
    PieceRelay& pieces_;
    TaskRunner& runner_;
    Participant& participant_;
    ParkedStore& parked_;
};

}  // namespace hetcast::detail
