// What the coordinator of one try sends its participants (peer_try_control.hpp).
#include "peer_try_control.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "peer_relay_frames.hpp"
#include "../wire/frames.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::ConnectionPtr;
using net::FrameType;

namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

bool is_tree(const PeerCore& core, const std::vector<std::string>& others) {
    return core.cfg.control_fanout > 0 && others.size() > core.cfg.control_fanout;
}

std::map<std::string, std::vector<std::string>> routes_of(const PeerCore& core, const std::vector<std::string>& others) {
    std::map<std::string, std::vector<std::string>> routes;
    if (is_tree(core, others)) {
        const auto r = control_routes(others, core.cfg.control_fanout);
        for (std::size_t i = 0; i < others.size(); ++i) routes[others[i]] = r[i];
    }
    return routes;
}

}  // namespace

PlanTexts::PlanTexts(const JobPlan& common) : common_(common) {
    for (const JobMessage& m : common.messages) sources_.insert(m.source);
    JobPlan p = common;
    p.tasks.clear();
    p.participants.clear();
    json j = to_json(p);
    spliced_ = !j.empty() && std::prev(j.end()).key() == "tasks";
    j.erase("tasks");
    std::string text = dump(j);
    text.pop_back();  // its '}'
    // The order (an object in the plan) may hold the same text: then every plan is written whole.
    static const std::string empty = "\"participants\":[]";
    const auto at = text.find(empty);
    spliced_ = spliced_ && at != std::string::npos && text.find(empty, at + 1) == std::string::npos;
    if (spliced_) {
        head_ = text.substr(0, at);
        tail_ = text.substr(at + empty.size());
    }
}

std::vector<Member> PlanTexts::needed_by(const std::string& member, const std::vector<JobTask>& tasks) const {
    std::vector<Member> out;
    for (const Member& m : common_.participants) {
        const bool needed = m.name == member || m.name == common_.coordinator || sources_.count(m.name) ||
                            std::any_of(tasks.begin(), tasks.end(), [&](const JobTask& t) { return t.peer == m.name; });
        if (needed) out.push_back(m);
    }
    return out;
}

std::string PlanTexts::of(const std::string& member, std::vector<JobTask> tasks) const {
    JobPlan p = spliced_ ? JobPlan{} : common_;
    p.participants = needed_by(member, tasks);
    p.tasks = std::move(tasks);
    const json j = to_json(p);
    if (!spliced_) return dump(j);
    return head_ + "\"participants\":" + dump(j.at("participants")) + tail_ + ",\"tasks\":" +
           dump(j.at("tasks")) + "}";
}

TryControl::TryControl(PeerCore& core, Connections& connections, const JobPlan& common, Coord& k,
                       const std::vector<std::string>& others)
    : core_(core), connections_(connections), common_(common), k_(k), tree_(is_tree(core, others)),
      routes_(routes_of(core, others)), texts_(common) {}

void TryControl::send_plan(const Network& net, const Schedule& s, NodeId n, const std::vector<Pace>& paces) {
    const std::string& name = net.name(n);
    const auto route = routes_.find(name);
    const std::string& first = route == routes_.end() ? name : route->second.front();
    try {
        ConnectionPtr c;
        if (!unreachable_.count(first)) {
            try {
                c = connections_.conn_to(first, &common_.participants);
            } catch (const std::exception& e) {
                unreachable_[first] = e.what();
            }
        }
        if (!c) {
            std::lock_guard lock(k_.mu);
            k_.nodes[name].finished = true;
            k_.nodes[name].cut_off = first != name;
            k_.nodes[name].error = first == name ? "'" + name + "' cannot be reached: " + unreachable_[first]
                                                 : "its relay '" + first + "' cannot be reached: " + unreachable_[first];
            return;
        }
        {
            std::lock_guard lock(k_.mu);
            if (first == name) k_.nodes[name].conn = c;
            k_.nodes[name].hop = first == name ? std::string() : first;
            k_.nodes[name].sent = now_s();
        }
        const std::string text = texts_.of(name, tasks_of(s, net.names(), n, paces));
        if (first == name) {
            c->send(make_frame(FrameType::job_plan, common_.job, 0, text));
            remote_.push_back(name);
        } else {
            c->send(relay_frame(core_.cfg.identity, core_.cfg.name, common_.job, route->second, text));
        }
    } catch (const std::exception& e) {
        std::lock_guard lock(k_.mu);
        k_.nodes[name].finished = true;
        k_.nodes[name].error = "'" + name + "' cannot be reached: " + e.what();
    }
}

void TryControl::start(const std::shared_ptr<Job>& own) {
    // A receiver that kept pieces from an earlier try gets only the rest from its feeder.
    std::lock_guard lock(k_.mu);
    std::map<std::string, JobStart> starts;
    for (const auto& [key, bytes] : k_.resume) {
        const auto f = k_.feeder.find(key);
        if (f != k_.feeder.end() && bytes > 0) starts[f->second].resume.push_back({key.first, key.second, bytes});
    }
    // Down a tree every member gets every resume (each applies only its own sends').
    JobStart every;
    if (tree_) {
        for (const auto& [name, st] : starts) every.resume.insert(every.resume.end(), st.resume.begin(), st.resume.end());
    }
    for (const auto& name : remote_) {
        const auto it = starts.find(name);
        const JobStart* st = tree_ ? &every : it == starts.end() ? nullptr : &it->second;
        k_.nodes[name].conn->send(make_frame(FrameType::job_start, common_.job, 0,
                                             !st || st->resume.empty() ? std::string() : to_json(*st).dump()));
    }
    if (own) {
        if (const auto it = starts.find(core_.cfg.name); it != starts.end()) {
            std::lock_guard jl(own->mu);
            for (const auto& r : it->second.resume) own->resume[{r.message, r.to}] = r.offset;
        }
    }
}

void TryControl::cancel(const std::string& why) {
    for (const auto& name : remote_) {
        std::lock_guard lock(k_.mu);
        if (auto& c = k_.nodes[name].conn) c->send(make_frame(FrameType::job_cancel, common_.job, net::all_messages, why));
    }
}

}  // namespace hetcast::detail
