#pragma once
/// hetcastd's log: the library's lines (hetcast/log.hpp) and the daemon's own, through spdlog.
#include <filesystem>
#include <string>

#include "hetcast/log.hpp"

namespace hetcastd {

/// Whether stderr is a stream to the journal: $JOURNAL_STREAM ("DEVICE:INODE", set by
/// systemd for StandardError=journal) names the very file stderr is. A unit whose stderr
/// goes to a file, or a daemon started from a shell under a service, is not.
[[nodiscard]] bool stderr_is_journal();

/// Sends lines at `level` and up to stderr, and to `file` when not empty (appended). On
/// stderr for the journal: `<N>text`, N its syslog priority (journald's SyslogLevelPrefix
/// reads it; the journal has its own timestamps). Otherwise, and always in the file:
/// `2026-11-23T15:00:00.123Z LEVEL text` (UTC). Throws when the file cannot be opened.
void start_logging(hetcast::LogLevel level, bool journal, const std::filesystem::path& file);

/// Changes the least level logged (SIGHUP). Thread safe.
void set_log_level(hetcast::LogLevel level);

/// One line; control characters (a peer's words may hold some) become spaces. Thread safe.
void log_line(hetcast::LogLevel level, const std::string& text);

}  // namespace hetcastd
