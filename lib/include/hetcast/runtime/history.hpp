#pragma once
/// The reports of the last pushes a daemon coordinated, kept across restarts in one JSON
/// file of its state_dir (`hetcast jobs --history`, `hetcast wait JOB`).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetcast/log.hpp"
#include "hetcast/runtime/report.hpp"

namespace hetcast {

/// What became of a push, from its report: "done" (every destination has it), "partial"
/// (some do), "failed" (none does), "cancelled" (stopped by an operator, whatever landed).
[[nodiscard]] std::string push_outcome(const JobReport& r);

/// One finished push, as the history and the coordinator's audit line tell it.
struct PushRecord {
    std::string operator_name;  ///< whose identity started it
    std::string what;           ///< the file, or "N files, M directories, L links" of a tree
    std::string started, ended; ///< UTC, ISO 8601
    /// The daemon's final answer to the push ({"ok", "reports": [...]}, "error").
    nlohmann::json answer;
};

/// The coordinator's audit line for a finished push: job id, operator, what, bytes,
/// destinations (folded as a node set), algorithm, outcome (and who failed), achieved and
/// predicted seconds.
[[nodiscard]] std::string audit_line(const PushRecord& p, const JobReport& r);

/// The history entry for a push: {"job", "operator", "what", "started", "ended", "outcome",
/// "bytes", "destinations", "algorithm", "achieved", "predicted", "answer"} (docs/json.md);
/// the answer's reports with their hops left out (empty), so that an entry stays small.
[[nodiscard]] nlohmann::json history_entry(const PushRecord& p, const JobReport& r);

/// The last `limit` entries, in the order they ended. Thread-safe.
class JobHistory {
public:
    /// Reads `file` when it exists; a file that is not a history is logged (warn), moved
    /// aside to FILE.bad, and the history starts empty. limit 0: nothing is kept or written.
    JobHistory(std::filesystem::path file, std::size_t limit, const LogFn& log);

    /// Adds an entry, drops the oldest past the limit, and rewrites the file atomically
    /// (temporary file, rename); a write that fails is logged, the entry stays in memory.
    void add(nlohmann::json entry);
    /// The entries, oldest first.
    [[nodiscard]] std::vector<nlohmann::json> entries() const;
    /// The entry of job `id` (decimal), if kept.
    [[nodiscard]] std::optional<nlohmann::json> find(const std::string& id) const;

private:
    std::filesystem::path file_;
    std::size_t limit_;
    LogFn log_;
    mutable std::mutex mu_;
    std::vector<nlohmann::json> entries_;
};

}  // namespace hetcast
