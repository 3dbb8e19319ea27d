#include "plan_board.hpp"

#include <cstdio>

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

json to_json(const std::vector<PlannedFlow>& flows) {
    json out = json::array();
    for (const PlannedFlow& f : flows) out.push_back({{"from", f.from}, {"to", f.to}, {"left", f.bytes}, {"rate", f.rate}});
    return out;
}

std::vector<PlannedFlow> planned_flows_from_json(const json& j) {
    std::vector<PlannedFlow> out;
    if (!j.is_array()) return out;
    for (const json& f : j) {
        if (out.size() >= max_planned_flows) break;
        if (!f.is_object()) continue;
        const auto from = f.find("from"), to = f.find("to"), left = f.find("left"), rate = f.find("rate");
        // JSON text reads a count as unsigned; one built in code may hold it signed.
        const auto count = [](const json& v) { return v.is_number_integer() && v.get<std::int64_t>() >= 0; };
        if (from == f.end() || !from->is_string() || to == f.end() || !to->is_string() || left == f.end() ||
            !count(*left) || (rate != f.end() && !count(*rate))) {
            continue;
        }
        out.push_back({from->get<std::string>(), to->get<std::string>(), left->get<std::uint64_t>(),
                       rate == f.end() ? 0 : rate->get<std::uint64_t>()});
    }
    return out;
}

std::string planning_key(const std::string& self, std::uint64_t wall_ms, std::uint64_t n) {
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "%015llu", static_cast<unsigned long long>(wall_ms));
    return std::string(stamp) + "/" + self + "/" + std::to_string(n);
}

std::string PlanBoard::key(const std::string& self, std::uint64_t wall_ms) {
    std::lock_guard lock(mu_);
    return planning_key(self, wall_ms, next_++);
}

void PlanBoard::planned(const std::string& key, std::vector<PlannedFlow> flows, double now) {
    std::lock_guard lock(mu_);
    own_[key] = Own{now, std::move(flows)};
}

void PlanBoard::end(const std::string& key) {
    std::lock_guard lock(mu_);
    own_.erase(key);
}

void PlanBoard::note(const json& request, const std::string& asker, double now) {
    const auto key = request.find("planning");
    if (key == request.end() || !key->is_string() || key->get_ref<const std::string&>().empty()) return;
    std::vector<PlannedFlow> flows = planned_flows_from_json(request.value("planned", json::array()));
    std::lock_guard lock(mu_);
    seen_[key->get<std::string>()] = Seen{asker, now, std::move(flows)};
}

void PlanBoard::answer(json& out, const std::string& self, double now, const std::map<std::string, double>& set_up,
                       const std::string& asker) {
    std::lock_guard lock(mu_);
    json& list = out["flows"];
    const auto add = [&](const std::string& key, const std::string& coordinator, const std::vector<PlannedFlow>& flows) {
        for (const PlannedFlow& f : flows) {
            if (f.bytes == 0) continue;
            list.push_back({{"job", key},       {"coordinator", coordinator}, {"from", f.from},
                            {"to", f.to},       {"left", f.bytes},            {"rate", f.rate}});
        }
    };
    for (auto it = own_.begin(); it != own_.end();) {
        if (now - it->second.since > planned_life) {
            it = own_.erase(it);
            continue;
        }
        add(it->first, self, it->second.flows);
        ++it;
    }
    for (auto it = seen_.begin(); it != seen_.end();) {
        const Seen& s = it->second;
        const auto up = set_up.find(s.coordinator);
        if (now - s.noted > seen_life || (up != set_up.end() && up->second >= s.noted)) {
            it = seen_.erase(it);
            continue;
        }
        if (s.coordinator != asker) {
            if (s.flows.empty()) {
                list.push_back({{"job", it->first}, {"coordinator", s.coordinator}});  // announced by its key alone
            } else {
                add(it->first, s.coordinator, s.flows);  // an older coordinator sent its flows along
            }
        }
        ++it;
    }
}

}  // namespace hetcast::detail
