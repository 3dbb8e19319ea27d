#pragma once
/// How the library says what it does: one line at a time, with the level its writer chose,
/// through a function the embedding program gives (PeerConfig::log, Service,
/// net::TransportCallbacks::log). The library prints nothing itself and needs no logging
/// library; the program filters and formats (hetcastd hands the lines to spdlog).
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace hetcast {

/// trace: per-frame chatter; debug: what a request or connection did; info: what an
/// operator wants to see (joins, pushes, start and stop); warn: something refused or
/// failed that the program survives; error: this member cannot do its work.
enum class LogLevel { trace, debug, info, warn, error };

/// Receives a line (no newline) and its level. Called from the library's threads, several
/// at once: it must be thread safe, and should be quick (it runs on the I/O thread too).
using LogFn = std::function<void(LogLevel, const std::string&)>;

/// "trace", "debug", "info", "warn" ("warning"), "error"; nullopt for anything else.
[[nodiscard]] inline std::optional<LogLevel> parse_log_level(std::string_view s) {
    if (s == "trace") return LogLevel::trace;
    if (s == "debug") return LogLevel::debug;
    if (s == "info") return LogLevel::info;
    if (s == "warn" || s == "warning") return LogLevel::warn;
    if (s == "error") return LogLevel::error;
    return std::nullopt;
}

/// What parse_log_level accepts, for messages.
inline constexpr const char* log_level_names = "trace, debug, info, warn, error";

}  // namespace hetcast
