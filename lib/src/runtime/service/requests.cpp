// The request table and its dispatcher: who may make each request is checked here, once.
#include "requests.hpp"

#include <algorithm>
#include <ctime>

#include "hetcast/error.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/runtime/order.hpp"
#include "service_impl.hpp"

namespace hetcast::detail {

const char* to_string(Access a) {
    switch (a) {
        case Access::open: return "open";
        case Access::refused: return "refused";
        case Access::order_to_me: return "order_to_me";
        case Access::order_to_caller: return "order_to_caller";
        case Access::map_order: return "map_order";
        case Access::members_order: return "members_order";
        case Access::signed_join: return "signed_join";
    }
    return "?";
}

namespace {

std::int64_t now() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace

Heartbeat::Heartbeat(Peer::Responder respond, std::chrono::milliseconds every,
                     std::function<std::vector<Peer::Responder>()> more) {
    thread_ = std::thread([this, respond = std::move(respond), every, more = std::move(more)] {
        const json beat{{"progress", {{"heartbeat", std::chrono::duration<double>(every).count()}}}};
        std::unique_lock lock(mu_);
        while (true) {
            lock.unlock();
            if (respond) respond(beat);
            if (more) {
                for (const auto& r : more()) r(beat);
            }
            lock.lock();
            if (cv_.wait_for(lock, every, [this] { return done_; })) return;
        }
    });
}

Heartbeat::~Heartbeat() {
    {
        std::lock_guard lock(mu_);
        done_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

bool Requests::membership_ordered(Service::Impl& d, const net::PeerIdentity& from, const json& req, bool list) {
    try {
        const std::vector<Member> current = d.core.current_members();
        std::optional<std::vector<Member>> next;
        if (list) next = members_from_json(req.at("members"));
        (void)check_membership_order(req.contains("order") ? req["order"] : json(), d.core.peer->identity().ca_pem, d.core.peer->revoked(),
                                     from.name, now(), &current, next ? &*next : nullptr);
        return true;
    } catch (const std::exception& e) {
        d.core.say(LogLevel::warn, "refused '" + req.value("cmd", std::string()) + "' from '" + from.name + "': " + e.what());
        return false;
    }
}

bool Requests::admitted(Service::Impl& d, const Requests::Entry& e, Access access, const Call& c, const std::string& cmd) {
    const auto refuse_unordered = [&](const std::string& to) {
        try {
            (void)check_order(c.req, d.core.peer->identity().ca_pem, d.core.peer->revoked(), to, now());
            return false;
        } catch (const InputError& err) {
            d.core.say(LogLevel::warn, "refused '" + cmd + "' from '" + c.from.name + "': " + err.what());
            if (e.refused) e.refused(d);
            c.respond({{"ok", false}, {"error", "'" + cmd + "' needs the operator's signed order: " + err.what()}});
            return true;
        }
    };
    const auto unordered = [&] {
        c.respond({{"ok", false}, {"error", "'" + cmd + "' needs the operator's order (a probe, a leave) or a member's own join"}});
        return false;
    };
    switch (access) {
        case Access::open: return true;
        case Access::refused:
            d.core.say(LogLevel::warn, "refused '" + cmd + "' from '" + c.from.name + "': a member's identity, not the operator's");
            c.respond({{"ok", false},
                       {"error", "'" + cmd + "' needs the operator's identity; '" + c.from.name + "' is a member"}});
            return false;
        // The map goes to every member with a probe's order, which each checks; a push's
        // participants check the order its plan carries, and so does the coordinator,
        // which would otherwise plan a job nobody takes.
        case Access::order_to_me: return !refuse_unordered(d.core.cfg.name);
        // A member passes on the operator's order (a cancel looked for on every member); it
        // was given to that member, and it goes no further from here.
        case Access::order_to_caller: return !refuse_unordered(c.from.name);
        case Access::map_order: return membership_ordered(d, c.from, c.req, false) || unordered();
        case Access::members_order: return membership_ordered(d, c.from, c.req, true) || unordered();
        case Access::signed_join:
            if (!c.from_operator && field<std::string>(c.req, "name", "") != c.from.name) {
                c.respond({{"ok", false}, {"error", "'" + c.from.name + "' may join only under its own name"}});
                return false;
            }
            // Signed by the joiner (or the operator), so that every member it is passed on
            // to can check it.
            try {
                if (c.from_operator) {
                    (void)check_order(c.req, d.core.peer->identity().ca_pem, d.core.peer->revoked(), d.core.cfg.name, now());
                } else {
                    (void)check_join(c.req, d.core.peer->identity().ca_pem, d.core.peer->revoked(), now());
                }
                return true;
            } catch (const InputError& err) {
                d.core.say(LogLevel::warn, "refused '" + cmd + "' from '" + c.from.name + "': " + err.what());
                c.respond({{"ok", false}, {"error", "'" + cmd + "' must be signed by the member that joins: " + std::string(err.what())}});
                return false;
            }
    }
    return false;
}

// Starting pushes and changing the cluster take the operator's identity. A member's lets it
// join under its own name and pass on what an operator started elsewhere (members, map, a
// cancel looked for on every member).
const std::vector<Requests::Entry>& Requests::table() {
    using A = Access;
    using D = Service::Impl;
    static const std::vector<Entry> entries{
        {"hello", A::open, A::open, false, [](D& d, const Call& c) { c.respond(d.core.hello(field<bool>(c.req, "nic", false))); }},
        {"status", A::open, A::open, false,
         [](D& d, const Call& c) { c.respond(d.status(field<bool>(c.req, "hellos", true))); }},
        {"map", A::open, A::open, false, [](D& d, const Call& c) { c.respond(d.core.map_answer()); }},
        {"set_map", A::open, A::map_order, true,
         [](D& d, const Call& c) { c.respond(d.core.set_map(field<std::string>(c.req, "map", ""))); }},
        {"ping", A::open, A::open, false, [](D& d, const Call& c) { c.respond(answer_ping(*d.core.peer, c.req)); }},
        {"probe", A::order_to_me, A::refused, true,
         [](D& d, const Call& c) {
             const Heartbeat beats(c.respond, d.core.cfg.heartbeat);
             c.respond(d.probes.probe(c.req, c.respond));
         }},
        {"goodput", A::open, A::open, false, [](D& d, const Call& c) { c.respond(answer_goodput(*d.core.peer, d.core.cfg.name, c.req)); }},
        {"push", A::order_to_me, A::refused, true,
         [](D& d, const Call& c) {
             json answer;
             try {
                 const Heartbeat beats(c.respond, d.core.cfg.heartbeat);
                 answer = d.pushes.push(c.req, c.respond, c.from.name);
             } catch (const std::exception&) {
                 d.metrics.count_refused();
                 throw;
             }
             d.metrics.count_push(answer);
             c.respond(answer);
         },
         [](D& d) { d.metrics.count_refused(); }},
        {"jobs", A::open, A::open, false,
         [](D& d, const Call& c) { c.respond(d.list_jobs(field<bool>(c.req, "all", false))); }},
        {"history", A::open, A::open, false,
         [](D& d, const Call& c) { c.respond(d.push_log.history_answer(c.from_operator && field<bool>(c.req, "all", false))); }},
        {"wait", A::open, A::open, false, [](D& d, const Call& c) { d.push_log.wait(c.req, c.respond, c.from_operator); }},
        {"cancel", A::open, A::order_to_caller, true,
         [](D& d, const Call& c) { c.respond(d.cancel(c.req, c.from_operator)); }},
        {"join", A::signed_join, A::signed_join, true, [](D& d, const Call& c) { c.respond(d.member_list.join(c.req)); }},
        {"leave", A::open, A::refused, true,
         [](D& d, const Call& c) {
             c.respond(field<bool>(c.req, "operator", false) ? d.member_list.revoke_operator(c.req, c.from.name) : d.member_list.leave(c.req));
         }},
        {"set_members", A::open, A::members_order, true,
         [](D& d, const Call& c) {
             if (c.req.contains("revoked")) d.member_list.add_revocations(revocations_from_json(c.req["revoked"]));
             std::vector<Member> ms = members_from_json(c.req.at("members"));
             const bool names_me =
                 std::any_of(ms.begin(), ms.end(), [&](const Member& m) { return m.name == d.core.cfg.name; });
             d.member_list.set_members(std::move(ms));
             if (names_me) d.member_list.listed_by_member(c.from.name);
             c.respond({{"ok", true}});
         }},
    };
    return entries;
}

const Requests::Entry* Requests::find(std::string_view name) {
    const auto& t = table();
    const auto it = std::find_if(t.begin(), t.end(), [&](const Entry& e) { return e.name == name; });
    return it == t.end() ? nullptr : &*it;
}

void Requests::dispatch(Service::Impl& d, const net::PeerIdentity& from, const json& req, const Peer::Responder& respond) {
    const std::string cmd = field<std::string>(req, "cmd", "");
    const Call call{from, req, respond, from.role == net::Role::operator_};
    d.core.say(LogLevel::debug, "request '" + cmd.substr(0, 32) + "' from '" + from.name + "'");
    try {
        const Entry* e = find(cmd);
        if (!e) return respond({{"ok", false}, {"error", "unknown request '" + cmd.substr(0, 32) + "'"}});
        if (!admitted(d, *e, call.from_operator ? e->from_operator : e->from_member, call, cmd)) return;
        e->run(d, call);
    } catch (const InputError& e) {
        // "input": the caller's request was wrong (the CLI exits 2), not the operation.
        d.core.say(LogLevel::warn, "request '" + cmd + "' from '" + from.name + "' failed: " + e.what());
        respond({{"ok", false}, {"error", e.what()}, {"input", true}});
    } catch (const std::exception& e) {
        d.core.say(LogLevel::warn, "request '" + cmd + "' from '" + from.name + "' failed: " + e.what());
        respond({{"ok", false}, {"error", e.what()}});
    }
}

}  // namespace hetcast::detail
