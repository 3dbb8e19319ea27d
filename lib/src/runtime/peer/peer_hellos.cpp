// Whether members are up, asked along the control tree (docs/protocol.md, "The control
// tree"): past control_fanout members a member asks its children only, each child its
// subtree the same way ({"cmd": "hellos"}), and the answers come back in one response per
// child. A member no relay vouches for is asked directly, in the time left.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <future>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "hetcast/error.hpp"
#include "peer_relay_frames.hpp"
#include "peer_requests.hpp"

namespace hetcast::detail {
using json = nlohmann::json;

namespace {

std::chrono::milliseconds left(Clock::time_point deadline) {
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

}  // namespace

PeerAnswers Requests::hello_all(const std::vector<std::string>& members, std::chrono::milliseconds timeout) {
    return hellos(members, core_.cfg.control_fanout, Clock::now() + timeout);
}

PeerAnswers Requests::hellos(const std::vector<std::string>& members, std::size_t fanout, Clock::time_point deadline) {
    const json hello{{"cmd", "hello"}};
    if (fanout == 0 || members.size() <= fanout) return calls_.call_all(members, hello, left(deadline));
    const auto routes = control_routes(members, fanout);
    std::vector<std::size_t> children;
    std::map<std::string, std::vector<std::string>> below;  ///< child → its subtree, breadth first
    for (std::size_t i = 0; i < members.size(); ++i) {
        if (routes[i].size() == 1) {
            children.push_back(i);
        } else {
            below[routes[i].front()].push_back(members[i]);
        }
    }
    // Half the time for the children's answers, the rest for asking directly whoever no
    // child vouched for (a relay down, a member its relay could not reach, an older daemon).
    const auto half = left(deadline) / 2;
    std::vector<std::future<json>> asked;
    for (const std::size_t i : children) {
        const std::string& child = members[i];
        json req = hello;
        if (const auto b = below.find(child); b != below.end()) {
            req = {{"cmd", "hellos"}, {"members", b->second}, {"fanout", fanout}, {"patience", half.count()}};
        }
        const auto call_child = [this, child, req, half] {
            return calls_.call_on(connections_.conn_to(child), "'" + child + "'", req, half);
        };
        try {
            asked.push_back(std::async(std::launch::async, call_child));
        } catch (const std::system_error&) {
            asked.push_back(std::async(std::launch::deferred, call_child));  // no thread to spare: in turn
        }
    }
    std::map<std::string, json> up;  ///< member → its hello answer
    std::map<std::string, std::string> why;
    for (std::size_t k = 0; k < children.size(); ++k) {
        const std::string& child = members[children[k]];
        try {
            json a = asked[k].get();
            if (a.is_object() && a.contains("below") && a["below"].is_object()) {
                // Only for its own subtree: a child cannot answer for another's members.
                const auto b = below.find(child);
                const std::set<std::string> mine = b == below.end() ? std::set<std::string>{}
                                                                    : std::set<std::string>(b->second.begin(), b->second.end());
                for (auto& [name, answer] : a["below"].items()) {
                    if (mine.count(name)) up[name] = std::move(answer);
                }
                a.erase("below");
                a.erase("down");
            }
            up[child] = std::move(a);
        } catch (const std::exception& e) {
            why[child] = e.what();
        }
    }
    PeerAnswers out;
    out.responses.resize(members.size());
    out.errors.resize(members.size());
    std::vector<std::string> again;
    std::vector<std::size_t> again_at;
    for (std::size_t i = 0; i < members.size(); ++i) {
        const std::string& m = members[i];
        if (const auto u = up.find(m); u != up.end()) {
            out.responses[i] = std::move(u->second);
        } else if (const auto w = why.find(m); w != why.end()) {
            out.errors[i] = w->second;
        } else {
            again.push_back(m);
            again_at.push_back(i);
        }
    }
    if (!again.empty()) {
        PeerAnswers direct = calls_.call_all(again, hello, left(deadline));
        for (std::size_t k = 0; k < again.size(); ++k) {
            out.responses[again_at[k]] = std::move(direct.responses[k]);
            out.errors[again_at[k]] = std::move(direct.errors[k]);
        }
    }
    return out;
}

json Requests::answer_hellos(const net::PeerIdentity& from, const json& req) {
    json own{{"error", "this peer takes no requests"}};
    Handler handler;
    {
        std::lock_guard lock(mu_);
        handler = handler_;
    }
    if (handler) handler(from, {{"cmd", "hello"}}, [&own](const json& j) { own = j; });
    const auto members_it = req.find("members");
    if (members_it == req.end() || !members_it->is_array() || members_it->size() > 100000) {
        throw InputError("hellos: 'members' is not a list of members");
    }
    std::vector<std::string> members;
    std::set<std::string> seen;
    for (const auto& m : *members_it) {
        if (!m.is_string()) throw InputError("hellos: a member named by something else than a string");
        const auto name = m.get<std::string>();
        if (name != core_.cfg.name && seen.insert(name).second) members.push_back(name);
    }
    const std::size_t fanout = std::clamp<std::size_t>(req.value("fanout", std::size_t{16}), 1, 1024);
    // Answered in three quarters of the caller's patience, so that the answer is there in time.
    const auto patience = std::chrono::milliseconds(std::clamp<std::int64_t>(req.value("patience", std::int64_t{2000}), 10, 60000));
    const PeerAnswers a = hellos(members, fanout, Clock::now() + patience * 3 / 4);
    json below = json::object(), down = json::object();
    for (std::size_t i = 0; i < members.size(); ++i) {
        if (a.errors[i].empty()) {
            below[members[i]] = a.responses[i];
        } else {
            down[members[i]] = a.errors[i];
        }
    }
    own["below"] = std::move(below);
    own["down"] = std::move(down);
    return own;
}

}  // namespace hetcast::detail
