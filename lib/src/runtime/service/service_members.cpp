// The member list: which one a daemon starts with (the cluster file or members.yaml), joins
// (through seeds, retried while none answers) and leaves, telling the others, and
// revocations. The map's changes with it: service_member_map.cpp.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/membership.hpp"
#include "hetcast/runtime/order.hpp"
#include "service_member_map.hpp"
#include "service_members.hpp"

namespace hetcast {
namespace fs = std::filesystem;
using namespace detail;

namespace {

/// A change every other member is told of: `missed` could not be.
json told(const std::vector<std::string>& missed) {
    return {{"ok", missed.empty()}, {"not_updated", missed},
            {"error", missed.empty() ? "" : "some members could not be told"}};
}

}  // namespace

void MemberList::revoke_ordered(const json& req) {
    add_revocations({revocation_of(req, core_.peer->identity().ca_pem, core_.peer->revoked(), core_.cfg.name,
                                   static_cast<std::int64_t>(std::time(nullptr)))});
}

void MemberList::add_revocations(const std::vector<net::Revocation>& revoked) {
    const auto known = core_.peer->revoked();
    std::vector<net::Revocation> checked;
    for (const auto& r : revoked) {
        if (std::find(known.begin(), known.end(), r) != known.end()) continue;
        try {
            check_revocation(r, core_.peer->identity().ca_pem);
            checked.push_back(r);
        } catch (const InputError& e) {
            core_.say(LogLevel::warn, std::string("ignored a revocation: ") + e.what());
        }
    }
    if (checked.empty()) return;
    core_.peer->revoke(checked);
    save_revoked(core_.revoked_file(), core_.peer->revoked());
}

std::vector<Member> MemberList::read_member_list() {
    const bool stored = fs::exists(core_.members_file());
    if (!core_.cfg.cluster_file) return stored ? load_cluster(core_.members_file()) : std::vector<Member>{};
    std::vector<Member> file = load_cluster(*core_.cfg.cluster_file);
    if (!stored) return file;
    std::error_code ec;
    const bool edited = fs::last_write_time(*core_.cfg.cluster_file, ec) > fs::last_write_time(core_.members_file(), ec) && !ec;
    const MemberListChoice c = choose_member_list(file, load_cluster(core_.members_file()), edited);
    if (const std::string line = describe_member_list_choice(c, core_.cfg.cluster_file->string(), core_.members_file().string());
        !line.empty()) {
        core_.say(LogLevel::warn, line);
        // The cluster file won: members.yaml follows it, so that the next start says nothing.
        if (c.from_cluster_file) save_cluster(core_.members_file(), c.members);
    }
    return c.members;
}

void MemberList::set_members(std::vector<Member> ms) {
    save_cluster(core_.members_file(), ms);
    core_.peer->set_members(ms);
    std::lock_guard lock(core_.mu);
    core_.members = std::move(ms);
}

/// Tells every other member the new member list and map; who could not be told.
std::vector<std::string> MemberList::distribute(const std::vector<Member>& ms, const std::string* map_text,
                                                   const json& order) {
    std::vector<std::string> missed;
    for (const auto& m : ms) {
        if (m.name == core_.cfg.name) continue;
        try {
            json a = core_.peer->call(m.name,
                                {{"cmd", "set_members"},
                                 {"members", members_to_json(ms)},
                                 {"revoked", revocations_to_json(core_.peer->revoked())},
                                 {"order", order}},
                                call_timeout);
            if (a.value("ok", false) && map_text) {
                a = core_.peer->call(m.name, {{"cmd", "set_map"}, {"map", *map_text}, {"order", order}}, call_timeout);
            }
            if (!a.value("ok", false)) missed.push_back(m.name);
        } catch (const std::exception& e) {
            core_.say(LogLevel::warn, "could not update '" + m.name + "': " + e.what());
            missed.push_back(m.name);
        }
    }
    return missed;
}

/// A new member at the door: it joins the member list, is measured, and the map gains its
/// row and column; everyone is told. On a probed map (subnets and capacities) against a
/// representative of each subnet (measure_join); else every member pings it and ECO 4.1
/// runs again.
json MemberList::join(const json& req) {
    const Member joiner{field<std::string>(req, "name", ""), field<std::string>(req, "host", ""),
                        field<std::uint16_t>(req, "port", 0)};
    if (joiner.name.empty() || joiner.host.empty() || joiner.port == 0) throw InputError("join: name, host, port");
    std::vector<Member> ms = core_.current_members();
    ms.erase(std::remove_if(ms.begin(), ms.end(), [&](const Member& m) { return m.name == joiner.name; }), ms.end());
    if (std::none_of(ms.begin(), ms.end(), [&](const Member& m) { return m.name == core_.cfg.name; })) {
        ms.insert(ms.begin(), Member{core_.cfg.name, core_.cfg.host, core_.port()});
    }
    ms.push_back(joiner);
    set_members(ms);
    core_.say(LogLevel::info, "'" + joiner.name + "' joins from " + joiner.host + ":" + std::to_string(joiner.port));
    (void)distribute(ms, nullptr, req);  // the others must know its address to measure it
    std::vector<std::string> names;
    for (const auto& m : ms) names.push_back(m.name);
    const auto old = core_.current_map();
    const std::optional<MeasuredJoin> mj = subnet_join(probes_.probe_link(), old, names, joiner.name, req, core_.cfg.tolerance,
                                                       [this](const std::string& line) { core_.say(LogLevel::warn, line); });
    // The new map, here and on every member: what the join answers.
    const auto joined = [&](const std::string& text) {
        core_.set_map(text);
        const auto missed = distribute(ms, &text, req);
        return json{{"ok", true},
                    {"members", members_to_json(ms)},
                    {"revoked", revocations_to_json(core_.peer->revoked())},
                    {"map", text},
                    {"not_updated", missed}};
    };
    if (mj) {
        const auto& j = mj->result;
        core_.say(LogLevel::info, "'" + joiner.name + "' measured against " + std::to_string(mj->pinged) + " subnets (" +
                                std::to_string(j.measurements) + " measurements): subnet " + std::to_string(j.subnet + 1) +
                                (j.doubt.empty() ? "" : " (" + j.doubt + ")"));
        json out = joined(format_network(mj->network, utc_now()));
        out["joined"] = {{"subnet", j.subnet}, {"measurements", j.measurements}, {"doubt", j.doubt}};
        return out;
    }
    const Network net = pinged_join(probes_.probe_link(), *core_.peer, old, names, joiner.name, req, core_.cfg.name,
                                    core_.cfg.tolerance);
    return joined(format_network(net, utc_now()));
}

json MemberList::leave(const json& req) {
    const std::string name = field<std::string>(req, "name", "");
    std::vector<Member> ms = core_.current_members();
    const auto before = ms.size();
    ms.erase(std::remove_if(ms.begin(), ms.end(), [&](const Member& m) { return m.name == name; }), ms.end());
    if (ms.size() == before) throw InputError("'" + name + "' is not a member");
    if (name == core_.cfg.name) throw InputError("'" + name + "' coordinates this leave: ask another member (--from)");
    // Its identity is refused from now on, here and (with the member list) everywhere:
    // certificates for it issued up to the operator's order no longer connect. The order
    // goes with the revocation, so that every member can check it.
    revoke_ordered(req);
    set_members(ms);
    std::optional<std::string> text;
    if (const auto old = core_.current_map(); old && old->find(name)) {
        text = format_network(restricted(*old, ms, core_.cfg.tolerance), utc_now());
        core_.set_map(*text);
    }
    const auto missed = distribute(ms, text ? &*text : nullptr, req);
    core_.say(LogLevel::info, "'" + name + "' left the cluster");
    return told(missed);
}

json MemberList::revoke_operator(const json& req, const std::string& by) {
    const std::string name = field<std::string>(req, "name", "");
    net::check_identity_name(name);
    if (name == by) throw InputError("'" + name + "' cannot revoke its own identity: another operator must");
    const std::vector<Member> ms = core_.current_members();
    if (std::any_of(ms.begin(), ms.end(), [&](const Member& m) { return m.name == name; })) {
        throw InputError("'" + name + "' is a member: hetcast leave " + name);
    }
    revoke_ordered(req);
    core_.say(LogLevel::info, "the operator identity '" + name + "' was revoked by '" + by + "'");
    const auto missed = distribute(ms, nullptr, req);
    return told(missed);
}

/// Joins through the first seed that answers; the member list and map come back. Empty
/// when joined, else why the last seed failed.
std::string MemberList::join_through_seeds() {
    std::string why;
    for (const auto& seed : core_.cfg.seeds) {
        const auto colon = seed.rfind(':');
        const std::string host = seed.substr(0, colon);
        const auto seed_port = static_cast<std::uint16_t>(std::stoul(seed.substr(colon + 1)));
        try {
            const json req = sign_join(core_.peer->identity(),
                                       {{"cmd", "join"}, {"name", core_.cfg.name},
                                        {"host", core_.cfg.host == "0.0.0.0" ? "127.0.0.1" : core_.cfg.host}, {"port", core_.port()}},
                                       static_cast<std::int64_t>(std::time(nullptr)));
            const auto [a, seed_name] = core_.peer->call_at(host, seed_port, req, std::chrono::minutes(2));
            if (!a.value("ok", false)) throw Error(a.value("error", std::string("refused")));
            set_members(members_from_json(a.at("members")));
            if (a.contains("revoked")) add_revocations(revocations_from_json(a["revoked"]));
            core_.set_map(a.at("map").get<std::string>());
            core_.say(LogLevel::info, "joined the cluster through '" + seed_name + "' (" + seed + ")");
            return {};
        } catch (const std::exception& e) {
            why = seed + ": " + e.what();
        }
    }
    return why;
}

/// The first machine of a lab to boot finds no seed up: it serves alone meanwhile (with the
/// member list it has) and tries again, waiting twice as long each time, up to a minute.
void MemberList::keep_joining() {
    auto wait = std::chrono::seconds(1);
    constexpr auto longest = std::chrono::seconds(60);
    for (;;) {
        const std::string why = join_through_seeds();
        if (why.empty()) return;
        core_.say(LogLevel::warn, "cannot join through any seed yet (" + why + "); serving meanwhile, trying again in " +
                                std::to_string(wait.count()) + " s");
        std::unique_lock lock(seed_mu);
        if (seed_cv.wait_for(lock, wait, [this] { return seed_stop || !listed_by.empty(); })) {
            if (!seed_stop) core_.say(LogLevel::info, "joined the cluster through '" + listed_by + "' (an operator's join)");
            return;
        }
        wait = std::min(wait * 2, longest);
    }
}

void MemberList::start_joining() {
    if (!core_.cfg.seeds.empty()) seeder = std::thread([this] { keep_joining(); });
}

void MemberList::stop_joining() {
    {
        std::lock_guard lock(seed_mu);
        seed_stop = true;
    }
    seed_cv.notify_all();
}

void MemberList::join_seeder() {
    if (seeder.joinable()) seeder.join();
}

void MemberList::listed_by_member(const std::string& from) {
    std::lock_guard lock(seed_mu);
    if (listed_by.empty()) listed_by = from;
    seed_cv.notify_all();
}

}  // namespace hetcast
