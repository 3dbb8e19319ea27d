#include "hetcast/runtime/membership.hpp"

#include <algorithm>
#include <string>

#include "hetcast/error.hpp"

namespace hetcast {
using json = nlohmann::json;

json members_to_json(const std::vector<Member>& members) {
    json a = json::array();
    for (const auto& m : members) a.push_back({{"name", m.name}, {"host", m.host}, {"port", m.port}});
    return a;
}

std::vector<Member> members_from_json(const json& j) {
    if (!j.is_array()) throw InputError("members: expected a list");
    std::vector<Member> out;
    for (const auto& m : j) {
        if (!m.is_object() || !m.contains("name") || !m["name"].is_string() || !m.contains("host") ||
            !m["host"].is_string() || !m.contains("port") || !m["port"].is_number_unsigned() ||
            m["port"].get<std::uint64_t>() > 65535) {
            throw InputError("members: each member is {name, host, port}");
        }
        out.push_back({m["name"].get<std::string>(), m["host"].get<std::string>(), m["port"].get<std::uint16_t>()});
    }
    return out;
}

json revocations_to_json(const std::vector<net::Revocation>& revoked) {
    json a = json::array();
    for (const auto& r : revoked) a.push_back({{"name", r.name}, {"since", r.since}, {"order", r.order}});
    return a;
}

std::vector<net::Revocation> revocations_from_json(const json& j) {
    if (!j.is_array()) throw InputError("revoked: expected a list");
    std::vector<net::Revocation> out;
    for (const auto& r : j) {
        if (!r.is_object() || !r.contains("name") || !r["name"].is_string() || !r.contains("since") ||
            !r["since"].is_number_integer() || !r.contains("order") || !r["order"].is_string()) {
            throw InputError("revoked: each entry is {name, since, order}");
        }
        out.push_back({r["name"].get<std::string>(), r["since"].get<std::int64_t>(), r["order"].get<std::string>()});
    }
    return out;
}

MemberListChoice choose_member_list(const std::vector<Member>& cluster_file, const std::vector<Member>& stored,
                                    bool cluster_file_newer) {
    MemberListChoice c;
    c.from_cluster_file = cluster_file_newer;
    const auto& win = cluster_file_newer ? cluster_file : stored;
    const auto& other = cluster_file_newer ? stored : cluster_file;
    c.members = win;
    const auto find = [](const std::vector<Member>& ms, const std::string& name) {
        return std::find_if(ms.begin(), ms.end(), [&](const Member& m) { return m.name == name; });
    };
    for (const auto& m : win) {
        const auto o = find(other, m.name);
        if (o == other.end()) {
            c.added.push_back(m.name);
        } else if (o->host != m.host || o->port != m.port) {
            c.moved.push_back(m.name);
        }
    }
    for (const auto& m : other) {
        if (find(win, m.name) == win.end()) c.removed.push_back(m.name);
    }
    return c;
}

std::string describe_member_list_choice(const MemberListChoice& c, const std::string& cluster_file,
                                        const std::string& stored_file) {
    if (c.added.empty() && c.removed.empty() && c.moved.empty()) return {};
    const auto list = [](const std::vector<std::string>& names) {
        std::string out;
        for (const auto& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
        return out;
    };
    std::string line, body;
    const auto part = [&](const char* what, const std::vector<std::string>& names) {
        if (!names.empty()) body += std::string(body.empty() ? "" : "; ") + what + " " + list(names);
    };
    if (c.from_cluster_file) {
        line = "member list: " + cluster_file + " was edited after the last join or leave (" + stored_file +
               "), and wins: ";
        part("added", c.added);
        part("removed", c.removed);
        part("new address for", c.moved);
        line += body;
    } else {
        line = "member list: " + stored_file + " (joins and leaves since " + cluster_file +
               " was last edited) wins over it: ";
        part("joined", c.added);
        part("left", c.removed);
        part("new address for", c.moved);
        line += body + " (edit the cluster file to match; an edit makes it win at the next start or SIGHUP)";
    }
    return line;
}

json samples_to_json(const std::vector<PingSample>& samples) {
    json a = json::array();
    for (const auto& s : samples) a.push_back({s.size, s.sent, s.peer_time, s.received});
    return a;
}

std::vector<PingSample> samples_from_json(const json& j) {
    if (!j.is_array()) throw Error("a ping answer without samples");
    std::vector<PingSample> out;
    for (const auto& s : j) {
        if (!s.is_array() || s.size() != 4 || !std::all_of(s.begin(), s.end(), [](const json& v) { return v.is_number(); })) {
            throw Error("a malformed ping sample");
        }
        out.push_back({s[0].get<double>(), s[1].get<double>(), s[2].get<double>(), s[3].get<double>()});
    }
    return out;
}

}  // namespace hetcast
