#pragma once
// Pushes being planned, and planned but not started (issue 27), so that pushes planned at
// the same moment see each other. A coordinator announces each push it plans, by a key that
// orders it among simultaneous ones, to the members it asks for their running flows
// ({"cmd": "flows", "planning": KEY}); they list the keys they saw. A push that finds an
// earlier key still being planned by its coordinator waits, a short while at most, until
// that coordinator has planned it, and then plans beside its flows, which the coordinator
// reports with its running ones until the push has started. Peer::Impl holds one.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"

namespace hetcast::detail {

/// A flow a planned push will run: `bytes` from `from` to `to`, at most `rate` bytes/s (0: no cap).
struct PlannedFlow {
    std::string from;
    std::string to;
    std::uint64_t bytes = 0;
    std::uint64_t rate = 0;
};

/// The flows of schedule `s` on `net`: per receive, the whole message from its sender, at
/// most `rate` bytes/s (a --bwlimit; 0: no cap).
[[nodiscard]] std::vector<PlannedFlow> planned_flows(const Network& net, const Schedule& s, std::uint64_t rate);

/// Thread safe. Times are seconds on any clock that only goes forward (now_s()).
class PlanBoard {
public:
    /// How long a key announced to a member counts after its last announcement, and how long
    /// a key may stay "planning" at its coordinator: a coordinator that stopped answering
    /// or never ran its plan holds nobody up for longer.
    static constexpr double intent_life = 2.0;
    /// How long a planned push's flows are reported when it never starts nor ends.
    static constexpr double planned_life = 30.0;
    /// The longest a push waits for earlier ones to be planned.
    static constexpr double wait_most = 1.0;

    /// A new key for a push this member (`self`) plans; it counts as planning until
    /// planned() or end(). Keys order by `wall_ms` (milliseconds since the epoch, the
    /// same clock on every member as far as NTP keeps it), then by name.
    [[nodiscard]] std::string begin(const std::string& self, std::uint64_t wall_ms, double now);
    /// The push `key` is planned: its flows are reported until end() (or planned_life).
    void planned(const std::string& key, std::vector<PlannedFlow> flows, double now);
    /// The push `key` started (its members report its flows now), or will not run.
    void end(const std::string& key);

    /// What a {"cmd": "flows"} request from `asker` announces: remembered for intent_life.
    void note(const nlohmann::json& request, const std::string& asker, double now);
    /// Adds to a flows answer: "planning" (the keys this member plans now), "seen" (the live
    /// keys others announced here: [{"key", "coordinator"}]) and, to "flows", the planned
    /// pushes' flows with their key as "job".
    void answer(nlohmann::json& out, double now);

private:
    struct Own {
        bool planning = true;
        double since = 0;
        std::vector<PlannedFlow> flows;
    };
    struct Seen {
        std::string coordinator;
        double until = 0;
    };
    std::mutex mu_;
    std::uint64_t next_ = 0;
    std::map<std::string, Own> own_;
    std::map<std::string, Seen> seen_;
};

/// The earlier pushes a push planned under `key` must wait for, from its members' flows
/// answers (`answers`, by member name): each key below `key` that some member saw, whose
/// coordinator still lists it as planning, or was not asked (its name is then in
/// `ask_also`). Empty: plan now.
[[nodiscard]] std::vector<std::string> earlier_planning(const std::string& key,
                                                        const std::map<std::string, nlohmann::json>& answers,
                                                        std::vector<std::string>& ask_also);

}  // namespace hetcast::detail
