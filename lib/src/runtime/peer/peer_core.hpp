#pragma once
// What every part of a peer shares: its configuration and counters, the transport, whether
// it stops, and the worker pools that requests and job set-ups run on. Each part holds a
// reference to the one PeerCore of its Peer::Impl (peer_impl.hpp), which outlives them all.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/peer_types.hpp"
#include "hetcast/runtime/stats.hpp"
#include "../job/plan_board.hpp"
#include "../wire/worker_pool.hpp"

namespace hetcast::detail {

struct PeerCore {
    PeerConfig cfg;
    PeerStats stats;
    std::unique_ptr<net::Transport> transport;
    std::atomic<bool> stopping{false};
    /// Requests and job set-ups run on bounded pools, never a thread each: quick ones
    /// (hello, status, ping, member lists, maps, job lists) and slow ones (pushes, probes,
    /// joins, describes that hash a file, job set-ups). A slow request holds its thread
    /// for as long as it runs, so quick ones have threads of their own.
    WorkerPool quick{4, 1024};
    /// Hellos (what `status` and a coordinator ask to see who is up) never wait behind
    /// other requests, quick or not.
    WorkerPool live{2, 4096};
    WorkerPool slow{16, 64};
    /// Pushes planned here and elsewhere at the same moment (job/plan_board.hpp).
    PlanBoard board;

    explicit PeerCore(PeerConfig c) : cfg(std::move(c)) {}

    void log(LogLevel level, const std::string& line) const {
        if (cfg.log) cfg.log(level, line);
    }
    /// Runs `work` on `pool`; false (and nothing runs) when the peer stops or the pool is full.
    bool spawn(WorkerPool& pool, std::function<void()> work) {
        if (stopping) return false;
        return pool.submit(std::move(work));
    }
};

}  // namespace hetcast::detail
