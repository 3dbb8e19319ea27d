#pragma once
// Requests from other members, answered: on worker pools, at most requests_per_peer each
// peer (pings are Calls', peer_asking.hpp); and what this member asks of many at once
// through Calls: hellos along the control tree, flows, who plans beside it.
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/peer_types.hpp"
#include "peer_admission.hpp"
#include "peer_asking.hpp"
#include "peer_connections.hpp"
#include "peer_core.hpp"
#include "peer_origins.hpp"

namespace hetcast::detail {

class Requests {
public:
    using Handler = std::function<void(const net::PeerIdentity&, const nlohmann::json&, Responder)>;
    /// The parts outlive this (Peer::Impl holds them all). `flows` answers {"cmd": "flows"}
    /// on the I/O thread, given who asks (docs/protocol.md, "Running jobs' flows").
    Requests(PeerCore& core, Connections& connections, Calls& calls, Admission& admission, Origins& origins,
             std::function<nlohmann::json(const std::string& asker)> flows)
        : core_(core), connections_(connections), calls_(calls), admission_(admission), origins_(origins),
          flows_(std::move(flows)) {}

    /// What answers requests other than describe and flows (Peer::on_request).
    void set_handler(Handler handler);
    void on_request(const net::ConnectionPtr& c, const net::Frame& f);

    /// Peer::hello_all (peer_hellos.cpp).
    PeerAnswers hello_all(const std::vector<std::string>& members, std::chrono::milliseconds timeout);
    /// A relay's answer to {"cmd": "hellos"}: its own hello, with "below" (member → its
    /// answer) and "down" (member → why not) for the members the request lists.
    nlohmann::json answer_hellos(const net::PeerIdentity& from, const nlohmann::json& req);
    /// {"cmd": "flows"} to each of `members` (this member's own read directly), one deadline
    /// for all; a member that does not answer in time, or not as Participant::flows_answer
    /// does, has no entry.
    std::vector<nlohmann::json> ask_flows(const std::vector<std::string>& members,
                                          const nlohmann::json& request = {{"cmd", "flows"}},
                                          std::map<std::string, nlohmann::json>* by_member = nullptr);
    /// Peer::beside(); the flows of push `own` (a key) are not its own neighbours.
    PeerBeside beside(const Network& net, const std::vector<std::string>& participants, const Schedule* plan = nullptr,
                        std::uint64_t rate = 0, const std::string& own = {});

private:
    PeerAnswers hellos(const std::vector<std::string>& members, std::size_t fanout, std::chrono::steady_clock::time_point deadline);

    PeerCore& core_;
    Connections& connections_;
    Calls& calls_;
    Admission& admission_;
    Origins& origins_;
    std::function<nlohmann::json(const std::string& asker)> flows_;
    std::mutex mu_;
    Handler handler_;
};

}  // namespace hetcast::detail
