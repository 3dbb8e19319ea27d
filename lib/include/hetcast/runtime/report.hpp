#pragma once
/// What a job achieved next to what the model predicted for the same Schedule.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hetcast/sched/schedule.hpp"

namespace hetcast {

/// One (message, destination) of a job. Times are seconds from the job's start on the
/// coordinator's clock (destinations' clocks are mapped onto it with the offset measured
/// when the job was set up).
struct Outcome {
    MessageId message = 0;
    std::string source;
    std::string dest;
    double predicted = 0;
    double achieved = 0;  ///< valid when ok
    bool ok = false;
    std::string error;    ///< why it failed, when !ok
    /// Which try delivered it: 1 as planned, 2+ re-served after members failed.
    int attempt = 1;
};

/// A member that failed during a job on its own account (not because what fed it failed).
struct MemberFailure {
    std::string member;
    std::string reason;
    friend bool operator==(const MemberFailure&, const MemberFailure&) = default;
};

/// One transfer as it happened: from the first to the last byte at the receiver, in
/// seconds from the job's start (coordinator clock, offsets applied).
struct Hop {
    MessageId message = 0;
    std::string from;
    std::string to;
    std::uint64_t bytes = 0;
    double start = 0;
    double end = 0;
    [[nodiscard]] double rate() const { return end > start ? static_cast<double>(bytes) / (end - start) : 0; }
    friend bool operator==(const Hop&, const Hop&) = default;
};

struct JobReport {
    std::uint64_t job = 0;
    std::string algorithm;
    std::string model;
    std::uint64_t bytes = 0;       ///< sum of the messages' sizes
    double predicted = 0;          ///< the simulator's completion time for the schedule
    /// The same when a link carries one message at a time (LinkUse::one_at_a_time): what the
    /// network can do with a schedule that sends several messages over one link at once.
    double predicted_one_per_link = 0;
    double achieved = 0;           ///< latest achieved completion over the successful outcomes
    double lower_bound = 0;
    std::string relay = "store-and-forward";  ///< or "cut-through"
    std::uint64_t piece = 0;                  ///< cut-through: bytes per piece
    double throughput_bound = 0;              ///< bytes/s no schedule beats in steady state; 0: unknown
    /// What auto weighed: (candidate, predicted s), in the order tried; empty otherwise.
    std::vector<std::pair<std::string, double>> candidates;
    std::vector<Outcome> outcomes; ///< one per (message, destination), in schedule order
    std::vector<Hop> hops;         ///< every transfer, relays' included, as receivers reported them
    std::vector<std::string> skipped;  ///< members left out of the plan (down)
    /// Members that failed, each with its reason; what they should have fed was re-served.
    std::vector<MemberFailure> failed_members;
    int attempts = 1;  ///< tries: the plan, then one per re-serving of orphaned destinations
    /// Other jobs running on the participants when the plan started, whose flows shared the
    /// capacities with it in its prediction (0: it was predicted alone).
    std::size_t beside = 0;
    /// When the jobs beside it changed between its planning and its start (pushes started
    /// at once plan at once, each before it hears of the others): `predicted` and `beside`
    /// are as of its start, these as of its planning. 0: unchanged.
    double predicted_at_plan = 0;
    std::size_t beside_at_plan = 0;

    [[nodiscard]] bool ok() const;
    [[nodiscard]] std::size_t failures() const;
    /// achieved / predicted (0 when nothing was predicted).
    [[nodiscard]] double ratio() const;
};

/// {"job" (decimal string),"algorithm","model","bytes","predicted","achieved","lower_bound","ratio","ok",
///  "predicted_one_per_link", "relay", "piece", "throughput_bound", "candidates":[{"algorithm","predicted"}],
///  "skipped":[...], "failed_members":[{"member","reason"}], "attempts", "beside",
///  "predicted_at_plan", "beside_at_plan" (when they differ),
///  "outcomes":[{"message","source","dest","predicted","achieved","ok","error","attempt"}],
///  "hops":[{"message","from","to","bytes","start","end","rate"}]}
[[nodiscard]] nlohmann::json to_json(const JobReport& r);
/// Throws InputError when `j` is not a report as to_json writes it.
[[nodiscard]] JobReport report_from_json(const nlohmann::json& j);

/// A table: per outcome predicted vs achieved; then the summary lines.
void print_report(std::ostream& out, const JobReport& r);
/// Several reports as columns side by side, one row per destination, then the totals.
void print_reports_side_by_side(std::ostream& out, const std::vector<JobReport>& reports);

}  // namespace hetcast
