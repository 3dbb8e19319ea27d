#pragma once
/// The knobs of a push, whoever asks for it: `hetcast push` writes them into its request
/// to a daemon, the daemon reads them back, and an embedded Node takes them as the
/// PushOptions part of its SendOptions. One struct, one check and one encoding, so the
/// command line, the daemon and the library cannot drift apart.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "hetcast/model/network.hpp"

namespace hetcast {

struct PushOptions {
    /// A single-source algorithm of `hetcast plan --help` or, for a pattern or an exchange,
    /// fef, ecf, wr, wrp or exchange; "auto" plans with every candidate and takes the
    /// earliest predicted.
    std::string algo = "auto";
    /// Bytes per second each member may send for this job in all (at least 1 KiB/s); 0: no
    /// limit. The plan is made on the network capped at this rate, so the prediction holds.
    std::uint64_t bwlimit = 0;
    /// Bytes per piece of a plan that cuts through; 0: the planner's (a daemon's: its
    /// `piece` setting's) choice.
    std::uint64_t piece = 0;
    /// The whole job must end within this (at most a year) or it is aborted and reported
    /// failed; 0: none (a daemon's: its `job_timeout`).
    std::chrono::milliseconds timeout{0};
};

/// Throws InputError, naming the command-line option, for a bwlimit under 1 KiB/s or a
/// negative timeout or one over a year.
void check(const PushOptions& options);

/// Writes what differs from the defaults into a push request ("algo", "bwlimit", "piece",
/// "timeout" in ms) after check().
void write_push_options(const PushOptions& options, nlohmann::json& request);

/// The options of a push request, checked; `algo` when the request names none. InputError
/// for a field of the wrong type or out of range.
[[nodiscard]] PushOptions read_push_options(const nlohmann::json& request, std::string_view algo = "auto");

/// `net` as a job capped at `bwlimit` bytes/s per member sees it (0: as it is).
[[nodiscard]] Network capped_for_push(const Network& net, std::uint64_t bwlimit);

}  // namespace hetcast
