#pragma once
// One job a relay passes on (peer_relay.hpp): the members below it and the child each is
// reached through, the children's connections, who below finished, the events batched for
// the parent and the frames queued for the children. Not thread safe: Relays holds its
// lock around every call, and does the sending and dialling itself.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "peer_connections.hpp"

namespace hetcast::detail {

class RelayedJob {
public:
    RelayedJob(std::uint64_t job, net::ConnectionPtr parent) : job_(job), parent_(std::move(parent)) {}

    [[nodiscard]] std::uint64_t job() const { return job_; }
    [[nodiscard]] const net::ConnectionPtr& parent() const { return parent_; }
    /// A plan for `to` goes down through child `next`: `to` has not finished.
    void route(const std::string& to, const std::string& next);
    /// The children that the members below are reached through.
    [[nodiscard]] std::set<std::string> children() const;
    /// Whether `c` is the connection with the child it comes from.
    [[nodiscard]] bool from_child(const net::ConnectionPtr& c) const;
    /// Whether `member` is reached through `child` and is not `child` itself.
    [[nodiscard]] bool below(const std::string& member, const std::string& child) const;
    /// The children whose connection is `c`.
    [[nodiscard]] std::vector<std::string> children_on(const net::ConnectionPtr& c) const;
    /// Whether `c` is the parent's connection or a child's.
    [[nodiscard]] bool uses(const net::ConnectionPtr& c) const;
    /// Whether `member` below reported done or failed.
    [[nodiscard]] bool finished(const std::string& member) const { return finished_.count(member) > 0; }
    /// A cancel of the whole job passed down at `now`.
    void cancel(double now) { cancelled_ = now; }
    /// Whether a cancel passed down more than `stall` seconds before `now`.
    [[nodiscard]] bool expired(double now, double stall) const { return cancelled_ > 0 && now - cancelled_ > stall; }
    /// Whether every member below finished and nothing is on its way up or down.
    [[nodiscard]] bool done() const;

    /// An event for the parent, batched: a member's progress adds to its entry in the batch.
    void add(nlohmann::json event);
    /// The "failed" events of the members below `child` (and of `child`) that have not
    /// finished: `child` failed for `why`.
    [[nodiscard]] std::vector<nlohmann::json> failures(const std::string& child, const std::string& why) const;
    /// A flush of the batch up begins; false when one runs or nothing waits.
    bool start_flush();
    /// The batch, taken; false (and the flush ends) when it is empty.
    bool take(nlohmann::json& events);
    void end_flush() { flushing_ = false; }

    /// Queues `f` for child `to`; true when no sender runs (the caller starts one).
    bool push(const std::string& to, net::Frame f);
    /// The next frame down and the connection with its child (null: not dialled yet); false
    /// (and the sender ends) when the queue is empty.
    bool pop(std::pair<std::string, net::Frame>& next, net::ConnectionPtr& c);
    /// No sender could start: the queue is dropped.
    void drop() {
        sending_ = false;
        queue_.clear();
    }
    /// `child` was dialled at `now`.
    void dialled(const std::string& child, net::ConnectionPtr c, double now);
    /// A child with members below still running that was not heard from for `stall`
    /// seconds goes in `silent`; one not heard from for a second, and not pinged in the
    /// last second, in `ping`.
    void watch(double now, double stall, const Connections& connections, std::vector<net::ConnectionPtr>& silent,
               std::vector<net::ConnectionPtr>& ping);

private:
    const std::uint64_t job_;
    const net::ConnectionPtr parent_;
    std::map<std::string, std::string> via_;  ///< member below → the child it is reached through
    std::map<std::string, net::ConnectionPtr> children_;
    std::map<std::string, double> since_;     ///< child → when its first frame went
    std::map<std::string, double> pinged_;
    std::set<std::string> finished_;          ///< members below that reported done or failed
    nlohmann::json outbox_ = nlohmann::json::array();
    bool flushing_ = false;
    std::vector<std::pair<std::string, net::Frame>> queue_;  ///< frames down, in order
    bool sending_ = false;
    double cancelled_ = 0;  ///< when a cancel of the whole job passed down (0: none)
};

}  // namespace hetcast::detail
