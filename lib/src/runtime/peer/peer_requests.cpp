// Requests that come from other members, answered; and what this member asks of many
// (flows, who plans beside it) through Calls (peer_asking.hpp).
#include "peer_requests.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "hetcast/error.hpp"
#include "../job/job_state.hpp"
#include "../wire/frames.hpp"
#include "peer_try.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameType;

void Requests::set_handler(Handler handler) {
    std::lock_guard lock(mu_);
    handler_ = std::move(handler);
}

void Requests::on_request(const ConnectionPtr& c, const Frame& f) {
    // Held by the request's work until it ends: what requests_per_peer counts.
    const auto held = admission_.take_request(c);
    json req = json::parse(net::as_text(f.payload), nullptr, false);
    Responder respond = [c, seq = f.header.message, held](const json& j) {
        // An answer may quote what a peer sent, cut anywhere: bytes that are not UTF-8
        // become U+FFFD rather than an exception on a worker thread.
        c->send(make_frame(FrameType::response, 0, seq, j.dump(-1, ' ', false, json::error_handler_t::replace)));
    };
    if (!held) {
        const std::string why = "busy: '" + c->peer() + "' has " + std::to_string(core_.cfg.requests_per_peer) +
                                " requests waiting or running on '" + core_.cfg.name + "', the most one peer may have";
        core_.log(LogLevel::warn, "refused a request from '" + c->peer() + "': " + why);
        respond({{"ok", false}, {"error", why}});
        return;
    }
    if (req.is_discarded() || !req.is_object()) {
        respond({{"error", "a request must be a JSON object"}});
        return;
    }
    if (req.value("cmd", "") == "flows") {
        core_.board.note(req, c->peer(), now_s());
        respond(flows_(c->peer()));
        return;
    }
    if (req.value("cmd", "") == "hellos") {
        // Waits for the subtree's answers: never on the I/O thread, nor in the hello pool.
        const bool queued = core_.spawn(core_.quick, [this, req, respond, from = c->identity()] {
            try {
                respond(answer_hellos(from, req));
            } catch (const std::exception& e) {
                respond({{"ok", false}, {"error", e.what()}});
            }
        });
        if (!queued) respond({{"ok", false}, {"error", "busy: '" + core_.cfg.name + "' has too many requests waiting"}});
        return;
    }
    if (req.value("cmd", "") == "describe") {
        // Hashing a large origin takes seconds: never on the I/O thread.
        const bool queued =
            core_.spawn(core_.slow, [this, req, respond, who = c->peer()] { respond(origins_.describe(req, who)); });
        if (!queued) respond({{"ok", false}, {"error", "busy: '" + core_.cfg.name + "' has too many requests waiting"}});
        return;
    }
    Handler handler;
    {
        std::lock_guard lock(mu_);
        handler = handler_;
    }
    if (!handler || core_.stopping) {
        respond({{"error", "this peer takes no requests"}});
        return;
    }
    // Quick requests answer from what the peer holds; the rest may run for minutes.
    static const std::set<std::string> quick_cmds{"status", "map", "ping", "jobs", "set_map", "set_members"};
    const std::string cmd = req.value("cmd", "");
    auto& pool = cmd == "hello" ? core_.live : quick_cmds.count(cmd) ? core_.quick : core_.slow;
    const bool queued = core_.spawn(pool, [this, handler, from = c->identity(), req, respond] {
        try {
            handler(from, req, respond);
        } catch (const std::exception& e) {
            respond({{"error", e.what()}});
            core_.log(LogLevel::warn, std::string("request failed: ") + e.what());
        }
    });
    if (!queued) respond({{"ok", false}, {"error", "busy: '" + core_.cfg.name + "' has too many requests waiting"}});
}





std::vector<json> Requests::ask_flows(const std::vector<std::string>& members, const json& request,
                                      std::map<std::string, json>* by_member) {
    std::vector<std::string> others;
    std::vector<json> out;
    for (const std::string& p : members) {
        if (p == core_.cfg.name) {
            out.push_back(flows_(core_.cfg.name));
            if (by_member) (*by_member)[p] = out.back();
        } else {
            others.push_back(p);
        }
    }
    if (others.empty()) return out;
    // Not worth a stall: a member slow to answer counts as running nothing.
    const auto patience = std::min<std::chrono::milliseconds>(core_.cfg.connect_timeout, std::chrono::seconds(1));
    const auto good = [](const json& r) { return r.is_object() && r.value("ok", false) && r.contains("flows") && r["flows"].is_array(); };
    const PeerAnswers a = calls_.call_all(others, request, patience);
    for (std::size_t i = 0; i < a.responses.size() && i < others.size(); ++i) {
        const json& r = a.responses[i];
        if (good(r)) out.push_back(r);
        if (by_member) (*by_member)[others[i]] = good(r) ? r : json::object();
    }
    if (!by_member) return out;
    // Pushes announced by a member not asked here are listed by key alone: their flows are
    // its coordinator's to tell, asked once whoever listed them.
    std::set<std::string> coordinators;
    for (const auto& [member, r] : *by_member) {
        for (const json& f : r.value("flows", json::array())) {
            if (!f.is_object() || f.contains("from") || !f.contains("coordinator") || !f["coordinator"].is_string()) continue;
            const auto c = f["coordinator"].get<std::string>();
            if (!by_member->count(c) && connections_.address(c, nullptr)) coordinators.insert(c);
        }
    }
    if (coordinators.empty()) return out;
    const std::vector<std::string> asked(coordinators.begin(), coordinators.end());
    const PeerAnswers more = calls_.call_all(asked, {{"cmd", "flows"}}, patience);
    for (std::size_t i = 0; i < more.responses.size() && i < asked.size(); ++i) {
        const json& r = more.responses[i];
        if (!good(r)) continue;
        json own = json::array();  // its announcements only: it takes no part in the job asking
        for (const json& f : r["flows"]) {
            if (f.is_object() && f.value("coordinator", "") == asked[i]) own.push_back(f);
        }
        (*by_member)[asked[i]] = {{"ok", true}, {"flows", std::move(own)}};
    }
    return out;
}

PeerBeside Requests::beside(const Network& net, const std::vector<std::string>& participants, const Schedule* plan,
                              std::uint64_t rate, const std::string& own) {
    json request{{"cmd", "flows"}};
    std::string planning;
    if (plan) {
        // Announced before it is planned beside the others: a push asking after this one
        // sees it, and none waits for another.
        const auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now().time_since_epoch());
        planning = core_.board.key(core_.cfg.name, static_cast<std::uint64_t>(wall.count()));
        // The key alone: its flows stay here, asked of this member by whoever needs them
        // (sent to every participant they made O(members²) bytes per push).
        request["planning"] = planning;
        core_.board.planned(planning, planned_flows(net, *plan, rate), now_s());
    }
    std::map<std::string, json> answers;
    (void)ask_flows(participants, request, &answers);
    PeerBeside out = beside_of(net, std::move(answers), own, planning);
    out.planning = planning;
    return out;
}

}  // namespace hetcast::detail
