// One job a relay passes on (peer_relay_job.hpp).
#include "peer_relay_job.hpp"

#include <algorithm>
#include <utility>

#include "../job/job_state.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;

void RelayedJob::route(const std::string& to, const std::string& next) {
    via_[to] = next;
    via_[next] = next;
    finished_.erase(to);
}

std::set<std::string> RelayedJob::children() const {
    std::set<std::string> out;
    for (const auto& [below, child] : via_) out.insert(child);
    return out;
}

bool RelayedJob::from_child(const ConnectionPtr& c) const {
    const auto ch = children_.find(c->peer());
    return ch != children_.end() && ch->second == c;
}

bool RelayedJob::below(const std::string& member, const std::string& child) const {
    const auto v = via_.find(member);
    return v != via_.end() && v->second == child && member != child;
}

std::vector<std::string> RelayedJob::children_on(const ConnectionPtr& c) const {
    std::vector<std::string> out;
    for (const auto& [name, conn] : children_) {
        if (conn == c) out.push_back(name);
    }
    return out;
}

bool RelayedJob::uses(const ConnectionPtr& c) const {
    if (parent_ == c) return true;
    for (const auto& [name, conn] : children_) {
        if (conn == c) return true;
    }
    return false;
}

bool RelayedJob::done() const {
    if (flushing_ || sending_) return false;
    for (const auto& [below, child] : via_) {
        if (!finished_.count(below)) return false;
    }
    return true;
}

void RelayedJob::add(json e) {
    const std::string from = e.value("member", "");
    const std::string kind = e.value("event", "");
    if (kind == "done" || kind == "failed") finished_.insert(from);
    // Progress aggregates on the way up: one entry per member and batch, its bytes summed.
    if (kind == "progress") {
        for (auto& q : outbox_) {
            if (q.value("event", "") == "progress" && q.value("member", "") == from) {
                q["bytes"] = q.value("bytes", std::uint64_t{0}) + e.value("bytes", std::uint64_t{0});
                q["clock"] = e["clock"];
                return;
            }
        }
    }
    outbox_.push_back(std::move(e));
}

std::vector<json> RelayedJob::failures(const std::string& child, const std::string& why) const {
    std::vector<json> failed;
    for (const auto& [below, via] : via_) {
        if (via != child || finished_.count(below)) continue;
        json e{{"event", "failed"}, {"clock", now_s()}, {"error", why}, {"member", below}};
        if (below != child) {
            e["error"] = "its relay '" + child + "' failed: " + why;
            e["cut_off"] = true;
        }
        failed.push_back(std::move(e));
    }
    return failed;
}

bool RelayedJob::start_flush() {
    if (flushing_ || outbox_.empty()) return false;
    flushing_ = true;
    return true;
}

bool RelayedJob::take(json& events) {
    if (outbox_.empty()) {
        flushing_ = false;
        return false;
    }
    events = std::exchange(outbox_, json::array());
    return true;
}

bool RelayedJob::push(const std::string& to, Frame f) {
    queue_.emplace_back(to, std::move(f));
    if (sending_) return false;
    sending_ = true;
    return true;
}

bool RelayedJob::pop(std::pair<std::string, Frame>& next, ConnectionPtr& c) {
    if (queue_.empty()) {
        sending_ = false;
        return false;
    }
    next = std::move(queue_.front());
    queue_.erase(queue_.begin());
    if (const auto it = children_.find(next.first); it != children_.end()) c = it->second;
    return true;
}

void RelayedJob::dialled(const std::string& child, ConnectionPtr c, double now) {
    children_[child] = std::move(c);
    since_[child] = now;
}

void RelayedJob::watch(double now, double stall, const Connections& connections, std::vector<ConnectionPtr>& silent,
                       std::vector<ConnectionPtr>& ping) {
    for (const auto& [child, c] : children_) {
        const bool open = std::any_of(via_.begin(), via_.end(), [&](const auto& kv) {
            return kv.second == child && !finished_.count(kv.first);
        });
        if (!open) continue;
        const double heard = std::max(connections.last_heard(child), since_[child]);
        if (now - heard > stall) {
            silent.push_back(c);
        } else if (now - heard > 1 && now - pinged_[child] > 1) {
            pinged_[child] = now;
            ping.push_back(c);
        }
    }
}

}  // namespace hetcast::detail
