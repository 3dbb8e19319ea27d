// A peer's connections: the control connection with each member, a job's data lanes, and
// when each member was last heard.
#include "peer_connections.hpp"

#include <algorithm>
#include <future>
#include <iterator>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "hetcast/error.hpp"

namespace hetcast::detail {
using net::ConnectionPtr;

std::optional<Member> Connections::address(const std::string& name, const std::vector<Member>* hint) const {
    if (hint) {
        for (const auto& m : *hint) {
            if (m.name == name) return m;
        }
    }
    return directory_.find(name);
}

ConnectionPtr Connections::conn_to(const std::string& name, const std::vector<Member>* hint) {
    if (auto c = directory_.connection(name)) return c;
    const auto m = address(name, hint);
    if (!m) throw Error("'" + name + "' is not a known member");
    const std::shared_ptr<std::mutex> member_mu = directory_.dial_lock(name);
    std::lock_guard serial(*member_mu);
    if (auto c = directory_.connection(name)) return c;
    ConnectionPtr c = core_.transport->connect(m->host, m->port, name);
    directory_.keep(name, c);
    return c;
}

ConnectionPtr Connections::lane_to(Job& job, const std::string& name) {
    {
        std::lock_guard lock(job.mu);
        if (job.aborted) throw Error(job.abort_reason);
        if (auto it = job.lanes_out.find(name); it != job.lanes_out.end()) return it->second;
    }
    const auto m = address(name, &job.plan.participants);
    if (!m) throw Error("'" + name + "' is not a known member");
    ConnectionPtr c = core_.transport->connect(m->host, m->port, name);
    lanes_.note(c.get(), job.plan.job, false);
    std::lock_guard lock(job.mu);
    if (job.aborted) {
        c->abort(job.abort_reason);
        throw Error(job.abort_reason);
    }
    job.lanes_out[name] = c;
    return c;
}

std::size_t Connections::dial_lanes(Job& job) {
    std::set<std::string> to;
    for (const JobTask& t : job.plan.tasks) {
        if (t.op == Op::send) to.insert(t.peer);
    }
    const auto dial = [this, &job](const std::string& name) {
        try {
            (void)lane_to(job, name);
        } catch (const std::exception&) {
            // Dialled again by the send itself, which then fails the way a send fails.
        }
    };
    // All handshakes at once: a set-up waits for the slowest lane, not for the sum of them
    // (on busy cores one handshake took 60-140 ms).
    std::vector<std::future<void>> others;
    auto it = to.begin();
    for (; it != to.end() && std::next(it) != to.end(); ++it) {
        try {
            others.push_back(std::async(std::launch::async, dial, *it));
        } catch (const std::system_error&) {
            dial(*it);  // no thread to spare: this one in turn
        }
    }
    if (it != to.end()) dial(*it);
    for (auto& f : others) f.wait();
    return to.size();
}

void Connections::end_lanes(Job& job, bool reset, const std::string& why) {
    for (auto& [name, c] : job.lanes_out) {
        if (reset) c->abort(why);
        // A receiver closes its end once it holds what it was sent; a sender that closed
        // first could reset data still in flight.
    }
    if (reset) job.lanes_out.clear();
    for (auto& c : job.lanes_in) {
        if (reset) {
            c->abort(why);
        } else {
            c->close();
        }
    }
    job.lanes_in.clear();
}

void Connections::note_lane(Job& job, const ConnectionPtr& c) {
    if (c == job.coordinator || std::find(job.lanes_in.begin(), job.lanes_in.end(), c) != job.lanes_in.end()) return;
    if (job.finished || job.aborted) {
        c->abort("job " + std::to_string(job.plan.job) + " is over here");
        return;
    }
    job.lanes_in.push_back(c);
    lanes_.note(c.get(), job.plan.job, true);
}

void Connections::hear(const std::string& who) {
    std::lock_guard lock(heard_mu_);
    heard_[who] = now_s();
}

double Connections::last_heard(const std::string& who) const {
    std::lock_guard lock(heard_mu_);
    const auto it = heard_.find(who);
    return it == heard_.end() ? 0 : it->second;
}

}  // namespace hetcast::detail
