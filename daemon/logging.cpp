#include "logging.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <memory>
#include <string_view>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace hetcastd {
namespace {

using hetcast::LogLevel;

std::shared_ptr<spdlog::logger> logger;

spdlog::level::level_enum to_spdlog(LogLevel level) {
    switch (level) {
        case LogLevel::trace: return spdlog::level::trace;
        case LogLevel::debug: return spdlog::level::debug;
        case LogLevel::info: return spdlog::level::info;
        case LogLevel::warn: return spdlog::level::warn;
        case LogLevel::error: break;
    }
    return spdlog::level::err;
}

/// %W: the level as the log has always spelled it (INFO, WARN, ...).
class LevelWord final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        const std::string_view w = msg.level <= spdlog::level::trace ? "TRACE"
                                   : msg.level == spdlog::level::debug ? "DEBUG"
                                   : msg.level == spdlog::level::info  ? "INFO"
                                   : msg.level == spdlog::level::warn  ? "WARN"
                                                                       : "ERROR";
        dest.append(w.data(), w.data() + w.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<LevelWord>(); }
};

/// %N: `<N>`, the line's syslog priority (debug 7, info 6, warning 4, err 3).
class SyslogPrefix final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        const std::string_view p = msg.level <= spdlog::level::debug ? "<7>"
                                   : msg.level == spdlog::level::info ? "<6>"
                                   : msg.level == spdlog::level::warn ? "<4>"
                                                                      : "<3>";
        dest.append(p.data(), p.data() + p.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<SyslogPrefix>(); }
};

std::unique_ptr<spdlog::formatter> formatter(bool journal) {
    auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    f->add_flag<LevelWord>('W').add_flag<SyslogPrefix>('N');
    f->set_pattern(journal ? "%N%v" : "%Y-%m-%dT%H:%M:%S.%eZ %W %v");
    return f;
}

}  // namespace

bool stderr_is_journal() {
    const char* stream = std::getenv("JOURNAL_STREAM");
    if (!stream) return false;
    struct stat st{};
    if (::fstat(2, &st) != 0) return false;
    return std::string_view(stream) == std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

void start_logging(LogLevel level, bool journal, const std::filesystem::path& file) {
    auto err = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    err->set_formatter(formatter(journal));
    std::vector<spdlog::sink_ptr> sinks{err};
    if (!file.empty()) {
        auto f = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file.string());
        f->set_formatter(formatter(false));
        sinks.push_back(f);
    }
    logger = std::make_shared<spdlog::logger>("hetcastd", sinks.begin(), sinks.end());
    logger->set_level(to_spdlog(level));
    logger->flush_on(spdlog::level::trace);  // tail -f and tests see each line as it is written
}

void set_log_level(LogLevel level) {
    if (logger) logger->set_level(to_spdlog(level));
}

void log_line(LogLevel level, const std::string& text) {
    if (!logger || !logger->should_log(to_spdlog(level))) return;
    std::string clean = text;
    for (char& c : clean) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    }
    logger->log(to_spdlog(level), spdlog::string_view_t(clean));
}

}  // namespace hetcastd
