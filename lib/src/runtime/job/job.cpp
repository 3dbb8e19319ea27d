#include "hetcast/runtime/job.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>

#include "hetcast/error.hpp"
#include "hetcast/runtime/byte_text.hpp"
#include "hetcast/runtime/pieces.hpp"

namespace hetcast {
namespace {

using json = nlohmann::json;

const json& field(const json& j, const char* key) {
    if (!j.is_object()) throw InputError("job: expected an object");
    const auto it = j.find(key);
    if (it == j.end()) throw InputError(std::string("job: missing field '") + key + "'");
    return *it;
}

std::string text(const json& j, const char* key) {
    const json& v = field(j, key);
    if (!v.is_string()) throw InputError(std::string("job: '") + key + "' must be a string");
    return v.get<std::string>();
}

std::uint64_t count(const json& j, const char* key) {
    const json& v = field(j, key);
    if (!v.is_number_unsigned()) throw InputError(std::string("job: '") + key + "' must be a non-negative integer");
    return v.get<std::uint64_t>();
}

double number(const json& j, const char* key) {
    const json& v = field(j, key);
    if (!v.is_number()) throw InputError(std::string("job: '") + key + "' must be a number");
    return v.get<double>();
}

const json& array(const json& j, const char* key) {
    const json& v = field(j, key);
    if (!v.is_array()) throw InputError(std::string("job: '") + key + "' must be a list");
    return v;
}

}  // namespace

std::vector<JobTask> tasks_of(const Schedule& schedule, const std::vector<std::string>& names, NodeId node,
                              const std::vector<Pace>& paces) {
    std::vector<JobTask> out;
    for (const Task& t : schedule.tasks.at(node)) {
        double pace = 0;
        if (t.op == Op::send) {
            for (const Pace& p : paces) {
                if (p.message == t.message && p.from == node && p.to == t.peer) pace = p.rate;
            }
        }
        out.push_back({t.op, t.message, names.at(t.peer), pace});
    }
    return out;
}

json to_json(const JobPlan& p) {
    json members = json::array();
    for (const auto& m : p.participants) members.push_back({{"name", m.name}, {"host", m.host}, {"port", m.port}});
    json messages = json::array();
    for (const auto& m : p.messages) {
        json jm{{"source", m.source}, {"size", m.size},   {"sha256", net::to_hex(m.sha)},
                {"name", bytes_to_json(m.name)}, {"dests", m.dests}, {"origin", m.origin}, {"mode", m.mode}};
        if (m.preserve) jm["preserve"] = true;
        if (m.mtime) jm["mtime"] = *m.mtime;
        if (!m.tree.empty()) jm["tree"] = tree_to_json(m.tree);
        if (m.owner) jm["owner"] = true;
        if (p.relay == Relay::cut_through) {
            json pieces = json::array();
            for (const auto& d : m.pieces) pieces.push_back(net::to_hex(d));
            jm["pieces"] = std::move(pieces);
        }
        messages.push_back(std::move(jm));
    }
    json tasks = json::array();
    for (const auto& t : p.tasks) {
        json jt{{"op", t.op == Op::send ? "send" : "recv"}, {"message", t.message}, {"peer", t.peer}};
        if (t.pace > 0) jt["pace"] = t.pace;
        tasks.push_back(std::move(jt));
    }
    json out{{"job", p.job},           {"algorithm", p.algorithm}, {"coordinator", p.coordinator},
             {"participants", members}, {"messages", messages},   {"tasks", tasks},
             {"chunk", p.chunk}};
    if (p.relay == Relay::cut_through) {
        out["relay"] = "cut-through";
        out["piece"] = p.piece;
    }
    if (p.retry) out["retry"] = true;
    if (p.bwlimit > 0) out["bwlimit"] = p.bwlimit;
    if (!p.order.empty()) out["order"] = json::parse(p.order);
    return out;
}

JobPlan job_plan_from_json(const json& j, std::uint64_t max_message) {
    JobPlan p;
    p.job = count(j, "job");
    p.algorithm = text(j, "algorithm");
    p.coordinator = text(j, "coordinator");
    p.chunk = count(j, "chunk");
    if (p.chunk == 0 || p.chunk > max_chunk) throw InputError("job: chunk must be 1 byte to 8 MiB");
    // Plans without "relay" (from before cut-through) store and forward.
    if (j.contains("relay")) {
        const std::string relay = text(j, "relay");
        if (relay == "cut-through") p.relay = Relay::cut_through;
        else if (relay != "store-and-forward") throw InputError("job: relay must be cut-through or store-and-forward");
    }
    if (j.contains("order")) {
        if (!j["order"].is_object()) throw InputError("job: order must be an object");
        p.order = j["order"].dump();
    }
    if (j.contains("retry")) {
        if (!j["retry"].is_boolean()) throw InputError("job: retry must be true or false");
        p.retry = j["retry"].get<bool>();
    }
    if (j.contains("bwlimit")) {
        p.bwlimit = count(j, "bwlimit");
        if (p.bwlimit < min_bwlimit) throw InputError("job: bwlimit must be at least 1 KiB/s");
    }
    if (p.relay == Relay::cut_through) {
        p.piece = count(j, "piece");
        if (p.piece < min_piece || p.piece > max_piece) throw InputError("job: piece must be 4 KiB to 8 MiB");
    }
    std::set<std::string> names;
    for (const json& m : array(j, "participants")) {
        Member mem{text(m, "name"), text(m, "host"), 0};
        const std::uint64_t port = count(m, "port");
        if (port == 0 || port > 65535) throw InputError("job: bad port for '" + mem.name + "'");
        mem.port = static_cast<std::uint16_t>(port);
        if (!names.insert(mem.name).second) throw InputError("job: participant '" + mem.name + "' listed twice");
        p.participants.push_back(std::move(mem));
    }
    if (!names.count(p.coordinator)) throw InputError("job: the coordinator is not a participant");
    const auto known = [&](const std::string& n) {
        if (!names.count(n)) throw InputError("job: '" + n + "' is not a participant");
        return n;
    };
    for (const json& m : array(j, "messages")) {
        JobMessage msg;
        msg.source = known(text(m, "source"));
        msg.size = count(m, "size");
        if (msg.size > max_message) {
            throw InputError("job: a message of " + std::to_string(msg.size) + " bytes is over the limit of " +
                             std::to_string(max_message));
        }
        msg.sha = digest_from_hex(text(m, "sha256"));
        if (!m.contains("name")) throw InputError("job: a message has no 'name'");
        msg.name = bytes_from_json(m["name"], "job: a message's 'name'");
        msg.origin = text(m, "origin");
        if (m.contains("mode")) {
            const std::uint64_t mode = count(m, "mode");
            if (mode > 0777) throw InputError("job: a mode has only permission bits (0 to 0777)");
            msg.mode = static_cast<unsigned>(mode);
        }
        if (m.contains("preserve")) {
            if (!m["preserve"].is_boolean()) throw InputError("job: preserve must be true or false");
            msg.preserve = m["preserve"].get<bool>();
        }
        if (m.contains("owner")) {
            if (!m["owner"].is_boolean()) throw InputError("job: owner must be true or false");
            msg.owner = m["owner"].get<bool>();
        }
        if (m.contains("mtime")) {
            if (!m["mtime"].is_number_integer()) throw InputError("job: mtime must be an integer");
            msg.mtime = m["mtime"].get<std::int64_t>();
        }
        if (m.contains("tree")) {
            if (msg.name.empty()) throw InputError("job: a tree needs a landing directory as its name");
            msg.tree = tree_from_json(m["tree"], msg.size);
            if (msg.tree.empty()) throw InputError("job: a tree has at least one entry");
        }
        if (p.relay == Relay::cut_through) {
            if (piece_count(msg.size, p.piece) > max_pieces) {
                throw InputError("job: a message of " + std::to_string(msg.size) + " bytes has more than " +
                                 std::to_string(max_pieces) + " pieces");
            }
            const json& pieces = array(m, "pieces");
            if (pieces.size() != piece_count(msg.size, p.piece)) {
                throw InputError("job: a message of " + std::to_string(msg.size) + " bytes needs " +
                                 std::to_string(piece_count(msg.size, p.piece)) + " piece digests");
            }
            for (const json& d : pieces) {
                if (!d.is_string()) throw InputError("job: pieces must be sha256 digests");
                msg.pieces.push_back(digest_from_hex(d.get<std::string>()));
            }
        }
        for (const json& d : array(m, "dests")) {
            if (!d.is_string()) throw InputError("job: dests must be names");
            // A member's plan lists only the participants it deals with: a destination is a name.
            if (d.get_ref<const std::string&>().empty()) throw InputError("job: a dest has no name");
            msg.dests.push_back(d.get<std::string>());
        }
        p.messages.push_back(std::move(msg));
    }
    for (const json& t : array(j, "tasks")) {
        const std::string op = text(t, "op");
        if (op != "send" && op != "recv") throw InputError("job: a task's op must be send or recv");
        const std::uint64_t m = count(t, "message");
        if (m >= p.messages.size()) throw InputError("job: a task names an unknown message");
        double pace = 0;
        if (t.contains("pace")) {
            pace = number(t, "pace");
            if (!(pace > 0) || !std::isfinite(pace) || op != "send") {
                throw InputError("job: a task's pace must be a positive number of bytes/s, on a send");
            }
        }
        p.tasks.push_back({op == "send" ? Op::send : Op::recv, static_cast<MessageId>(m), known(text(t, "peer")), pace});
    }
    return p;
}

json to_json(const JobEvent& e) {
    static const char* names[] = {"ready", "delivered", "progress", "done", "failed", "hop"};
    json j{{"event", names[static_cast<int>(e.kind)]}, {"clock", e.clock}};
    if (e.kind == JobEvent::Kind::ready) {
        j["received"] = e.received;
        if (!e.resume.empty()) {
            json r = json::array();
            for (const auto& [m, bytes] : e.resume) r.push_back({m, bytes});
            j["resume"] = std::move(r);
        }
    }
    if (e.kind == JobEvent::Kind::delivered || e.kind == JobEvent::Kind::hop) j["message"] = e.message;
    if (e.kind == JobEvent::Kind::hop) {
        j["bytes"] = e.bytes;
        j["from"] = e.peer;
        j["first"] = e.first;
    }
    if (e.kind == JobEvent::Kind::progress) j["bytes"] = e.bytes;
    if (e.kind == JobEvent::Kind::failed) j["error"] = e.error;
    return j;
}

JobEvent job_event_from_json(const json& j) {
    JobEvent e;
    const std::string kind = text(j, "event");
    e.clock = number(j, "clock");
    if (kind == "ready") {
        e.kind = JobEvent::Kind::ready;
        e.received = j.contains("received") ? number(j, "received") : e.clock;
        if (const auto it = j.find("resume"); it != j.end()) {
            if (!it->is_array()) throw InputError("job: 'resume' must be a list");
            for (const auto& r : *it) {
                if (!r.is_array() || r.size() != 2 || !r[0].is_number_unsigned() || !r[1].is_number_unsigned() ||
                    r[0].get<std::uint64_t>() > 0xffffffffu) {
                    throw InputError("job: a resume entry must be [message, bytes]");
                }
                e.resume.emplace_back(static_cast<MessageId>(r[0].get<std::uint64_t>()), r[1].get<std::uint64_t>());
            }
        }
    } else if (kind == "delivered") {
        e.kind = JobEvent::Kind::delivered;
        const std::uint64_t m = count(j, "message");
        if (m > 0xffffffffu) throw InputError("job: message id out of range");
        e.message = static_cast<MessageId>(m);
    } else if (kind == "hop") {
        e.kind = JobEvent::Kind::hop;
        const std::uint64_t m = count(j, "message");
        if (m > 0xffffffffu) throw InputError("job: message id out of range");
        e.message = static_cast<MessageId>(m);
        e.bytes = count(j, "bytes");
        e.peer = text(j, "from");
        e.first = number(j, "first");
    } else if (kind == "progress") {
        e.kind = JobEvent::Kind::progress;
        e.bytes = count(j, "bytes");
    } else if (kind == "done") {
        e.kind = JobEvent::Kind::done;
    } else if (kind == "failed") {
        e.kind = JobEvent::Kind::failed;
        e.error = text(j, "error");
    } else {
        throw InputError("job: unknown event '" + kind.substr(0, 20) + "'");
    }
    return e;
}

json to_json(const JobStart& s) {
    json r = json::array();
    for (const auto& x : s.resume) r.push_back({{"message", x.message}, {"to", x.to}, {"offset", x.offset}});
    return {{"resume", std::move(r)}};
}

json to_json(const std::vector<SendPace>& paces) {
    json list = json::array();
    for (const auto& p : paces) list.push_back({{"message", p.message}, {"to", p.to}, {"rate", p.rate}});
    return json{{"paces", std::move(list)}};
}

std::vector<SendPace> job_pace_from_json(std::string_view payload) {
    const json j = json::parse(payload, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw InputError("job: a pace must be a JSON object");
    std::vector<SendPace> out;
    for (const auto& p : array(j, "paces")) {
        if (!p.is_object()) throw InputError("job: a pace entry must be an object");
        const std::uint64_t m = count(p, "message");
        if (m > 0xffffffffu) throw InputError("job: message id out of range");
        const double rate = number(p, "rate");
        if (!(rate >= 0) || !std::isfinite(rate)) throw InputError("job: a pace's rate must be bytes/s, 0 or more");
        out.push_back({static_cast<MessageId>(m), text(p, "to"), rate});
    }
    return out;
}

JobStart job_start_from_json(std::string_view payload) {
    JobStart s;
    if (payload.empty()) return s;
    const json j = json::parse(payload, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw InputError("job: a start must be a JSON object");
    const auto it = j.find("resume");
    if (it == j.end()) return s;
    if (!it->is_array()) throw InputError("job: 'resume' must be a list");
    for (const auto& r : *it) {
        if (!r.is_object()) throw InputError("job: a resume entry must be an object");
        const std::uint64_t m = count(r, "message");
        if (m > 0xffffffffu) throw InputError("job: message id out of range");
        s.resume.push_back({static_cast<MessageId>(m), text(r, "to"), count(r, "offset")});
    }
    return s;
}

}  // namespace hetcast
