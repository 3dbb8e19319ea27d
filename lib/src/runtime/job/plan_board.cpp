#include "plan_board.hpp"

#include <cstdio>
#include <set>

namespace hetcast::detail {

using json = nlohmann::json;

std::vector<PlannedFlow> planned_flows(const Network& net, const Schedule& s, std::uint64_t rate) {
    std::vector<PlannedFlow> out;
    for (NodeId n = 0; n < s.tasks.size() && n < net.size(); ++n) {
        for (const Task& t : s.tasks[n]) {
            if (t.op != Op::recv || t.message >= s.messages.size() || t.peer >= net.size()) continue;
            out.push_back({net.name(t.peer), net.name(n), static_cast<std::uint64_t>(s.messages[t.message].size), rate});
        }
    }
    return out;
}

std::string PlanBoard::begin(const std::string& self, std::uint64_t wall_ms, double now) {
    std::lock_guard lock(mu_);
    // Fixed width, so that keys compare as their times do.
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "%015llu", static_cast<unsigned long long>(wall_ms));
    std::string key = std::string(stamp) + "/" + self + "/" + std::to_string(next_++);
    own_[key] = Own{true, now, {}};
    return key;
}

void PlanBoard::planned(const std::string& key, std::vector<PlannedFlow> flows, double now) {
    std::lock_guard lock(mu_);
    own_[key] = Own{false, now, std::move(flows)};
}

void PlanBoard::end(const std::string& key) {
    std::lock_guard lock(mu_);
    own_.erase(key);
}

void PlanBoard::note(const json& request, const std::string& asker, double now) {
    const auto it = request.find("planning");
    if (it == request.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) return;
    std::lock_guard lock(mu_);
    seen_[it->get<std::string>()] = Seen{asker, now + intent_life};
}

void PlanBoard::answer(json& out, double now) {
    std::lock_guard lock(mu_);
    json planning = json::array(), seen = json::array();
    for (auto it = own_.begin(); it != own_.end();) {
        const Own& o = it->second;
        if (now - o.since > (o.planning ? intent_life : planned_life)) {
            it = own_.erase(it);
            continue;
        }
        if (o.planning) planning.push_back(it->first);
        for (const PlannedFlow& f : o.flows) {
            if (f.bytes == 0) continue;
            out["flows"].push_back({{"job", it->first}, {"from", f.from}, {"to", f.to}, {"left", f.bytes}, {"rate", f.rate}});
        }
        ++it;
    }
    for (auto it = seen_.begin(); it != seen_.end();) {
        if (it->second.until < now) {
            it = seen_.erase(it);
            continue;
        }
        seen.push_back({{"key", it->first}, {"coordinator", it->second.coordinator}});
        ++it;
    }
    out["planning"] = std::move(planning);
    out["seen"] = std::move(seen);
}

std::vector<std::string> earlier_planning(const std::string& key, const std::map<std::string, json>& answers,
                                          std::vector<std::string>& ask_also) {
    std::map<std::string, std::string> earlier;  // key -> coordinator
    for (const auto& [member, a] : answers) {
        const auto seen = a.find("seen");
        if (seen == a.end() || !seen->is_array()) continue;
        for (const json& s : *seen) {
            if (!s.is_object() || !s.contains("key") || !s["key"].is_string() || !s.contains("coordinator") ||
                !s["coordinator"].is_string()) {
                continue;
            }
            const auto k = s["key"].get<std::string>();
            if (k < key) earlier[k] = s["coordinator"].get<std::string>();
        }
    }
    std::vector<std::string> out;
    std::set<std::string> also;
    for (const auto& [k, coordinator] : earlier) {
        const auto a = answers.find(coordinator);
        if (a == answers.end()) {
            if (also.insert(coordinator).second) ask_also.push_back(coordinator);
            out.push_back(k);
            continue;
        }
        const auto planning = a->second.find("planning");
        if (planning == a->second.end() || !planning->is_array()) continue;  // an older member: nothing to wait for
        for (const json& p : *planning) {
            if (p.is_string() && p.get<std::string>() == k) out.push_back(k);
        }
    }
    return out;
}

}  // namespace hetcast::detail
