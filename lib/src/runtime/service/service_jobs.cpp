// Pushes as others follow them: callers re-attached to one (`hetcast wait`), its end
// (the audit line, the history) and the history of those this daemon coordinated
// (`hetcast jobs --history`).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "hetcast/runtime/history.hpp"
#include "service_push_log.hpp"

namespace hetcast {
using namespace detail;

namespace {

std::uint64_t job_id(const std::string& text, const char* what) {
    std::size_t used = 0;
    std::uint64_t id = 0;
    try {
        id = std::stoull(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (text.empty() || used != text.size() || text.find_first_not_of("0123456789") != std::string::npos) {
        throw InputError(std::string(what) + ": '" + text.substr(0, 40) + "' is not a job id (see 'hetcast jobs')");
    }
    return id;
}

}  // namespace

void PushLog::open(std::uint64_t job) {
    std::lock_guard lock(watch_mu);
    watchers.emplace(job, std::vector<Peer::Responder>{});
}

std::vector<Peer::Responder> PushLog::watching(std::uint64_t job) {
    std::lock_guard lock(watch_mu);
    const auto it = watchers.find(job);
    return it == watchers.end() ? std::vector<Peer::Responder>{} : it->second;
}

void PushLog::end(std::uint64_t job, const json& answer) {
    std::vector<Peer::Responder> left;
    {
        std::lock_guard lock(watch_mu);
        if (const auto it = watchers.find(job); it != watchers.end()) {
            left = std::move(it->second);
            watchers.erase(it);
        }
    }
    for (const auto& w : left) w(answer);
}

void PushLog::finish_push(const JobReport& r, const json& answer, const std::string& who, const std::string& what,
                          const std::string& started) {
    const PushRecord record{who, what, started, utc_now(), answer};
    core_.say(LogLevel::info, audit_line(record, r));
    if (r.job != 0 && history) history->add(history_entry(record, r));
    end(r.job, answer);
}

void PushLog::wait(const json& req, const Peer::Responder& respond, bool from_operator) {
    const std::string text = field<std::string>(req, "job", "");
    const std::uint64_t id = job_id(text, "wait");
    const bool peek = field<bool>(req, "peek", false);
    {
        std::lock_guard lock(watch_mu);
        if (const auto it = watchers.find(id); it != watchers.end()) {
            if (peek) return respond({{"ok", true}, {"member", core_.cfg.name}, {"running", true}});
            it->second.push_back(respond);
            respond({{"progress", {{"file", 0}, {"job", text}}}});
            return;  // finish_push answers
        }
    }
    if (history) {
        if (const auto e = history->find(text)) {
            if (peek) return respond({{"ok", true}, {"member", core_.cfg.name}, {"running", false}});
            json answer = e->value("answer", json::object());
            answer["ended"] = e->value("ended", "");
            answer["member"] = core_.cfg.name;
            return respond(answer);
        }
    }
    const bool all = from_operator && field<bool>(req, "all", false);
    if (all) {
        for (const auto& m : core_.current_members()) {
            if (m.name == core_.cfg.name) continue;
            try {
                const json a = core_.peer->call(m.name, {{"cmd", "wait"}, {"job", text}, {"peek", true}}, core_.cfg.down_after);
                if (field<bool>(a, "ok", false)) {
                    return respond({{"ok", false}, {"coordinator", m.name}, {"error", "job " + text + " is coordinated by '" + m.name + "'"}});
                }
            } catch (const std::exception&) {
            }
        }
    }
    respond({{"ok", false},
             {"unknown", true},
             {"error", "no job " + text + " runs on or is in the history of '" + core_.cfg.name + "'" +
                           (all ? " or of any member that answers" : "")}});
}

json PushLog::history_answer(bool everywhere) {
    json jobs = json::array();
    const auto add = [&jobs](const std::string& member, const json& list) {
        for (json e : list) {
            if (!e.is_object()) continue;
            e.erase("answer");
            e["member"] = member;
            jobs.push_back(std::move(e));
        }
    };
    if (history) add(core_.cfg.name, history->entries());
    json unreachable = json::array();
    if (everywhere) {
        for (const auto& m : core_.current_members()) {
            if (m.name == core_.cfg.name) continue;
            try {
                add(m.name, field<json>(core_.peer->call(m.name, {{"cmd", "history"}}, core_.cfg.down_after), "jobs", json::array()));
            } catch (const std::exception& e) {
                unreachable.push_back({{"member", m.name}, {"error", e.what()}});
            }
        }
    }
    std::stable_sort(jobs.begin(), jobs.end(),
                     [](const json& a, const json& b) { return a.value("ended", "") < b.value("ended", ""); });
    return {{"ok", true}, {"jobs", std::move(jobs)}, {"unreachable", std::move(unreachable)}};
}

}  // namespace hetcast
