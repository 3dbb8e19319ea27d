#pragma once
// The coordinator's side of paced crossings (sim/pace.hpp): as its job runs, what runs
// beside it is asked again every half second, and the senders of its transfers across
// FIFO uplinks that other jobs use, or that the job crosses both ways at once, are told
// their share of them (job_pace frames), or that they are held no longer.
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../job/job_state.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/sim/pace.hpp"
#include "peer_try.hpp"

namespace hetcast::detail {

/// The paces of one job's crossings, as they should be now. Pure: no connections.
class CrossingPacer {
public:
    /// `s` the job's schedule, `predicted` its timeline as planned; `planned`: the paces its
    /// plans carry.
    CrossingPacer(const Network& net, const Schedule& s, const Timeline& predicted, const std::vector<Pace>& planned);
    /// Whether any transfer crosses a FIFO uplink (else there is nothing to keep).
    [[nodiscard]] bool needed() const { return !crossing_.empty(); }
    /// The paces that changed, per sending member: `beside` the other jobs' flows reported
    /// now, `elapsed` seconds since the job started, `done` the (message, receiver) that
    /// have their message. Its own crossings count from when their sender reaches them
    /// (stored and forwarded: it holds the message of the last receive before the send in
    /// its list; cut through: their predicted start) until done.
    std::map<std::string, std::vector<SendPace>> update(const std::vector<BackgroundFlow>& beside, double elapsed,
                                                        const std::set<std::pair<MessageId, std::string>>& done);

private:
    const Network& net_;
    bool cut_through_;
    std::vector<Transfer> crossing_;
    /// Per crossing: the receive (message, node) its sender's list holds before it, if any.
    std::vector<std::optional<std::pair<MessageId, NodeId>>> after_;
    std::map<std::tuple<MessageId, NodeId, NodeId>, double> told_;
};

/// What runs beside a job, asked as it starts and then every `every` while it keeps its
/// paces: the asking half of the coordinator's loop, apart from what it sends.
class BesideWatch {
public:
    using Ask = std::function<Beside()>;
    /// Asks at once (on a thread of its own; with none to spare, nothing is known).
    BesideWatch(Ask ask, std::chrono::milliseconds every);
    /// A new answer since the last call, asking again when one is due; none while asking.
    std::optional<Beside> poll(bool keep_asking);
    /// What ran beside as the job started: waits for that answer if it has not come;
    /// none when nobody answered.
    std::optional<Beside> at_start();

private:
    Ask ask_;
    std::chrono::milliseconds every_;
    std::future<Beside> first_, asking_;
    std::optional<Beside> start_;
    std::chrono::steady_clock::time_point next_;
    [[nodiscard]] std::future<Beside> launch();
};

/// This member's sends of `job` keep to `paces` from now on: the lanes already dialled at
/// once, the others as their sends start (peer_tasks.cpp).
void apply_paces(Job& job, const std::vector<SendPace>& paces);

}  // namespace hetcast::detail
