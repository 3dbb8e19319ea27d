#pragma once
/// Multi-node multicast patterns (Wu §3): several sources, each multicasting one message
/// to its own destination set. A single-node multicast is the special case of one message.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/sched/schedule.hpp"
#include "hetcast/sim/exec_model.hpp"

namespace hetcast {

struct PatternRequest {
    std::vector<Message> messages;
    ExecModel model = ExecModel::nonblocking;
    /// The entries' `file:` paths, for the runtime: empty, or one per message ("" when absent).
    std::vector<std::string> files = {};
    /// Per entry, whether it gave a size (an entry with a `file:` may leave it to the file).
    std::vector<bool> sized = {};
};

/// Parses a pattern: a YAML list of `{source: NODE, size: BYTES, dests: [NODE, ...] | all}`
/// entries with an optional `file: PATH` (then `size` may be left out: the message's size is
/// 0 here and `sized` says so; `hetcast push` takes the file's size at its source); `size` is a number or a string like 64KiB
/// (parse_bytes). `origin` names the text in errors. Throws InputError("origin:line:column:
/// what") for a document that is not a list, an unknown or repeated key, a missing key, an
/// unknown node, a source among its own dests, a repeated dest, empty dests or a bad size.
[[nodiscard]] PatternRequest parse_pattern(std::string_view yaml, std::string_view origin, const Network& net);

/// Reads and parses a pattern file. Throws InputError when it cannot be read or is bad.
[[nodiscard]] PatternRequest load_pattern(const std::filesystem::path& file, const Network& net);

/// Throws InputError unless every message has a source and destinations in range, a
/// finite non-negative size, no repeated destination and not its own source among them.
void check_pattern(const Network& net, const PatternRequest& req);

}  // namespace hetcast
