// The job plan and event codec: round trips over random plans; whatever a peer sends is
// checked and refused with InputError, never trusted.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <random>

#include "hetcast/error.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "hetcast/runtime/tree.hpp"
#include "identity.hpp"

using namespace hetcast;
using json = nlohmann::json;

namespace {

JobPlan random_plan(std::mt19937_64& rng) {
    JobPlan p;
    p.job = rng() >> 1;
    p.algorithm = "algo" + std::to_string(rng() % 10);
    const std::size_t n = 2 + rng() % 6;
    for (std::size_t i = 0; i < n; ++i) {
        p.participants.push_back({"n" + std::to_string(i), "127.0.0." + std::to_string(1 + i),
                                  static_cast<std::uint16_t>(1 + rng() % 65535)});
    }
    p.coordinator = p.participants[rng() % n].name;
    const std::size_t msgs = 1 + rng() % 3;
    for (std::size_t m = 0; m < msgs; ++m) {
        JobMessage jm;
        jm.source = p.participants[rng() % n].name;
        jm.size = rng() % (1ull << 40);
        for (auto& b : jm.sha) b = static_cast<std::byte>(rng());
        jm.name = rng() % 2 ? "" : "dir/file" + std::to_string(m);
        jm.origin = rng() % 2 ? "" : "offer:k" + std::to_string(rng() % 100);
        for (const auto& member : p.participants) {
            if (member.name != jm.source && rng() % 2) jm.dests.push_back(member.name);
        }
        p.messages.push_back(std::move(jm));
    }
    for (std::size_t t = 0; t < rng() % 8; ++t) {
        const Op op = rng() % 2 ? Op::send : Op::recv;
        const double pace = op == Op::send && rng() % 3 == 0 ? 1e3 + static_cast<double>(rng() % 1'000'000'000) / 7.0 : 0.0;
        p.tasks.push_back({op, static_cast<MessageId>(rng() % msgs), p.participants[rng() % n].name, pace});
    }
    p.chunk = 1 + rng() % max_chunk;
    p.retry = rng() % 2 != 0;
    p.bwlimit = rng() % 2 ? 0 : min_bwlimit + rng() % (std::uint64_t{1} << 40);
    if (rng() % 2) {
        p.relay = Relay::cut_through;
        p.piece = min_piece + rng() % (max_piece - min_piece + 1);
        for (auto& m : p.messages) {
            m.size = rng() % (40 * p.piece);
            m.pieces.resize(piece_count(m.size, p.piece));
            for (auto& d : m.pieces) {
                for (auto& b : d) b = static_cast<std::byte>(rng());
            }
        }
    }
    return p;
}

}  // namespace

TEST_CASE("job: a plan survives its JSON round trip (500 random plans)") {
    std::mt19937_64 rng(11);
    for (int i = 0; i < 500; ++i) {
        const JobPlan p = random_plan(rng);
        const JobPlan q = job_plan_from_json(json::parse(to_json(p).dump()), ~std::uint64_t{0});
        CHECK(q.job == p.job);
        CHECK(q.algorithm == p.algorithm);
        CHECK(q.coordinator == p.coordinator);
        CHECK(q.chunk == p.chunk);
        CHECK(q.relay == p.relay);
        CHECK(q.retry == p.retry);
        CHECK(q.bwlimit == p.bwlimit);
        if (p.relay == Relay::cut_through) CHECK(q.piece == p.piece);
        for (std::size_t m = 0; m < p.messages.size() && m < q.messages.size(); ++m) {
            CHECK(q.messages[m].pieces == p.messages[m].pieces);
        }
        CHECK(q.tasks == p.tasks);
        REQUIRE(q.participants.size() == p.participants.size());
        for (std::size_t k = 0; k < p.participants.size(); ++k) {
            CHECK(q.participants[k].name == p.participants[k].name);
            CHECK(q.participants[k].host == p.participants[k].host);
            CHECK(q.participants[k].port == p.participants[k].port);
        }
        REQUIRE(q.messages.size() == p.messages.size());
        for (std::size_t k = 0; k < p.messages.size(); ++k) {
            CHECK(q.messages[k].source == p.messages[k].source);
            CHECK(q.messages[k].size == p.messages[k].size);
            CHECK(q.messages[k].sha == p.messages[k].sha);
            CHECK(q.messages[k].name == p.messages[k].name);
            CHECK(q.messages[k].dests == p.messages[k].dests);
            CHECK(q.messages[k].origin == p.messages[k].origin);
        }
    }
}

TEST_CASE("job: a malformed or hostile plan is refused, never trusted") {
    std::mt19937_64 rng(12);
    const json good = to_json(random_plan(rng));
    const auto refused = [](const json& j, std::uint64_t limit = ~std::uint64_t{0}) {
        CHECK_THROWS_AS((void)job_plan_from_json(j, limit), InputError);
    };
    refused(json::array());
    refused(json("plan"));
    for (const char* key : {"job", "algorithm", "coordinator", "participants", "messages", "tasks", "chunk"}) {
        json j = good;
        j.erase(key);
        refused(j);
        j[key] = json::object({{"x", 1}});
        refused(j);
    }
    json j = good;
    j["chunk"] = 0;
    refused(j);
    j = good;
    j["chunk"] = 1ull << 40;
    refused(j);
    j = good;
    j["coordinator"] = "stranger";
    refused(j);
    j = good;
    j["tasks"] = json::array({{{"op", "send"}, {"message", 99}, {"peer", good["participants"][0]["name"]}}});
    refused(j);
    for (const json& bad : {json(-1.0), json(0.0), json("fast"), json(nullptr)}) {
        j = good;
        j["tasks"] = json::array({{{"op", "send"}, {"message", 0}, {"peer", good["participants"][0]["name"]}, {"pace", bad}}});
        refused(j);
    }
    j = good;
    j["tasks"] = json::array({{{"op", "recv"}, {"message", 0}, {"peer", good["participants"][0]["name"]}, {"pace", 1e6}}});
    refused(j);
    j = good;
    j["tasks"] = json::array({{{"op", "jump"}, {"message", 0}, {"peer", good["participants"][0]["name"]}}});
    refused(j);
    j = good;
    j["tasks"] = json::array({{{"op", "recv"}, {"message", 0}, {"peer", "stranger"}}});
    refused(j);
    j = good;
    j["messages"][0]["sha256"] = "zz";
    refused(j);
    j = good;
    j["messages"][0]["size"] = -1;
    refused(j);
    j = good;
    j["participants"][0]["port"] = 70000;
    refused(j);
    j = good;
    j["participants"].push_back(good["participants"][0]);
    refused(j);
    // A rate limit too low to move a frame in a reasonable time, or not a count.
    for (const json& bad : {json(min_bwlimit - 1), json(-5), json("10MiB/s"), json(1.5)}) {
        json j = good;
        j["bwlimit"] = bad;
        refused(j);
    }
    // Cut-through: the relay mode, the piece size and one digest per piece are checked.
    JobPlan ct = random_plan(rng);
    ct.relay = Relay::cut_through;
    ct.piece = 1 << 20;
    for (auto& m : ct.messages) {
        m.size = 3 << 20;
        m.pieces.assign(3, net::Digest{});
    }
    const json good_ct = to_json(ct);
    CHECK_NOTHROW((void)job_plan_from_json(good_ct, ~std::uint64_t{0}));
    j = good_ct;
    j["relay"] = "teleport";
    refused(j);
    j = good_ct;
    j["piece"] = 100;
    refused(j);
    j = good_ct;
    j["piece"] = max_piece + 1;
    refused(j);
    j = good_ct;
    j["messages"][0]["pieces"].erase(0);
    refused(j);
    j = good_ct;
    j["messages"][0].erase("pieces");
    refused(j);
    j = good_ct;
    j["messages"][0]["pieces"][1] = "not a digest";
    refused(j);
    // More pieces than a plan may carry is refused before the list is read.
    j = good_ct;
    j["piece"] = min_piece;
    j["messages"][0]["size"] = (max_pieces + 1) * min_piece;
    refused(j);
    // A message over the receiver's limit: nothing is allocated for what a peer claims.
    j = good;
    j["messages"][0]["size"] = 1000;
    refused(j, 999);
}

TEST_CASE("job: paces round trip, malformed ones are refused") {
    std::mt19937_64 rng(13);
    for (int i = 0; i < 200; ++i) {
        std::vector<SendPace> p;
        for (std::size_t k = rng() % 5; k > 0; --k) {
            p.push_back({static_cast<MessageId>(rng() % 1000), "n" + std::to_string(rng() % 50),
                         rng() % 4 == 0 ? 0.0 : static_cast<double>(rng() % 10'000'000'000ull) / 3.0});
        }
        CHECK(job_pace_from_json(to_json(p).dump()) == p);
    }
    for (const char* bad : {"", "[]", "{}", "{\"paces\": 1}", "{\"paces\": [1]}",
                            "{\"paces\": [{\"message\": 0, \"to\": \"a\", \"rate\": -1}]}",
                            "{\"paces\": [{\"message\": 0, \"to\": \"a\", \"rate\": \"fast\"}]}",
                            "{\"paces\": [{\"message\": -1, \"to\": \"a\", \"rate\": 1}]}",
                            "{\"paces\": [{\"message\": 0, \"rate\": 1}]}"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS((void)job_pace_from_json(bad), InputError);
    }
}

TEST_CASE("job: events round trip and unknown ones are refused") {
    for (int k = 0; k < 6; ++k) {
        JobEvent e{static_cast<JobEvent::Kind>(k), 12.5 + k, static_cast<MessageId>(k), 4096u * k, "why " + std::to_string(k),
                   11.25 + k, "from " + std::to_string(k), 10.5 + k};
        const JobEvent f = job_event_from_json(json::parse(to_json(e).dump()));
        CHECK(f.kind == e.kind);
        CHECK(f.clock == e.clock);
        if (e.kind == JobEvent::Kind::delivered) CHECK(f.message == e.message);
        if (e.kind == JobEvent::Kind::progress) CHECK(f.bytes == e.bytes);
        if (e.kind == JobEvent::Kind::failed) CHECK(f.error == e.error);
        if (e.kind == JobEvent::Kind::ready) CHECK(f.received == e.received);
        if (e.kind == JobEvent::Kind::hop) {
            CHECK(f.message == e.message);
            CHECK(f.bytes == e.bytes);
            CHECK(f.peer == e.peer);
            CHECK(f.first == e.first);
        }
    }
    CHECK_THROWS_AS((void)job_event_from_json({{"event", "hop"}, {"clock", 1}, {"message", 0}, {"bytes", 5}}), InputError);
    CHECK_THROWS_AS((void)job_event_from_json({{"event", "explode"}, {"clock", 1}}), InputError);
    CHECK_THROWS_AS((void)job_event_from_json({{"event", "delivered"}, {"clock", 1}}), InputError);
    CHECK_THROWS_AS((void)job_event_from_json({{"event", "ready"}, {"clock", "noon"}}), InputError);
    CHECK_THROWS_AS((void)job_event_from_json(json::array()), InputError);
}

TEST_CASE("job: a ready event's resumes and a start's resumes round trip, malformed ones are refused") {
    std::mt19937_64 rng(31);
    for (int i = 0; i < 200; ++i) {
        JobEvent e{JobEvent::Kind::ready, 1.5, 0, 0, {}, 1.25};
        JobStart s;
        for (std::uint64_t k = rng() % 4; k > 0; --k) {
            e.resume.emplace_back(static_cast<MessageId>(rng() % 1000), rng() >> 1);
            s.resume.push_back({static_cast<MessageId>(rng() % 1000), "n" + std::to_string(rng() % 50), rng() >> 1});
        }
        CHECK(job_event_from_json(json::parse(to_json(e).dump())).resume == e.resume);
        CHECK(job_start_from_json(to_json(s).dump()).resume == s.resume);
    }
    CHECK(job_start_from_json("").resume.empty());
    for (const char* bad : {"[]", "{\"resume\": 3}", "{\"resume\": [{\"message\": -1, \"to\": \"a\", \"offset\": 1}]}",
                            "{\"resume\": [{\"message\": 1, \"to\": 2, \"offset\": 1}]}", "{\"resume\": [{\"message\": 1}]}",
                            "{\"resume\": [{\"message\": 99999999999, \"to\": \"a\", \"offset\": 1}]}", "not json"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS((void)job_start_from_json(bad), InputError);
    }
    for (const char* bad : {R"({"event":"ready","clock":1,"resume":3})", R"({"event":"ready","clock":1,"resume":[[1]]})",
                            R"({"event":"ready","clock":1,"resume":[[-1,2]]})", R"({"event":"ready","clock":1,"resume":[["a",2]]})"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS((void)job_event_from_json(json::parse(bad)), InputError);
    }
}

TEST_CASE("job plan: the largest manifest a source sends fits one frame with the most digests and the order") {
    // Symlinks whose targets JSON escapes six-fold: the manifest reaches its limit in few entries.
    const auto tree_near = [](std::size_t limit) {
        TreeEntry e;
        e.kind = TreeEntry::Kind::symlink;
        e.mode = 0777;
        e.target = std::string(4000, '\x01');
        e.path = "l000000";
        const std::size_t each = tree_to_json({e}).dump().size() - 1;  // one entry and its comma
        std::vector<TreeEntry> tree((limit - 2) / each, e);
        for (std::size_t i = 0; i < tree.size(); ++i) tree[i].path = "l" + std::to_string(100000 + i);
        const std::size_t text = tree_to_json(tree).dump().size();
        CHECK(text <= limit);
        CHECK(text + each > limit);
        return tree;
    };
    const auto digests = [](std::size_t n) {
        std::vector<net::Digest> d(n);
        for (std::size_t i = 0; i < n; ++i) d[i][i % d[i].size()] = std::byte{1};
        return d;
    };
    const auto plan = [](std::vector<TreeEntry> tree, std::vector<net::Digest> pieces, json request) {
        JobPlan p;
        p.job = 1;
        p.algorithm = "chain";
        for (const char* n : {"member-01", "member-02", "member-03", "member-04"}) p.participants.push_back({n, "10.0.0.1", 7355});
        p.coordinator = "member-01";
        p.relay = Relay::cut_through;
        p.piece = 4096;
        JobMessage m;
        m.source = "member-01";
        m.size = pieces.size() * p.piece;
        m.name = "landing";
        m.dests = {"member-02", "member-03", "member-04"};
        m.tree = std::move(tree);
        m.pieces = std::move(pieces);
        p.messages.push_back(std::move(m));
        p.tasks = {{Op::recv, 0, "member-01"}, {Op::send, 0, "member-03"}};
        const auto op = test::identity("operator", net::Role::operator_);
        p.order = sign_order(op, std::move(request), "member-01", 1'800'000'000).dump();
        return to_json(p).dump().size();
    };
    const json push{{"cmd", "push"}, {"files", {"/srv/data/tree"}}, {"recursive", true}, {"algo", "chain"},
                    {"dest", "landing"}, {"to", json::array()}};
    CHECK(plan(tree_near(max_manifest_bytes), digests(max_pieces), push) <= max_frame_payload);
    // An upload's order is its request: the manifest and the digests again.
    const auto tree = tree_near(max_upload_manifest_bytes);
    json upload = push;
    upload["tree"] = tree_to_json(tree);
    json hex = json::array();
    for (const auto& d : digests(32768)) hex.push_back(net::to_hex(d));
    upload["upload"] = {{"size", 32768ull << 21}, {"sha256", std::string(64, '0')}, {"piece", 2u << 20}, {"pieces", hex}};
    CHECK(plan(tree, digests(32768), upload) <= max_frame_payload);
}
