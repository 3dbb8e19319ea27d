#include "hetcast/runtime/report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hetcast/error.hpp"
#include "hetcast/report/plan_report.hpp"

namespace hetcast {

bool JobReport::ok() const { return failures() == 0; }

std::size_t JobReport::failures() const {
    return static_cast<std::size_t>(
        std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& o) { return !o.ok; }));
}

namespace {

/// `s` as valid UTF-8: every byte that does not start a well-formed sequence becomes
/// U+FFFD, so a report always serializes (nlohmann's dump() throws on invalid UTF-8).
std::string utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        std::size_t len = 0;
        std::uint32_t cp = 0;
        if (b < 0x80) len = 1, cp = b;
        else if (b >= 0xC2 && b <= 0xDF) len = 2, cp = b & 0x1F;
        else if (b >= 0xE0 && b <= 0xEF) len = 3, cp = b & 0x0F;
        else if (b >= 0xF0 && b <= 0xF4) len = 4, cp = b & 0x07;
        bool good = len > 0 && i + len <= s.size();
        for (std::size_t k = 1; good && k < len; ++k) {
            const auto c = static_cast<unsigned char>(s[i + k]);
            if ((c & 0xC0) != 0x80) good = false;
            cp = (cp << 6) | (c & 0x3F);
        }
        // Overlong forms, surrogates and code points past U+10FFFF.
        if (good && ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
                     (cp >= 0xD800 && cp <= 0xDFFF))) {
            good = false;
        }
        if (good) {
            out.append(s.substr(i, len));
            i += len;
        } else {
            out += "\xEF\xBF\xBD";
            ++i;
        }
    }
    return out;
}

}  // namespace

double JobReport::ratio() const {
    if (!(predicted > 0) || !std::isfinite(predicted) || !std::isfinite(achieved)) return 0;
    return achieved / predicted;
}

nlohmann::json to_json(const JobReport& r) {
    nlohmann::json outcomes = nlohmann::json::array();
    for (const Outcome& o : r.outcomes) {
        outcomes.push_back({{"message", o.message},
                            {"source", utf8(o.source)},
                            {"dest", utf8(o.dest)},
                            {"predicted", o.predicted},
                            {"achieved", o.achieved},
                            {"ok", o.ok},
                            {"error", utf8(o.error)},
                            {"attempt", o.attempt}});
    }
    nlohmann::json failed_members = nlohmann::json::array();
    for (const MemberFailure& f : r.failed_members) {
        failed_members.push_back({{"member", utf8(f.member)}, {"reason", utf8(f.reason)}});
    }
    nlohmann::json skipped = nlohmann::json::array();
    for (const std::string& name : r.skipped) skipped.push_back(utf8(name));
    nlohmann::json hops = nlohmann::json::array();
    for (const Hop& h : r.hops) {
        hops.push_back({{"message", h.message}, {"from", utf8(h.from)}, {"to", utf8(h.to)}, {"bytes", h.bytes},
                        {"start", h.start}, {"end", h.end}, {"rate", h.rate()}});
    }
    nlohmann::json candidates = nlohmann::json::array();
    for (const auto& [name, t] : r.candidates) candidates.push_back({{"algorithm", utf8(name)}, {"predicted", t}});
    nlohmann::json out{{"job", std::to_string(r.job)},
                       {"algorithm", utf8(r.algorithm)},
                       {"model", utf8(r.model)},
                       {"bytes", r.bytes},
                       {"predicted", r.predicted},
                       {"predicted_one_per_link", r.predicted_one_per_link},
                       {"achieved", r.achieved},
                       {"lower_bound", r.lower_bound},
                       {"relay", r.relay},
                       {"piece", r.piece},
                       {"throughput_bound", r.throughput_bound},
                       {"candidates", std::move(candidates)},
                       {"ratio", r.ratio()},
                       {"ok", r.ok()},
                       {"skipped", std::move(skipped)},
                       {"failed_members", std::move(failed_members)},
                       {"attempts", r.attempts},
                       {"beside", r.beside},
                       {"outcomes", std::move(outcomes)},
                       {"hops", std::move(hops)}};
    if (r.predicted_at_plan > 0) {
        out["predicted_at_plan"] = r.predicted_at_plan;
        out["beside_at_plan"] = r.beside_at_plan;
    }
    return out;
}

namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& what) {
    throw InputError("bad job report: " + where + ": " + what);
}

const json& field(const json& obj, const char* key, const std::string& where) {
    const auto it = obj.find(key);
    if (it == obj.end()) bad(where, std::string("missing field '") + key + "'");
    return *it;
}

std::string join(const std::string& where, const char* key) {
    return where.empty() ? std::string(key) : where + "." + key;
}

std::string get_string(const json& obj, const char* key, const std::string& where) {
    const json& v = field(obj, key, where);
    if (!v.is_string()) bad(join(where, key), "expected a string");
    return v.get<std::string>();
}

std::uint64_t get_unsigned(const json& obj, const char* key, const std::string& where,
                           std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
    const json& v = field(obj, key, where);
    std::uint64_t out = 0;
    if (v.is_number_unsigned()) {
        out = v.get<std::uint64_t>();
    } else if (v.is_number_integer()) {
        const auto s = v.get<std::int64_t>();
        if (s < 0) bad(join(where, key), "must not be negative");
        out = static_cast<std::uint64_t>(s);
    } else {
        bad(join(where, key), "expected a whole number");
    }
    if (out > max) bad(join(where, key), "larger than " + std::to_string(max));
    return out;
}

/// A job id: a decimal string (JSON numbers lose precision past 2^53 in most readers), or a
/// number as daemons before schema version 1 sent it.
std::uint64_t get_job(const json& obj) {
    const json& v = field(obj, "job", "");
    if (!v.is_string()) return get_unsigned(obj, "job", "");
    const std::string text = v.get<std::string>();
    if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos) {
        bad("job", "expected a job id (decimal digits)");
    }
    try {
        return std::stoull(text);
    } catch (const std::out_of_range&) {
        bad("job", "larger than " + std::to_string(std::numeric_limits<std::uint64_t>::max()));
    }
}

double get_seconds(const json& obj, const char* key, const std::string& where) {
    const json& v = field(obj, key, where);
    if (!v.is_number()) bad(join(where, key), "expected a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) bad(join(where, key), "expected a finite number");
    return d;
}

bool get_bool(const json& obj, const char* key, const std::string& where) {
    const json& v = field(obj, key, where);
    if (!v.is_boolean()) bad(join(where, key), "expected true or false");
    return v.get<bool>();
}

/// Text from a report (possibly from the network) made safe for a terminal line.
std::string printable(std::string_view s, std::size_t limit = 200) {
    std::string out;
    for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
        out += std::iscntrl(static_cast<unsigned char>(s[i])) ? '?' : s[i];
    }
    if (s.size() > limit) out += "...";
    return out;
}

std::string ratio_text(double ratio) {
    if (!(ratio > 0) || !std::isfinite(ratio)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", ratio);
    return buf;
}

std::string pad(const std::string& s, std::size_t width, bool right = false) {
    if (s.size() >= width) return s;
    const std::string fill(width - s.size(), ' ');
    return right ? fill + s : s + fill;
}

}  // namespace

JobReport report_from_json(const json& j) {
    if (!j.is_object()) bad("report", "expected an object");
    JobReport r;
    r.job = get_job(j);
    r.algorithm = get_string(j, "algorithm", "");
    r.model = get_string(j, "model", "");
    r.bytes = get_unsigned(j, "bytes", "");
    r.predicted = get_seconds(j, "predicted", "");
    r.predicted_one_per_link = j.contains("predicted_one_per_link") ? get_seconds(j, "predicted_one_per_link", "")
                                                                    : r.predicted;
    r.achieved = get_seconds(j, "achieved", "");
    r.lower_bound = get_seconds(j, "lower_bound", "");
    // Reports from before cut-through have none of these.
    if (j.contains("relay")) {
        r.relay = get_string(j, "relay", "");
        if (r.relay != "store-and-forward" && r.relay != "cut-through") bad("relay", "expected store-and-forward or cut-through");
    }
    if (j.contains("piece")) r.piece = get_unsigned(j, "piece", "");
    if (j.contains("throughput_bound")) r.throughput_bound = get_seconds(j, "throughput_bound", "");
    if (const auto it = j.find("hops"); it != j.end()) {
        if (!it->is_array()) bad("hops", "expected a list");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const std::string where = "hops[" + std::to_string(i) + "]";
            const json& h = (*it)[i];
            if (!h.is_object()) bad(where, "expected an object");
            const std::uint64_t m = get_unsigned(h, "message", where);
            if (m > 0xffffffffu) bad(where, "message id out of range");
            r.hops.push_back({static_cast<MessageId>(m), get_string(h, "from", where), get_string(h, "to", where),
                              get_unsigned(h, "bytes", where), get_seconds(h, "start", where), get_seconds(h, "end", where)});
        }
    }
    if (const auto it = j.find("candidates"); it != j.end()) {
        if (!it->is_array()) bad("candidates", "expected a list");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const std::string where = "candidates[" + std::to_string(i) + "]";
            r.candidates.emplace_back(get_string((*it)[i], "algorithm", where), get_seconds((*it)[i], "predicted", where));
        }
    }
    // "ratio" and "ok" are derived; they must have the right type when present.
    if (const auto it = j.find("ratio"); it != j.end() && !it->is_number()) bad("ratio", "expected a number");
    if (const auto it = j.find("ok"); it != j.end() && !it->is_boolean()) bad("ok", "expected true or false");

    const json& skipped = field(j, "skipped", "");
    if (!skipped.is_array()) bad("skipped", "expected a list");
    for (std::size_t i = 0; i < skipped.size(); ++i) {
        if (!skipped[i].is_string()) bad("skipped[" + std::to_string(i) + "]", "expected a string");
        r.skipped.push_back(skipped[i].get<std::string>());
    }

    if (const auto it = j.find("failed_members"); it != j.end()) {
        if (!it->is_array()) bad("failed_members", "expected a list");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const std::string where = "failed_members[" + std::to_string(i) + "]";
            if (!(*it)[i].is_object()) bad(where, "expected an object");
            r.failed_members.push_back({get_string((*it)[i], "member", where), get_string((*it)[i], "reason", where)});
        }
    }
    if (j.contains("attempts")) r.attempts = static_cast<int>(get_unsigned(j, "attempts", "", 1000));
    if (j.contains("beside")) r.beside = static_cast<std::size_t>(get_unsigned(j, "beside", "", 1u << 20));
    if (j.contains("predicted_at_plan")) {
        r.predicted_at_plan = get_seconds(j, "predicted_at_plan", "");
        r.beside_at_plan = static_cast<std::size_t>(get_unsigned(j, "beside_at_plan", "", 1u << 20));
    }

    const json& outcomes = field(j, "outcomes", "");
    if (!outcomes.is_array()) bad("outcomes", "expected a list");
    r.outcomes.reserve(outcomes.size());
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const std::string where = "outcomes[" + std::to_string(i) + "]";
        const json& o = outcomes[i];
        if (!o.is_object()) bad(where, "expected an object");
        Outcome out;
        out.message = static_cast<MessageId>(
            get_unsigned(o, "message", where, std::numeric_limits<MessageId>::max()));
        out.source = get_string(o, "source", where);
        out.dest = get_string(o, "dest", where);
        out.predicted = get_seconds(o, "predicted", where);
        out.achieved = get_seconds(o, "achieved", where);
        out.ok = get_bool(o, "ok", where);
        out.error = get_string(o, "error", where);
        if (o.contains("attempt")) out.attempt = static_cast<int>(get_unsigned(o, "attempt", where, 1000));
        r.outcomes.push_back(std::move(out));
    }
    return r;
}

namespace {

std::string mbit_text(double bytes_per_s) {
    char b[48];
    std::snprintf(b, sizeof b, "%.1f Mbit/s", bytes_per_s * 8 / 1e6);
    return b;
}

}  // namespace

void print_report(std::ostream& out, const JobReport& r) {
    out << "job " << r.job << ": " << printable(r.algorithm) << ", " << printable(r.model) << " model, "
        << r.bytes << " bytes, " << r.outcomes.size() << (r.outcomes.size() == 1 ? " delivery" : " deliveries")
        << '\n';

    struct Row {
        std::string message, route, predicted, achieved, ratio;
        bool ok;
        std::string error;
        int attempt = 1;
    };
    std::vector<Row> rows;
    std::size_t w_route = 14, w_pred = 9, w_ach = 8;
    for (const Outcome& o : r.outcomes) {
        Row row{std::to_string(o.message), printable(o.source, 40) + " -> " + printable(o.dest, 40),
                format_seconds(o.predicted), "", "", o.ok, "", o.attempt};
        if (o.ok) {
            row.achieved = format_seconds(o.achieved);
            row.ratio = ratio_text(o.predicted > 0 ? o.achieved / o.predicted : 0);
        } else {
            row.error = o.error.empty() ? "no reason given" : printable(o.error);
        }
        w_route = std::max(w_route, row.route.size());
        w_pred = std::max(w_pred, row.predicted.size());
        w_ach = std::max(w_ach, row.achieved.size());
        rows.push_back(std::move(row));
    }
    if (!rows.empty()) {
        out << "  " << pad("msg", 5, true) << "  " << pad("source -> dest", w_route)
            << "  " << pad("predicted", w_pred, true) << "  " << pad("achieved", w_ach, true) << "  "
            << pad("ach/pred", 8, true) << '\n';
        for (const Row& row : rows) {
            out << "  " << pad(row.message, 5, true) << "  " << pad(row.route, w_route) << "  "
                << pad(row.predicted, w_pred, true) << "  ";
            if (row.ok) {
                out << pad(row.achieved, w_ach, true) << "  " << pad(row.ratio, 8, true);
                if (row.attempt > 1) out << "  re-served (try " << row.attempt << ")";
            } else {
                out << "FAILED: " << row.error;
            }
            out << '\n';
        }
    }

    const std::size_t failed = r.failures();
    out << "achieved completion  " << format_seconds(r.achieved) << '\n';
    out << "predicted            " << format_seconds(r.predicted);
    const auto jobs = [](std::size_t n) { return std::to_string(n) + " running job" + (n == 1 ? "" : "s"); };
    if (r.predicted_at_plan > 0) {
        out << "  (at its start, beside " << jobs(r.beside) << "; planned beside " << jobs(r.beside_at_plan) << ": "
            << format_seconds(r.predicted_at_plan) << ")";
    } else if (r.beside > 0) {
        out << "  (planned beside " << jobs(r.beside) << ")";
    }
    out << '\n';
    if (r.predicted_one_per_link > r.predicted * 1.005) {
        out << "  one msg per link   " << format_seconds(r.predicted_one_per_link)
            << "  (the plan sends several messages over one link at once)\n";
    }
    out << "lower bound          " << format_seconds(r.lower_bound) << '\n';
    if (r.throughput_bound > 0 && r.bytes > 0) {
        out << "  steady state       " << format_seconds(static_cast<double>(r.bytes) / r.throughput_bound)
            << "  (bytes / the best pipelined throughput, " << mbit_text(r.throughput_bound) << ")\n";
    }
    if (r.relay == "cut-through") out << "relays               cut through, pieces of " << r.piece << " bytes\n";
    if (!r.hops.empty()) {
        const auto slow = std::min_element(r.hops.begin(), r.hops.end(),
                                           [](const Hop& a, const Hop& b) { return a.rate() < b.rate(); });
        out << "slowest hop          " << printable(slow->from, 40) << " -> " << printable(slow->to, 40) << "  "
            << mbit_text(slow->rate()) << " (" << format_seconds(slow->start) << " to " << format_seconds(slow->end)
            << ")\n";
    }
    if (!r.candidates.empty()) {
        // The runners-up, fastest first: why auto chose what it did.
        auto c = r.candidates;
        std::stable_sort(c.begin(), c.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        out << "auto weighed         ";
        for (std::size_t i = 0; i < c.size() && i < 4; ++i) {
            out << (i ? ", " : "") << printable(c[i].first, 30) << " " << format_seconds(c[i].second);
        }
        if (c.size() > 4) out << " (and " << c.size() - 4 << " more)";
        out << '\n';
    }
    out << "achieved/predicted   " << ratio_text(r.ratio()) << '\n';
    out << "skipped members      ";
    if (r.skipped.empty()) out << "none";
    for (std::size_t i = 0; i < r.skipped.size(); ++i) out << (i ? ", " : "") << printable(r.skipped[i], 40);
    out << '\n';
    for (const MemberFailure& f : r.failed_members) {
        out << "member failed        " << printable(f.member, 40) << ": " << printable(f.reason) << '\n';
    }
    if (r.attempts > 1) {
        out << "re-served            " << r.attempts - 1 << (r.attempts == 2 ? " time" : " times")
            << " (what failed members should have fed came from the source again)\n";
    }
    if (failed > 0) {
        out << "FAILED: " << failed << " of " << r.outcomes.size()
            << (r.outcomes.size() == 1 ? " delivery" : " deliveries") << '\n';
    }
}

void print_reports_side_by_side(std::ostream& out, const std::vector<JobReport>& reports) {
    if (reports.empty()) {
        out << "no reports\n";
        return;
    }
    // Destinations in order of first appearance over all reports.
    std::vector<std::string> dests;
    std::map<std::string, std::size_t> index;
    for (const JobReport& r : reports) {
        for (const Outcome& o : r.outcomes) {
            if (index.emplace(o.dest, dests.size()).second) dests.push_back(o.dest);
        }
    }
    // cells[row][column]; a destination's time is its latest delivery, FAILED if any failed.
    const std::size_t n = reports.size();
    std::vector<std::vector<std::string>> cells(dests.size() + 4, std::vector<std::string>(n, "-"));
    for (std::size_t c = 0; c < n; ++c) {
        const JobReport& r = reports[c];
        std::vector<double> latest(dests.size(), -std::numeric_limits<double>::infinity());
        std::vector<bool> seen(dests.size(), false), failed(dests.size(), false);
        for (const Outcome& o : r.outcomes) {
            const std::size_t d = index.at(o.dest);
            seen[d] = true;
            if (!o.ok) failed[d] = true;
            else latest[d] = std::max(latest[d], o.achieved);
        }
        for (std::size_t d = 0; d < dests.size(); ++d) {
            if (!seen[d]) continue;
            cells[d][c] = failed[d] ? "FAILED" : format_seconds(latest[d]);
        }
        cells[dests.size()][c] = format_seconds(r.achieved) + (r.ok() ? "" : " (failed)");
        cells[dests.size() + 1][c] = format_seconds(r.predicted);
        cells[dests.size() + 2][c] = format_seconds(r.lower_bound);
        cells[dests.size() + 3][c] = ratio_text(r.ratio());
    }

    std::vector<std::string> labels;
    for (const std::string& d : dests) labels.push_back(printable(d, 40));
    labels.insert(labels.end(), {"achieved", "predicted", "lower bound", "achieved/predicted"});
    std::size_t w_label = 0;
    for (const auto& l : labels) w_label = std::max(w_label, l.size());
    std::vector<std::string> headers;
    std::vector<std::size_t> widths;
    for (std::size_t c = 0; c < n; ++c) {
        headers.push_back(printable(reports[c].algorithm.empty() ? "?" : reports[c].algorithm, 24));
        std::size_t w = headers.back().size();
        for (const auto& row : cells) w = std::max(w, row[c].size());
        widths.push_back(w);
    }

    out << pad("", w_label);
    for (std::size_t c = 0; c < n; ++c) out << "  " << pad(headers[c], widths[c], true);
    out << '\n';
    for (std::size_t row = 0; row < cells.size(); ++row) {
        if (row == dests.size()) {
            std::size_t total = w_label;
            for (std::size_t w : widths) total += 2 + w;
            out << std::string(total, '-') << '\n';
        }
        out << pad(labels[row], w_label);
        for (std::size_t c = 0; c < n; ++c) out << "  " << pad(cells[row][c], widths[c], true);
        out << '\n';
    }
}

}  // namespace hetcast
