#pragma once
// Asking other members: calls (request frames) and pings, each answer awaited by its
// sequence number (wire/pending.hpp) until it comes, its time is out or the peer stops.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/peer_types.hpp"
#include "../wire/pending.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"

namespace hetcast::detail {

class Calls {
public:
    /// The parts outlive this (Peer::Impl holds them all).
    Calls(PeerCore& core, Connections& connections) : core_(core), connections_(connections) {}

    /// Peer::call_on, call_all and ping (runtime/peer.hpp).
    nlohmann::json call_on(const net::ConnectionPtr& c, const std::string& who, const nlohmann::json& request,
                           std::chrono::milliseconds timeout);
    PeerAnswers call_all(const std::vector<std::string>& members, const nlohmann::json& request,
                         std::chrono::milliseconds timeout);
    std::vector<PingSample> ping(const std::string& member, const std::vector<std::size_t>& sizes, int reps);
    /// A ping is answered at once, on the I/O thread.
    static void on_ping(const net::ConnectionPtr& c, const net::Frame& f);
    void on_pong(const net::Frame& f);
    void on_response(const net::Frame& f);
    /// Whether a call or a ping waits for its answer.
    bool waiting() const { return !calls_.empty() || !pings_.empty(); }
    /// The peer stops: every answer still awaited fails.
    void clear() {
        pings_.clear();
        calls_.clear();
    }

private:
    PeerCore& core_;
    Connections& connections_;
    /// Pings waiting for their pong: (the peer's clock, when the pong came).
    Pending<std::pair<double, double>> pings_;
    /// Requests waiting for their response.
    Pending<nlohmann::json> calls_;
};

}  // namespace hetcast::detail
