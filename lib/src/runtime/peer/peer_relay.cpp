// What a relay does for the jobs it relays (peer_relay.hpp): the table of them, the
// threads that send up and down, the dialling; each job's own state is a RelayedJob
// (peer_relay_job.cpp), the frames it forwards are made and read in peer_relay_frames.cpp.
#include "peer_relay.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "hetcast/error.hpp"
#include "peer_relay_frames.hpp"
#include "../job/job_state.hpp"
#include "../wire/frames.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameHeader;
using net::FrameType;

bool Relays::on_relay(const ConnectionPtr& c, const Frame& f) {
    auto [head, plan] = split_relay(f);
    if (head["route"].empty()) return true;
    json route = head["route"];
    const auto next = route.front().get<std::string>();
    const auto to = head["to"].get<std::string>();
    if (route.back().get<std::string>() != to || next == core_.cfg.name) throw InputError("a job_relay frame's route does not lead to its member");
    route.erase(route.begin());
    head["route"] = std::move(route);
    std::shared_ptr<RelayedJob> h;
    {
        std::lock_guard lock(mu_);
        auto& slot = jobs_[f.header.job];
        if (!slot) {
            slot = std::make_shared<RelayedJob>(f.header.job, c);
        } else if (slot->parent() != c) {
            throw InputError("plans of job " + std::to_string(f.header.job) + " to relay from another than its parent");
        }
        h = slot;
        h->route(to, next);
    }
    Frame out = relay_envelope(f.header.job, head, plan);
    if (core_.cfg.tamper_relay && !core_.cfg.tamper_relay(out)) return false;
    queue_down(h, next, std::move(out));
    return false;
}

void Relays::on_down(const ConnectionPtr& c, const Frame& f) {
    std::shared_ptr<RelayedJob> h;
    {
        std::lock_guard lock(mu_);
        const auto it = jobs_.find(f.header.job);
        if (it == jobs_.end() || it->second->parent() != c) return;
        h = it->second;
        if (f.header.type == FrameType::job_cancel) {
            if (f.header.message != net::all_messages) return;
            h->cancel(now_s());
        }
    }
    std::set<std::string> children;
    {
        std::lock_guard lock(mu_);
        children = h->children();
    }
    for (const auto& child : children) queue_down(h, child, f);
}

bool Relays::on_up(const ConnectionPtr& c, const Frame& f) {
    std::shared_ptr<RelayedJob> h;
    {
        std::lock_guard lock(mu_);
        const auto it = jobs_.find(f.header.job);
        if (it == jobs_.end() || !it->second->from_child(c)) return false;
        h = it->second;
    }
    const json j = json::parse(net::as_text(f.payload));
    if (f.header.type == FrameType::job_report) {
        json e = j;
        if (!e.is_object()) throw InputError("a job event that is not an object");
        e["member"] = c->peer();
        queue_up(h, std::move(e));
    } else {
        if (!j.is_object() || !j.contains("events") || !j["events"].is_array()) throw InputError("job_reports without events");
        for (const auto& e : j["events"]) {
            if (!e.is_object() || !e.contains("member") || !e["member"].is_string()) {
                throw InputError("a relayed event without its member");
            }
            {
                std::lock_guard lock(mu_);
                if (!h->below(e["member"].get<std::string>(), c->peer())) {
                    throw InputError("'" + c->peer() + "' relays events of '" + e["member"].get<std::string>() +
                                     "', which is not below it");
                }
            }
            queue_up(h, e);
        }
    }
    flush_up(h);
    return true;
}

void Relays::queue_up(const std::shared_ptr<RelayedJob>& h, json e) {
    std::lock_guard lock(mu_);
    h->add(std::move(e));
}

void Relays::flush_up(const std::shared_ptr<RelayedJob>& h) {
    {
        std::lock_guard lock(mu_);
        if (!h->start_flush()) return;
    }
    // Events that arrive while this waits for a thread go in the same frame.
    const bool spawned = core_.spawn(core_.quick, [this, h] {
        while (true) {
            json events;
            ConnectionPtr parent;
            {
                std::lock_guard lock(mu_);
                if (!h->take(events)) break;
                parent = h->parent();
            }
            parent->send(json_frame(FrameType::job_reports, h->job(), 0, json{{"events", std::move(events)}}));
        }
        forget_if_done(h);
    });
    if (!spawned) {
        std::lock_guard lock(mu_);
        h->end_flush();
    }
}

void Relays::queue_down(const std::shared_ptr<RelayedJob>& h, const std::string& to, Frame f) {
    {
        std::lock_guard lock(mu_);
        if (!h->push(to, std::move(f))) return;
    }
    // Dialling a child may take a while: off the I/O thread, one sender per job, in order.
    const bool spawned = core_.spawn(core_.slow, [this, h] { send_down(h); });
    if (!spawned) {
        std::lock_guard lock(mu_);
        h->drop();
    }
}

void Relays::send_down(const std::shared_ptr<RelayedJob>& h) {
    while (true) {
        std::pair<std::string, Frame> next;
        ConnectionPtr c;
        {
            std::lock_guard lock(mu_);
            if (!h->pop(next, c)) return;
        }
        const std::string& child = next.first;
        if (!c) {
            try {
                c = connections_.conn_to(child);
            } catch (const std::exception& e) {
                std::unique_lock lock(mu_);
                if (h->finished(child)) continue;
                lock.unlock();
                fail_below(*h, child, "'" + child + "' cannot be reached: " + e.what());
                flush_up(h);
                continue;
            }
            std::lock_guard lock(mu_);
            h->dialled(child, c, now_s());
        }
        c->send(std::move(next.second));
    }
}

void Relays::fail_below(RelayedJob& h, const std::string& child, const std::string& why) {
    std::vector<json> failed;
    {
        std::lock_guard lock(mu_);
        failed = h.failures(child, why);
    }
    std::shared_ptr<RelayedJob> self;
    {
        std::lock_guard lock(mu_);
        const auto it = jobs_.find(h.job());
        if (it == jobs_.end() || it->second.get() != &h) return;
        self = it->second;
    }
    for (auto& e : failed) queue_up(self, std::move(e));
}

void Relays::closed(const ConnectionPtr& c, const std::string& why) {
    std::vector<std::shared_ptr<RelayedJob>> orphans;
    std::vector<std::pair<std::shared_ptr<RelayedJob>, std::string>> lost;
    {
        std::lock_guard lock(mu_);
        for (auto it = jobs_.begin(); it != jobs_.end();) {
            const auto& h = it->second;
            for (const auto& name : h->children_on(c)) lost.emplace_back(h, name);
            if (h->parent() == c) {
                orphans.push_back(h);
                it = jobs_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (const auto& h : orphans) {
        // Below, nobody would ever hear of this job again: it ends there as it does here.
        std::set<std::string> children;
        {
            std::lock_guard lock(mu_);
            children = h->children();
        }
        for (const auto& child : children) {
            queue_down(h, child, make_frame(FrameType::job_cancel, h->job(), net::all_messages,
                                            "lost the relay's parent '" + c->peer() + "': " + why));
        }
    }
    for (const auto& [h, child] : lost) {
        fail_below(*h, child, "lost the connection with '" + child + "': " + why);
        flush_up(h);
    }
}

void Relays::watch() {
    const double now = now_s();
    const double stall = std::chrono::duration<double>(core_.cfg.stall_timeout).count();
    std::vector<ConnectionPtr> silent, ping;
    {
        std::lock_guard lock(mu_);
        for (auto it = jobs_.begin(); it != jobs_.end();) {
            if (it->second->expired(now, stall)) {
                it = jobs_.erase(it);
            } else {
                ++it;
            }
        }
        for (const auto& [id, h] : jobs_) h->watch(now, stall, connections_, silent, ping);
    }
    for (const auto& c : ping) c->send(Frame{FrameHeader{FrameType::ping, 0, 0, 0, 0}, std::vector<std::byte>(sizeof(double))});
    for (const auto& c : silent) c->close("stopped answering");
}

void Relays::forget_if_done(const std::shared_ptr<RelayedJob>& h) {
    std::lock_guard lock(mu_);
    if (!h->done()) return;
    const auto it = jobs_.find(h->job());
    if (it != jobs_.end() && it->second == h) jobs_.erase(it);
}

bool Relays::busy_with(const ConnectionPtr& c) const {
    std::unique_lock lock(mu_, std::try_to_lock);
    if (!lock) return true;
    for (const auto& [id, h] : jobs_) {
        if (h->uses(c)) return true;
    }
    return false;
}

std::size_t Relays::relaying() const {
    std::lock_guard lock(mu_);
    return jobs_.size();
}

}  // namespace hetcast::detail
