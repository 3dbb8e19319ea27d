// What a relay does for the jobs it relays (peer_relay.hpp); the frames it forwards are
// made and read in peer_relay_frames.cpp.
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
    std::shared_ptr<Hop> h;
    {
        std::lock_guard lock(mu_);
        auto& slot = jobs_[f.header.job];
        if (!slot) {
            slot = std::make_shared<Hop>();
            slot->job = f.header.job;
            slot->parent = c;
        } else if (slot->parent != c) {
            throw InputError("plans of job " + std::to_string(f.header.job) + " to relay from another than its parent");
        }
        h = slot;
        h->via[to] = next;
        h->via[next] = next;
        h->finished.erase(to);
    }
    Frame out = relay_envelope(f.header.job, head, plan);
    if (core_.cfg.tamper_relay && !core_.cfg.tamper_relay(out)) return false;
    queue_down(h, next, std::move(out));
    return false;
}

void Relays::on_down(const ConnectionPtr& c, const Frame& f) {
    std::shared_ptr<Hop> h;
    {
        std::lock_guard lock(mu_);
        const auto it = jobs_.find(f.header.job);
        if (it == jobs_.end() || it->second->parent != c) return;
        h = it->second;
        if (f.header.type == FrameType::job_cancel) {
            if (f.header.message != net::all_messages) return;
            h->cancelled = now_s();
        }
    }
    std::set<std::string> children;
    {
        std::lock_guard lock(mu_);
        for (const auto& [below, child] : h->via) children.insert(child);
    }
    for (const auto& child : children) queue_down(h, child, f);
}

bool Relays::on_up(const ConnectionPtr& c, const Frame& f) {
    std::shared_ptr<Hop> h;
    {
        std::lock_guard lock(mu_);
        const auto it = jobs_.find(f.header.job);
        if (it == jobs_.end()) return false;
        const auto ch = it->second->children.find(c->peer());
        if (ch == it->second->children.end() || ch->second != c) return false;
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
                const auto v = h->via.find(e["member"].get<std::string>());
                if (v == h->via.end() || v->second != c->peer() || e["member"] == c->peer()) {
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

void Relays::queue_up(const std::shared_ptr<Hop>& h, json e) {
    std::lock_guard lock(mu_);
    const std::string from = e.value("member", "");
    const std::string kind = e.value("event", "");
    if (kind == "done" || kind == "failed") h->finished.insert(from);
    // Progress aggregates on the way up: one entry per member and batch, its bytes summed.
    if (kind == "progress") {
        for (auto& q : h->outbox) {
            if (q.value("event", "") == "progress" && q.value("member", "") == from) {
                q["bytes"] = q.value("bytes", std::uint64_t{0}) + e.value("bytes", std::uint64_t{0});
                q["clock"] = e["clock"];
                return;
            }
        }
    }
    h->outbox.push_back(std::move(e));
}

void Relays::flush_up(const std::shared_ptr<Hop>& h) {
    {
        std::lock_guard lock(mu_);
        if (h->flushing || h->outbox.empty()) return;
        h->flushing = true;
    }
    // Events that arrive while this waits for a thread go in the same frame.
    const bool spawned = core_.spawn(core_.quick, [this, h] {
        while (true) {
            json events;
            ConnectionPtr parent;
            {
                std::lock_guard lock(mu_);
                if (h->outbox.empty()) {
                    h->flushing = false;
                    break;
                }
                events = std::exchange(h->outbox, json::array());
                parent = h->parent;
            }
            parent->send(json_frame(FrameType::job_reports, h->job, 0, json{{"events", std::move(events)}}));
        }
        forget_if_done(h);
    });
    if (!spawned) {
        std::lock_guard lock(mu_);
        h->flushing = false;
    }
}

void Relays::queue_down(const std::shared_ptr<Hop>& h, const std::string& to, Frame f) {
    {
        std::lock_guard lock(mu_);
        h->queue.emplace_back(to, std::move(f));
        if (h->sending) return;
        h->sending = true;
    }
    // Dialling a child may take a while: off the I/O thread, one sender per job, in order.
    const bool spawned = core_.spawn(core_.slow, [this, h] { send_down(h); });
    if (!spawned) {
        std::lock_guard lock(mu_);
        h->sending = false;
        h->queue.clear();
    }
}

void Relays::send_down(const std::shared_ptr<Hop>& h) {
    while (true) {
        std::pair<std::string, Frame> next;
        ConnectionPtr c;
        {
            std::lock_guard lock(mu_);
            if (h->queue.empty()) {
                h->sending = false;
                return;
            }
            next = std::move(h->queue.front());
            h->queue.erase(h->queue.begin());
            if (const auto it = h->children.find(next.first); it != h->children.end()) c = it->second;
        }
        const std::string& child = next.first;
        if (!c) {
            try {
                c = connections_.conn_to(child);
            } catch (const std::exception& e) {
                std::unique_lock lock(mu_);
                if (h->finished.count(child)) continue;
                lock.unlock();
                fail_below(*h, child, "'" + child + "' cannot be reached: " + e.what());
                flush_up(h);
                continue;
            }
            std::lock_guard lock(mu_);
            h->children[child] = c;
            h->since[child] = now_s();
        }
        c->send(std::move(next.second));
    }
}

void Relays::fail_below(Hop& h, const std::string& child, const std::string& why) {
    std::vector<json> failed;
    {
        std::lock_guard lock(mu_);
        for (const auto& [below, via] : h.via) {
            if (via != child || h.finished.count(below)) continue;
            json e{{"event", "failed"}, {"clock", now_s()}, {"error", why}, {"member", below}};
            if (below != child) {
                e["error"] = "its relay '" + child + "' failed: " + why;
                e["cut_off"] = true;
            }
            failed.push_back(std::move(e));
        }
    }
    std::shared_ptr<Hop> self;
    {
        std::lock_guard lock(mu_);
        const auto it = jobs_.find(h.job);
        if (it == jobs_.end() || it->second.get() != &h) return;
        self = it->second;
    }
    for (auto& e : failed) queue_up(self, std::move(e));
}

void Relays::closed(const ConnectionPtr& c, const std::string& why) {
    std::vector<std::shared_ptr<Hop>> orphans;
    std::vector<std::pair<std::shared_ptr<Hop>, std::string>> lost;
    {
        std::lock_guard lock(mu_);
        for (auto it = jobs_.begin(); it != jobs_.end();) {
            const auto& h = it->second;
            for (const auto& [name, conn] : h->children) {
                if (conn == c) lost.emplace_back(h, name);
            }
            if (h->parent == c) {
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
            for (const auto& [below, child] : h->via) children.insert(child);
        }
        for (const auto& child : children) {
            queue_down(h, child, make_frame(FrameType::job_cancel, h->job, net::all_messages,
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
            if (it->second->cancelled > 0 && now - it->second->cancelled > stall) {
                it = jobs_.erase(it);
            } else {
                ++it;
            }
        }
        for (const auto& [id, h] : jobs_) {
            for (const auto& [child, c] : h->children) {
                const bool open = std::any_of(h->via.begin(), h->via.end(), [&](const auto& kv) {
                    return kv.second == child && !h->finished.count(kv.first);
                });
                if (!open) continue;
                const double heard = std::max(connections_.last_heard(child), h->since[child]);
                if (now - heard > stall) {
                    silent.push_back(c);
                } else if (now - heard > 1 && now - h->pinged[child] > 1) {
                    h->pinged[child] = now;
                    ping.push_back(c);
                }
            }
        }
    }
    for (const auto& c : ping) c->send(Frame{FrameHeader{FrameType::ping, 0, 0, 0, 0}, std::vector<std::byte>(sizeof(double))});
    for (const auto& c : silent) c->close("stopped answering");
}

void Relays::forget_if_done(const std::shared_ptr<Hop>& h) {
    std::lock_guard lock(mu_);
    if (h->flushing || h->sending) return;
    for (const auto& [below, child] : h->via) {
        if (!h->finished.count(below)) return;
    }
    const auto it = jobs_.find(h->job);
    if (it != jobs_.end() && it->second == h) jobs_.erase(it);
}

bool Relays::busy_with(const ConnectionPtr& c) const {
    std::unique_lock lock(mu_, std::try_to_lock);
    if (!lock) return true;
    for (const auto& [id, h] : jobs_) {
        if (h->parent == c) return true;
        for (const auto& [name, conn] : h->children) {
            if (conn == c) return true;
        }
    }
    return false;
}

std::size_t Relays::relaying() const {
    std::lock_guard lock(mu_);
    return jobs_.size();
}

}  // namespace hetcast::detail
