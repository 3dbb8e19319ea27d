// The control tree: routes, the relayed plan's envelope and its check, and what a relay
// does for the jobs it relays (peer_relay.hpp).
#include "peer_relay.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "hetcast/error.hpp"
#include "../job/job_state.hpp"
#include "../wire/frames.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameHeader;
using net::FrameType;

namespace {

std::string signed_text(std::uint64_t job, const std::string& to, const std::string& parent, std::string_view plan) {
    std::string s = "hetcast job_relay\n" + std::to_string(job) + "\n" + to + "\n" + parent + "\n";
    s.append(plan);
    return s;
}

/// The envelope's first line (JSON) and the plan after it.
std::pair<json, std::string_view> split(const Frame& f) {
    const std::string_view all = net::as_text(f.payload);
    const auto nl = all.find('\n');
    if (nl == std::string_view::npos || nl > 64 * 1024) throw InputError("a job_relay frame without its route line");
    json head = json::parse(all.substr(0, nl));
    if (!head.is_object() || !head.contains("route") || !head["route"].is_array() || !head.contains("to") ||
        !head["to"].is_string() || !head.contains("parent") || !head["parent"].is_string()) {
        throw InputError("a job_relay frame's route line lacks route, to or parent");
    }
    for (const auto& r : head["route"]) {
        if (!r.is_string()) throw InputError("a job_relay frame's route names a member by something else than a string");
    }
    return {std::move(head), all.substr(nl + 1)};
}

Frame envelope(std::uint64_t job, const json& head, std::string_view plan) {
    std::string text = head.dump(-1, ' ', false, json::error_handler_t::replace);
    text += '\n';
    text.append(plan);
    return make_frame(FrameType::job_relay, job, 0, text);
}

}  // namespace

std::vector<std::vector<std::string>> control_routes(const std::vector<std::string>& members, std::size_t fanout) {
    fanout = std::max<std::size_t>(fanout, 1);
    std::vector<std::vector<std::string>> routes(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) {
        if (i >= fanout) routes[i] = routes[(i - fanout) / fanout];
        routes[i].push_back(members[i]);
    }
    return routes;
}

Frame relay_frame(const net::Identity& id, const std::string& coordinator, std::uint64_t job,
                  const std::vector<std::string>& route, std::string_view plan_text) {
    const std::string& to = route.back();
    const std::string& parent = route.size() >= 2 ? route[route.size() - 2] : coordinator;
    json head{{"route", std::vector<std::string>(route.begin() + 1, route.end())},
              {"to", to},
              {"parent", parent},
              {"cert", id.cert_pem},
              {"sig", net::sign(id, signed_text(job, to, parent, plan_text))}};
    return envelope(job, head, plan_text);
}

std::string_view check_relayed(const Frame& f, const std::string& me, const std::string& sender, std::string_view ca_pem,
                               const std::vector<net::Revocation>& revoked, std::int64_t now) {
    auto [head, plan] = split(f);
    const auto to = head["to"].get<std::string>(), parent = head["parent"].get<std::string>();
    if (to != me) throw InputError("a relayed plan for '" + to + "' came to '" + me + "'");
    if (parent != sender) throw InputError("a relayed plan names '" + parent + "' as its parent, but came from '" + sender + "'");
    const net::PeerIdentity who = net::verify_signature(head.value("cert", ""), ca_pem, signed_text(f.header.job, to, parent, plan),
                                                        head.value("sig", ""), now);
    if (who.role != net::Role::member) throw InputError("a relayed plan signed by '" + who.name + "', not a member");
    for (const auto& r : revoked) {
        if (net::revokes(r, who)) throw InputError("a relayed plan signed by '" + who.name + "', revoked");
    }
    const json p = json::parse(plan);
    if (!p.is_object() || p.value("coordinator", "") != who.name) {
        throw InputError("a relayed plan signed by '" + who.name + "' names another coordinator");
    }
    return plan;
}

bool Relays::on_relay(const ConnectionPtr& c, const Frame& f) {
    auto [head, plan] = split(f);
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
    Frame out = envelope(f.header.job, head, plan);
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
