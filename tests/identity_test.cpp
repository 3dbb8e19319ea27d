#include <doctest/doctest.h>

#include <ctime>
#include <random>
#include <set>

#include "hetcast/error.hpp"
#include "hetcast/net/identity.hpp"
#include "identity.hpp"

using namespace hetcast;
using namespace hetcast::net;

TEST_CASE("identity: what the CA issues names its holder and role, and reads back from its file text") {
    const auto now = static_cast<std::int64_t>(std::time(nullptr));
    std::set<std::string> serials;
    for (const auto role : {Role::member, Role::operator_}) {
        for (const std::string& name : {std::string("n1"), std::string("ws-07.lab"), std::string(64, 'x')}) {
            const Identity id = test::identity(name, role);
            const PeerIdentity p = describe(id);
            CHECK(p.name == name);
            CHECK(p.role == role);
            // Issued a minute back (clocks a little behind), not more.
            CHECK(p.issued <= now - 59);
            CHECK(p.issued >= now - 120);
            CHECK(serials.insert(p.serial).second);
            const Identity back = parse_identity(identity_pem(id), "f.pem");
            CHECK(back.key_pem == id.key_pem);
            CHECK(back.cert_pem == id.cert_pem);
            CHECK(back.ca_pem == test::cluster_ca().cert_pem());
        }
    }
}

TEST_CASE("identity: names a certificate cannot carry are refused before anything is made") {
    for (const std::string& bad : {std::string(), std::string(65, 'a'), std::string("a b"), std::string("tab\there"),
                                  std::string("caf\xc3\xa9")}) {
        CHECK_THROWS_AS((void)test::identity(bad), InputError);
    }
}

TEST_CASE("identity: a CA file reads back and issues identities the first CA's certificate verifies") {
    const ClusterCa ca = ClusterCa::create("lab");
    const ClusterCa back = ClusterCa::parse(ca.pem(), "ca.pem");
    CHECK(back.cert_pem() == ca.cert_pem());
    const Identity id = back.issue("n1", Role::member);
    CHECK(id.ca_pem == ca.cert_pem());
    CHECK_NOTHROW((void)parse_identity(identity_pem(id), "n1.pem"));
    // A member's identity file is not a CA file, and a CA's key with another CA's certificate is refused.
    CHECK_THROWS_AS((void)ClusterCa::parse(identity_pem(id), "n1.pem"), InputError);
    const ClusterCa other = ClusterCa::create("other");
    const std::string key = ca.pem().substr(0, ca.pem().find("-----BEGIN CERTIFICATE"));
    CHECK_THROWS_WITH_AS((void)ClusterCa::parse(key + other.cert_pem(), "mixed.pem"),
                         doctest::Contains("do not belong together"), InputError);
}

TEST_CASE("identity: a damaged file never passes, whichever byte is changed") {
    const std::string text = identity_pem(test::identity("n1"));
    std::mt19937 rng(15);
    int refused = 0;
    for (int i = 0; i < 200; ++i) {
        std::string t = text;
        const std::size_t at = rng() % t.size();
        const char was = t[at];
        t[at] = static_cast<char>(t[at] ^ static_cast<char>(1 + rng() % 255));
        try {
            const Identity id = parse_identity(t, "f.pem");
            // A change PEM cannot see (a byte of a header line, base64 it skips) leaves the
            // key, the certificate and the CA exactly as they were, or is refused.
            CHECK(describe(id).name == "n1");
        } catch (const InputError& e) {
            ++refused;
            CHECK(std::string(e.what()).find("f.pem: ") == 0);
        }
        (void)was;
    }
    CHECK(refused > 150);
}

TEST_CASE("identity: a revocation covers certificates issued up to its time, not later ones") {
    PeerIdentity p{"n3", Role::member, 1000, "AB", 0};
    CHECK(revokes({"n3", 1000, ""}, p));
    CHECK(revokes({"n3", 5000, ""}, p));
    CHECK_FALSE(revokes({"n3", 999, ""}, p));
    CHECK_FALSE(revokes({"n4", 5000, ""}, p));
}
