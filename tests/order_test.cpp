#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <ctime>
#include <random>

#include "hetcast/error.hpp"
#include "hetcast/runtime/order.hpp"
#include "hetcast/runtime/peer.hpp"
#include "identity.hpp"
#include "temp_dir.hpp"

using namespace hetcast;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::int64_t now = 1'800'000'000;

json pattern_push(const std::string& source, const std::string& file) {
    return {{"cmd", "push"},
            {"algo", "wrp"},
            {"pattern", "- {source: " + source + ", file: " + file + ", dests: all}\n- {source: p0, size: 1KiB, dests: [p1]}\n"}};
}

std::string error_of(const json& order, const std::string& to, std::int64_t at = now,
                     const std::vector<net::Revocation>& revoked = {}) {
    try {
        (void)check_order(order, test::cluster_ca().cert_pem(), revoked, to, at);
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

}  // namespace

TEST_CASE("order: an operator's signed request checks out for the daemon it was given to, and nothing else does") {
    const auto op = test::identity("ops", net::Role::operator_);
    const json signed_req = sign_order(op, pattern_push("p1", "/srv/a.bin"), "p0", now);
    CHECK(error_of(signed_req, "p0").empty());
    CHECK(check_order(signed_req, test::cluster_ca().cert_pem(), {}, "p0", now).name == "ops");
    CHECK(error_of(signed_req, "p0", now + order_lifetime).empty());

    CHECK(error_of(signed_req, "p9").find("given to 'p0', not to 'p9'") != std::string::npos);
    CHECK(error_of(signed_req, "p0", now + order_lifetime + 1).find("too old") != std::string::npos);
    CHECK(error_of(signed_req, "p0", now - 61).find("too old") != std::string::npos);
    CHECK(error_of(signed_req, "p0", now, {{"ops", now, ""}}).find("revoked") != std::string::npos);
    CHECK(error_of(signed_req, "p0", now, {{"ops", net::describe(op).issued - 1, ""}}).empty());  // revoked before it was issued
    CHECK(error_of(pattern_push("p1", "/srv/a.bin"), "p0").find("no operator's order") != std::string::npos);

    // A member's identity signs no orders; nor does another cluster's operator.
    CHECK(error_of(sign_order(test::identity("p0"), pattern_push("p1", "/x"), "p0", now), "p0").find("a member") !=
          std::string::npos);
    CHECK(error_of(sign_order(test::other_ca().issue("ops", net::Role::operator_), pattern_push("p1", "/x"), "p0", now), "p0")
              .find("not issued by this cluster's CA") != std::string::npos);
}

TEST_CASE("order: any change to a signed request or its order breaks the signature (random edits)") {
    const auto op = test::identity("ops", net::Role::operator_);
    const json good = sign_order(op, pattern_push("p1", "/srv/a.bin"), "p0", now);
    std::mt19937 rng(5);
    for (int i = 0; i < 60; ++i) {
        json bad = good;
        switch (rng() % 6) {
            case 0: bad["pattern"] = pattern_push("p1", "/etc/shadow")["pattern"]; break;
            case 1: bad["algo"] = "flat"; break;
            case 2: bad["extra"] = static_cast<int>(rng() % 100); break;
            case 3: bad["order"]["issued"] = now + 1 + static_cast<std::int64_t>(rng() % 30); break;
            // The order object is not itself signed: a key of its own would ride along.
            case 4: bad["order"]["k" + std::to_string(rng() % 100)] = "p1"; break;
            default: {
                std::string sig = bad["order"]["sig"].get<std::string>();
                const std::size_t at = rng() % sig.size();
                sig[at] = sig[at] == '0' ? '1' : '0';
                bad["order"]["sig"] = sig;
            }
        }
        CHECK_FALSE(error_of(bad, "p0").empty());
    }
}

TEST_CASE("order: it names a file for a member only through a pattern entry with that source and file") {
    const json req = pattern_push("p1", "/srv/a.bin");
    CHECK(order_names_file(req, "p1", "/srv/a.bin"));
    CHECK_FALSE(order_names_file(req, "p2", "/srv/a.bin"));
    CHECK_FALSE(order_names_file(req, "p1", "/srv/b.bin"));
    CHECK_FALSE(order_names_file(req, "p0", "/srv/a.bin"));
    CHECK_FALSE(order_names_file({{"cmd", "push"}, {"files", {"/srv/a.bin"}}}, "p1", "/srv/a.bin"));
    CHECK_FALSE(order_names_file({{"pattern", "{not: [a list"}}, "p1", "/srv/a.bin"));
}

TEST_CASE("order: a member reads a served file for another member only under an order naming it") {
    test::TempDir dir;
    fs::create_directories(dir.path / "served");
    const fs::path file = dir.path / "served" / "a.bin";
    std::ofstream(file) << "the served file";
    std::vector<std::unique_ptr<Peer>> peers;
    std::vector<Member> members;
    for (const std::string name : {"p0", "p1"}) {
        PeerConfig c;
        c.name = name;
        c.identity = test::identity(name);
        c.dest_root = dir.path / name;
        c.serve_roots = {dir.path / "served"};
        peers.push_back(std::make_unique<Peer>(c));
        peers.back()->start();
        members.push_back({name, "127.0.0.1", peers.back()->port()});
    }
    for (auto& p : peers) p->set_members(members);
    const std::string origin = "file:" + file.string();
    // p0, a member, asks on its own: refused at p1, which says why.
    CHECK_THROWS_WITH_AS((void)peers[0]->describe("p1", origin), doctest::Contains("only with an operator's order"),
                         InputError);
    const auto op = test::identity("ops", net::Role::operator_);
    const auto t = static_cast<std::int64_t>(std::time(nullptr));
    // An order for another file, or given to another daemon, does not do.
    CHECK_THROWS_AS((void)peers[0]->describe("p1", origin, 0, sign_order(op, pattern_push("p1", "/srv/other"), "p0", t).dump()),
                    InputError);
    CHECK_THROWS_AS((void)peers[0]->describe("p1", origin, 0, sign_order(op, pattern_push("p1", file.string()), "p1", t).dump()),
                    InputError);
    const auto d = peers[0]->describe("p1", origin, 0, sign_order(op, pattern_push("p1", file.string()), "p0", t).dump());
    CHECK(d.size == std::string("the served file").size());
    for (auto& p : peers) p->stop();
}

TEST_CASE("order: a revocation stands only on an operator's leave order for that name and time") {
    const auto op = test::identity("ops", net::Role::operator_);
    const auto t = static_cast<std::int64_t>(std::time(nullptr));
    const json leave = sign_order(op, {{"cmd", "leave"}, {"name", "n3"}}, "n1", t);
    const net::Revocation r = revocation_of(leave, test::cluster_ca().cert_pem(), {}, "n1", t);
    CHECK(r.name == "n3");
    CHECK(r.since == t);
    CHECK_NOTHROW(check_revocation(r, test::cluster_ca().cert_pem()));
    // Years later it still stands (it is history), whoever passes it on.
    CHECK_NOTHROW(check_revocation(r, test::cluster_ca().cert_pem()));

    // Made up or changed by a member: another name, another time, no order, a push order,
    // a member's signature, another cluster's operator.
    CHECK_THROWS_AS(check_revocation({"n4", r.since, r.order}, test::cluster_ca().cert_pem()), InputError);
    CHECK_THROWS_AS(check_revocation({"n3", r.since + 3600, r.order}, test::cluster_ca().cert_pem()), InputError);
    CHECK_THROWS_AS(check_revocation({"n3", r.since, ""}, test::cluster_ca().cert_pem()), InputError);
    const json push = sign_order(op, pattern_push("n3", "/x"), "n1", t);
    CHECK_THROWS_AS(check_revocation({"n3", t, push.dump()}, test::cluster_ca().cert_pem()), InputError);
    CHECK_THROWS_AS((void)revocation_of(push, test::cluster_ca().cert_pem(), {}, "n1", t), InputError);
    const json by_member = sign_order(test::identity("n2"), {{"cmd", "leave"}, {"name", "n3"}}, "n1", t);
    CHECK_THROWS_AS(check_revocation({"n3", t, by_member.dump()}, test::cluster_ca().cert_pem()), InputError);
    const json foreign = sign_order(test::other_ca().issue("ops", net::Role::operator_), {{"cmd", "leave"}, {"name", "n3"}}, "n1", t);
    CHECK_THROWS_AS(check_revocation({"n3", t, foreign.dump()}, test::cluster_ca().cert_pem()), InputError);
    // A leave given to another daemon is not this one's to carry out.
    CHECK_THROWS_AS((void)revocation_of(leave, test::cluster_ca().cert_pem(), {}, "n2", t), InputError);

    // Malformed fields, as a member could pass them on: one InputError, never a JSON exception.
    for (const json& bad : {json("yesterday"), json(1.5), json(nullptr), json::array(), json::object()}) {
        json altered = leave;
        altered["order"]["issued"] = bad;
        CHECK_THROWS_AS(check_revocation({"n3", t, altered.dump()}, test::cluster_ca().cert_pem()), InputError);
    }
    for (const json& bad : {json(7), json("x"), json::array({leave})}) {
        json altered = leave;
        altered["order"] = bad;
        CHECK_THROWS_AS(check_revocation({"n3", t, altered.dump()}, test::cluster_ca().cert_pem()), InputError);
    }
    CHECK_THROWS_AS(check_revocation({"n3", t, json::array({leave}).dump()}, test::cluster_ca().cert_pem()), InputError);
    CHECK_THROWS_AS(check_revocation({"n3", t, "42"}, test::cluster_ca().cert_pem()), InputError);
}
