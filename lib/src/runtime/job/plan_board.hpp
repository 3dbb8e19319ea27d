#pragma once
// Pushes planned but not started (issue 27), so that pushes planned at the same moment see
// each other without waiting for each other. A coordinator about to plan a push announces
// the flows of its plan alone, under a key, with the request that asks its participants
// for their running flows ({"cmd": "flows", "planning": KEY, "planned": [...]}); each member
// reports them to whoever asks next, until the push is set up there (its own flows are then
// reported) or for seen_life at most. The coordinator reports the flows of its push, those
// of its final plan once it has one, until the push starts. Peer::Impl holds one.
#include <nlohmann/json.hpp>

#include <cstdint>
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
    bool operator==(const PlannedFlow&) const = default;
};

/// The flows of schedule `s` on `net`: per receive, the whole message from its sender, at
/// most `rate` bytes/s (a --bwlimit; 0: no cap).
[[nodiscard]] std::vector<PlannedFlow> planned_flows(const Network& net, const Schedule& s, std::uint64_t rate);
[[nodiscard]] nlohmann::json to_json(const std::vector<PlannedFlow>& flows);
/// At most max_planned_flows entries of the form to_json() writes; others are left out.
[[nodiscard]] std::vector<PlannedFlow> planned_flows_from_json(const nlohmann::json& j);
inline constexpr std::size_t max_planned_flows = 100000;

/// A key for a push `self` plans: the wall clock in milliseconds (fixed width), the name and
/// `n`, unique per member when `n` is.
[[nodiscard]] std::string planning_key(const std::string& self, std::uint64_t wall_ms, std::uint64_t n);

/// Thread safe. Times are seconds on a clock that only goes forward (now_s()).
class PlanBoard {
public:
    /// How long a member reports a push announced to it, at most.
    static constexpr double seen_life = 2.0;
    /// How long a coordinator reports a push of its own that never starts nor ends.
    static constexpr double planned_life = 30.0;

    /// A new key for a push this member (`self`) plans.
    [[nodiscard]] std::string key(const std::string& self, std::uint64_t wall_ms);
    /// This member's push `key` will run `flows` (replacing what was said of it before),
    /// reported until end() or for planned_life.
    void planned(const std::string& key, std::vector<PlannedFlow> flows, double now);
    /// The push `key` started (its receivers report its flows now), or will not run.
    void end(const std::string& key);

    /// What a {"cmd": "flows"} request from `asker` announces ("planning", "planned").
    void note(const nlohmann::json& request, const std::string& asker, double now);
    /// Adds to a flows answer's "flows" the planned pushes' flows, each with its key as
    /// "job" and its "coordinator": this member's own (`self`), and those announced to it
    /// (by their key alone, {"job", "coordinator"}, unless the announcement carried flows),
    /// except the ones whose coordinator has set a job up here since (`set_up`: per
    /// coordinator, the latest time one of its jobs was set up here). Those `asker` announced
    /// are left out: it knows them (its own board), and at a hundred members echoing a push's
    /// flows back from each doubled the bytes of every ask (O(members²) at the coordinator).
    void answer(nlohmann::json& out, const std::string& self, double now, const std::map<std::string, double>& set_up,
                const std::string& asker);

private:
    struct Own {
        double since = 0;
        std::vector<PlannedFlow> flows;
    };
    struct Seen {
        std::string coordinator;
        double noted = 0;
        std::vector<PlannedFlow> flows;
    };
    std::mutex mu_;
    std::uint64_t next_ = 0;
    std::map<std::string, Own> own_;
    std::map<std::string, Seen> seen_;
};

/// Ends push `key` on `board` when it goes out of scope (a try that returns early).
struct EndPlanning {
    PlanBoard& board;
    const std::string& key;
    ~EndPlanning() { board.end(key); }
};

}  // namespace hetcast::detail
