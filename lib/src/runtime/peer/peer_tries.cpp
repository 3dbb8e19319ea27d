// The tries a coordinator runs, as they run: the events participants report, the watch
// over who still answers, a control connection that closes, cancels, and what the tries
// tell others.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/measure.hpp"
#include "peer_tries.hpp"
#include "../wire/frames.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameHeader;
using net::FrameType;

void Tries::on_event(const ConnectionPtr& c, const Frame& f) {
    const JobEvent e = job_event_from_json(json::parse(net::as_text(f.payload)));
    apply_event(f.header.job, c->peer(), e, &c);
}

void Tries::on_events(const ConnectionPtr& c, const Frame& f) {
    const json j = json::parse(net::as_text(f.payload));
    if (!j.is_object() || !j.contains("events") || !j["events"].is_array()) throw InputError("job_reports without events");
    const std::shared_ptr<Coord> k = coords_.find(f.header.job);
    if (!k) return;
    for (const auto& je : j["events"]) {
        const JobEvent e = job_event_from_json(je);
        const std::string from = je.is_object() ? je.value("member", "") : "";
        std::lock_guard lock(k->mu);
        const auto relay = k->nodes.find(c->peer());
        const auto it = k->nodes.find(from);
        // Only the child a member's plan went through speaks for it.
        if (relay == k->nodes.end() || relay->second.conn != c || it == k->nodes.end() || it->second.hop != c->peer()) {
            throw InputError("'" + c->peer() + "' reports for '" + from + "', which is not below it");
        }
        apply(*k, from, e, true);
        if (e.kind == JobEvent::Kind::failed && je.value("cut_off", false)) it->second.cut_off = true;
    }
}

void Tries::apply_event(std::uint64_t id, const std::string& who, const JobEvent& e, const ConnectionPtr* via) {
    const std::shared_ptr<Coord> k = coords_.find(id);
    if (!k) return;  // a late event of a job that has ended
    std::lock_guard lock(k->mu);
    auto it = k->nodes.find(who);
    if (it == k->nodes.end() || (via && it->second.conn != *via)) return;
    apply(*k, who, e, via != nullptr);
}

void Tries::fail_below(Coord& k, const std::string& relay, const std::string& why) {
    for (auto& [name, n] : k.nodes) {
        if (n.hop != relay || n.finished) continue;
        n.finished = true;
        n.cut_off = true;
        n.error = "its relay '" + relay + "' failed: " + why;
    }
}

void Tries::apply(Coord& k, const std::string& who, const JobEvent& e, bool remote) {
    Coord::Node& n = k.nodes.at(who);
    const double t = now_s();
    if (remote) n.offset_lo = std::max(n.offset_lo, e.clock - t);
    switch (e.kind) {
        case JobEvent::Kind::ready:
            n.ready = true;
            for (const auto& [m, bytes] : e.resume) k.resume[{m, who}] = bytes;
            if (remote) {
                n.offset = exchange_offset(n.sent, e.received, e.clock, t);
                n.offset_hi = std::min(n.offset_hi, e.received - n.sent);
            }
            break;
        case JobEvent::Kind::delivered:
            if (k.delivered.insert_or_assign(std::make_pair(e.message, who), Coord::Delivered{e.clock, t}).second &&
                e.message < k.sizes.size()) {
                k.landed[who] += k.sizes[e.message];
            }
            break;
        case JobEvent::Kind::hop:
            k.hops.push_back({e.message, e.peer, who, e.bytes, e.first, e.clock, t});
            k.have.insert({e.message, who});
            break;
        case JobEvent::Kind::progress:
            k.bytes_in += e.bytes;
            k.got[who] += e.bytes;
            // Data arriving is a sign of life of whoever sends it, however slow its link.
            for (const auto& [key, from] : k.feeder) {
                if (key.second == who) connections_.hear(from);
            }
            break;
        case JobEvent::Kind::done: n.finished = true; break;
        case JobEvent::Kind::failed:
            if (!n.finished || n.error.empty()) n.error = e.error;
            n.finished = true;
            break;
    }
    k.cv.notify_all();
}

void Tries::watch(Coord& k, std::uint64_t job, std::vector<ConnectionPtr>& to_close) {
    const double now = now_s();
    const double stall = std::chrono::duration<double>(core_.cfg.stall_timeout).count();
    // A participant's I/O thread answers a ping whatever its jobs do: silence means the
    // process is frozen or the path to it is gone (the kernel answers TCP for a stopped one).
    for (auto& [name, n] : k.nodes) {
        if (n.finished || !n.conn) continue;
        const double heard = std::max(connections_.last_heard(name), n.sent);
        if (now - heard > stall) {
            n.finished = true;
            n.error = "'" + name + "' stopped answering (nothing from it for " + std::to_string(static_cast<int>(stall)) +
                      " s)";
            to_close.push_back(n.conn);
            fail_below(k, name, n.error);
            // This member's own sends to it end now, and what its socket holds is dropped.
            if (auto own = participant_.find(job)) {
                std::lock_guard jl(own->mu);
                if (auto lane = own->lanes_out.find(name); lane != own->lanes_out.end()) lane->second->abort(n.error);
            }
        } else if (now - heard > 1 && now - n.pinged > 1) {
            n.pinged = now;
            n.conn->send(Frame{FrameHeader{FrameType::ping, 0, 0, 0, 0}, std::vector<std::byte>(sizeof(double))});
        }
    }
    // Nobody waits on a failed member: what it feeds is cancelled now, and so on down.
    for (auto& [name, n] : k.nodes) {
        if (!n.finished || n.error.empty() || n.spread) continue;
        n.spread = true;
        for (const auto& [key, from] : k.feeder) {
            const auto& [m, to] = key;
            if (from != name || k.have.count(key)) continue;
            auto child = k.nodes.find(to);
            if (child == k.nodes.end() || child->second.finished) continue;
            const std::string why = "'" + name + "' failed: " + n.error;
            if (child->second.conn) {
                child->second.conn->send(make_frame(FrameType::job_cancel, job, m, why));
            } else if (!child->second.hop.empty()) {
                // Below a relay: its lane from the failed feeder ends, or its stall rule ends it.
            } else if (auto own = participant_.find(job)) {
                participant_.cancel_receive(*own, m, why);
            }
        }
    }
}

void Tries::closed(const ConnectionPtr& c, const std::string& why) {
    const std::string& who = c->peer();
    const auto ks = coords_.all();
    if (core_.stopping || who.empty()) return;
    for (const auto& [id, k] : ks) {
        std::lock_guard lock(k->mu);
        auto it = k->nodes.find(who);
        if (it != k->nodes.end() && it->second.conn == c) {
            const std::string lost = "lost the connection with '" + who + "': " + why;
            if (!it->second.finished) {
                it->second.finished = true;
                it->second.error = lost;
            }
            // Its subtree's plans and reports went through this connection, even when its
            // own part had already failed (a relay that stops says so first): without this,
            // they waited out the set-up and failed on their own account.
            fail_below(*k, who, it->second.error.empty() ? lost : it->second.error);
        }
        k->cv.notify_all();
    }
}

bool Tries::cancel(std::uint64_t push, const std::string& why) {
    const std::vector<std::shared_ptr<Coord>> ks = coords_.cancel(push, why);
    for (auto& k : ks) {
        std::lock_guard lock(k->mu);
        if (k->cancelled.empty()) k->cancelled = why;
        k->cv.notify_all();
    }
    return !ks.empty();
}

void Tries::info(std::vector<JobInfo>& out, double now) const {
    for (const auto& [id, k] : coords_.all()) {
        std::lock_guard lock(k->mu);
        JobInfo i;
        i.job = k->push;
        i.role = "coordinator";
        i.coordinator = core_.cfg.name;
        i.algorithm = k->algorithm;
        i.seconds = k->started > 0 ? now - k->started : 0;
        i.bytes = std::min(k->bytes_in, k->owed);
        i.owed = k->owed;
        i.state = k->started > 0 ? "running" : "planned";
        out.push_back(std::move(i));
    }
}

bool Tries::busy_with(const ConnectionPtr& c) const {
    const auto ks = coords_.all();
    return std::any_of(ks.begin(), ks.end(), [&](const auto& id_k) {
        const auto& k = id_k.second;
        std::unique_lock lock(k->mu, std::try_to_lock);
        return !lock || k->nodes.count(c->peer()) > 0;
    });
}

void Tries::wake_all() {
    for (auto& [id, k] : coords_.all()) k->cv.notify_all();
}

}  // namespace hetcast::detail
