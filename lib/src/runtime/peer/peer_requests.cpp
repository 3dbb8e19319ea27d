// Requests between members, both ways: answering those that come, and asking other
// members (calls, pings) with the answers awaited.
#include "peer_requests.hpp"

#include <algorithm>
#include <cstring>
#include <future>
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
using net::FrameHeader;
using net::FrameType;

namespace {

json await_answer(std::future<json>& answer, std::chrono::milliseconds timeout, const std::string& who,
                  const std::function<void()>& forget) {
    if (answer.wait_for(timeout) != std::future_status::ready) {
        forget();
        throw Error(who + " did not answer in " + std::to_string(timeout.count()) + " ms");
    }
    try {
        return answer.get();
    } catch (const std::future_error&) {
        throw Error("the peer stopped before " + who + " answered");
    }
}

}  // namespace

void Requests::set_handler(Handler handler) {
    std::lock_guard lock(mu_);
    handler_ = std::move(handler);
}

void Requests::on_ping(const ConnectionPtr& c, const Frame& f) {
    Frame pong{FrameHeader{FrameType::pong, 0, 0, f.header.message, 0}, f.payload};
    if (pong.payload.size() < sizeof(double)) pong.payload.resize(sizeof(double));
    const double t = now_s();
    std::memcpy(pong.payload.data(), &t, sizeof t);
    c->send(std::move(pong));
}

void Requests::on_pong(const Frame& f) {
    if (f.payload.size() < sizeof(double)) throw InputError("a pong without a time stamp");
    double t = 0;
    std::memcpy(&t, f.payload.data(), sizeof t);
    pings_.answer(f.header.message, {t, now_s()});
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
        respond(flows_());
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

void Requests::on_response(const Frame& f) {
    json j = json::parse(net::as_text(f.payload));
    calls_.answer(f.header.message, std::move(j));
}

json Requests::call_on(const ConnectionPtr& c, const std::string& who, const json& request,
                   std::chrono::milliseconds timeout) {
    auto [seq, answer] = calls_.open();
    c->send(make_frame(FrameType::request, 0, seq, request.dump(-1, ' ', false, json::error_handler_t::replace)));
    return await_answer(answer, timeout, who, [this, seq = seq] { calls_.forget(seq); });
}

PeerAnswers Requests::call_all(const std::vector<std::string>& members, const json& request,
                             std::chrono::milliseconds timeout) {
    PeerAnswers out;
    out.responses.resize(members.size());
    out.errors.resize(members.size());
    std::vector<ConnectionPtr> conns(members.size());
    {
        // Connecting can take the connect timeout for a host that is off: in parallel.
        std::vector<std::future<void>> dials;
        for (std::size_t i = 0; i < members.size(); ++i) {
            conns[i] = connections_.directory().connection(members[i]);
            if (conns[i]) continue;
            dials.push_back(std::async(std::launch::async, [&, i] {
                try {
                    conns[i] = connections_.conn_to(members[i]);
                } catch (const std::exception& e) {
                    out.errors[i] = e.what();
                }
            }));
        }
    }
    const std::string text = request.dump(-1, ' ', false, json::error_handler_t::replace);
    std::vector<std::pair<std::uint32_t, std::future<json>>> asked(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) {
        if (!conns[i]) continue;
        asked[i] = calls_.open();
        conns[i]->send(make_frame(FrameType::request, 0, asked[i].first, text));
    }
    const auto deadline = Clock::now() + timeout;
    for (std::size_t i = 0; i < members.size(); ++i) {
        auto& [seq, answer] = asked[i];
        if (!answer.valid()) continue;
        if (answer.wait_until(deadline) != std::future_status::ready) {
            calls_.forget(seq);
            out.errors[i] = "'" + members[i] + "' did not answer in " + std::to_string(timeout.count()) + " ms";
            continue;
        }
        try {
            out.responses[i] = answer.get();
        } catch (const std::future_error&) {
            out.errors[i] = "the peer stopped before '" + members[i] + "' answered";
        }
    }
    return out;
}

std::vector<PingSample> Requests::ping(const std::string& member, const std::vector<std::size_t>& sizes, int reps) {
    ConnectionPtr c = connections_.conn_to(member);
    std::vector<PingSample> out;
    for (std::size_t size : sizes) {
        for (int r = 0; r < reps; ++r) {
            auto [seq, answer] = pings_.open();
            const double sent = now_s();
            c->send(Frame{FrameHeader{FrameType::ping, 0, 0, seq, 0},
                          std::vector<std::byte>(std::max(size, sizeof(double)))});
            if (answer.wait_for(core_.cfg.connect_timeout) != std::future_status::ready) {
                pings_.forget(seq);
                throw Error("no answer from '" + member + "' to a ping of " + std::to_string(size) + " bytes");
            }
            std::pair<double, double> got;
            try {
                got = answer.get();
            } catch (const std::future_error&) {  // stop() dropped the promise
                throw Error("the peer stopped before '" + member + "' answered a ping");
            }
            const auto [peer_time, received] = got;
            out.push_back(PingSample{static_cast<double>(size), sent, peer_time, received});
        }
    }
    return out;
}

std::vector<json> Requests::ask_flows(const std::vector<std::string>& members, const json& request,
                                      std::map<std::string, json>* by_member) {
    std::vector<std::string> others;
    std::vector<json> out;
    for (const std::string& p : members) {
        if (p == core_.cfg.name) {
            out.push_back(flows_());
            if (by_member) (*by_member)[p] = out.back();
        } else {
            others.push_back(p);
        }
    }
    if (others.empty()) return out;
    // Not worth a stall: a member slow to answer counts as running nothing.
    const auto patience = std::min<std::chrono::milliseconds>(core_.cfg.connect_timeout, std::chrono::seconds(1));
    const PeerAnswers a = call_all(others, request, patience);
    for (std::size_t i = 0; i < a.responses.size() && i < others.size(); ++i) {
        const json& r = a.responses[i];
        const bool good = r.is_object() && r.value("ok", false) && r.contains("flows") && r["flows"].is_array();
        if (good) out.push_back(r);
        if (by_member) (*by_member)[others[i]] = good ? r : json::object();
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
        std::vector<PlannedFlow> flows = planned_flows(net, *plan, rate);
        request["planning"] = planning;
        request["planned"] = to_json(flows);
        core_.board.planned(planning, std::move(flows), now_s());
    }
    std::map<std::string, json> answers;
    (void)ask_flows(participants, request, &answers);
    PeerBeside out = beside_of(net, std::move(answers), own, planning);
    out.planning = planning;
    return out;
}

}  // namespace hetcast::detail
