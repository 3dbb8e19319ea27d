#include "hetcast/runtime/history.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "hetcast/error.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/runtime/nodeset.hpp"

namespace hetcast {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

/// A history file stays below this whatever the limit: the oldest entries go first.
constexpr std::size_t max_history_bytes = std::size_t{32} << 20;

std::vector<std::string> destinations(const JobReport& r) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const Outcome& o : r.outcomes) {
        if (seen.insert(o.dest).second) out.push_back(o.dest);
    }
    return out;
}

std::string seconds_text(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", s);
    return b;
}

}  // namespace

std::string push_outcome(const JobReport& r) {
    if (r.ok()) return "done";
    const bool cancelled = std::any_of(r.outcomes.begin(), r.outcomes.end(), [](const Outcome& o) {
        return !o.ok && o.error.rfind("cancelled", 0) == 0;
    });
    if (cancelled) return "cancelled";
    const bool some = std::any_of(r.outcomes.begin(), r.outcomes.end(), [](const Outcome& o) { return o.ok; });
    return some ? "partial" : "failed";
}

std::string audit_line(const PushRecord& p, const JobReport& r) {
    const auto dests = destinations(r);
    std::vector<std::string> failed;
    for (const Outcome& o : r.outcomes) {
        if (!o.ok && std::find(failed.begin(), failed.end(), o.dest) == failed.end()) failed.push_back(o.dest);
    }
    std::string line = "job " + std::to_string(r.job) + " by '" + p.operator_name + "': " + p.what + ", " +
                       std::to_string(r.bytes) + " bytes to " + std::to_string(dests.size()) + " (" +
                       (dests.empty() ? std::string("none") : fold_nodeset(dests)) + ") with " + r.algorithm + ": " +
                       push_outcome(r);
    if (!failed.empty()) line += " (failed: " + fold_nodeset(failed) + ")";
    return line + ", " + seconds_text(r.achieved) + " s achieved, " + seconds_text(r.predicted) + " s predicted";
}

json history_entry(const PushRecord& p, const JobReport& r) {
    json answer = p.answer;
    if (auto it = answer.find("reports"); it != answer.end() && it->is_array()) {
        for (json& rep : *it) rep["hops"] = json::array();
    }
    return {{"job", std::to_string(r.job)}, {"operator", p.operator_name},  {"what", p.what},
            {"started", p.started},        {"ended", p.ended},             {"outcome", push_outcome(r)},
            {"bytes", r.bytes},            {"destinations", destinations(r)}, {"algorithm", r.algorithm},
            {"achieved", r.achieved},      {"predicted", r.predicted},     {"answer", std::move(answer)}};
}

JobHistory::JobHistory(fs::path file, std::size_t limit, const LogFn& log)
    : file_(std::move(file)), limit_(limit), log_(log) {
    if (limit_ == 0) return;
    std::ifstream in(file_);
    if (!in) return;
    std::stringstream text;
    text << in.rdbuf();
    const json j = json::parse(text.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("jobs") || !j["jobs"].is_array()) {
        std::error_code ec;
        fs::rename(file_, fs::path(file_.string() + ".bad"), ec);
        if (log_) log_(LogLevel::warn, file_.string() + " is not a job history: moved aside to " + file_.string() + ".bad");
        return;
    }
    for (const json& e : j["jobs"]) {
        if (e.is_object() && e.contains("job") && e["job"].is_string()) entries_.push_back(e);
    }
    if (entries_.size() > limit_) entries_.erase(entries_.begin(), entries_.end() - static_cast<std::ptrdiff_t>(limit_));
}

void JobHistory::add(json entry) {
    if (limit_ == 0) return;
    std::lock_guard lock(mu_);
    entries_.push_back(std::move(entry));
    if (entries_.size() > limit_) entries_.erase(entries_.begin(), entries_.end() - static_cast<std::ptrdiff_t>(limit_));
    std::string text;
    while (true) {
        text = json{{"jobs", entries_}}.dump(-1, ' ', false, json::error_handler_t::replace);
        if (text.size() <= max_history_bytes || entries_.size() <= 1) break;
        entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>((entries_.size() + 9) / 10));
    }
    try {
        write_file_atomically(file_, text + "\n", 0600);
    } catch (const std::exception& e) {
        if (log_) log_(LogLevel::warn, std::string("cannot keep the job history: ") + e.what());
    }
}

std::vector<json> JobHistory::entries() const {
    std::lock_guard lock(mu_);
    return entries_;
}

std::optional<json> JobHistory::find(const std::string& id) const {
    std::lock_guard lock(mu_);
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
        if ((*it)["job"] == id) return *it;
    }
    return std::nullopt;
}

}  // namespace hetcast
