// Identities revoked in the cluster (lib/src/runtime/cluster/revocations.hpp, internal):
// each revocation is held once, in the order it came, and revokes the identities of its
// name issued no later than it.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "../lib/src/runtime/cluster/revocations.hpp"

using hetcast::detail::RevocationList;
using hetcast::net::PeerIdentity;
using hetcast::net::Revocation;

TEST_CASE("revocation list: random adds keep each revocation once, and only those revoke") {
    for (unsigned seed = 1; seed <= 30; ++seed) {
        std::mt19937 rng(seed);
        RevocationList l;
        std::vector<Revocation> model;
        for (int step = 0; step < 100; ++step) {
            std::vector<Revocation> batch;
            for (unsigned k = rng() % 4; k > 0; --k) {
                batch.push_back(Revocation{"m" + std::to_string(rng() % 4), static_cast<std::int64_t>(rng() % 5), "order"});
            }
            std::vector<Revocation> want;
            for (const auto& r : batch) {
                if (std::find(model.begin(), model.end(), r) == model.end()) {
                    model.push_back(r);
                    want.push_back(r);
                }
            }
            CHECK(l.add(batch) == want);
            REQUIRE(l.all() == model);
            PeerIdentity who;
            who.name = "m" + std::to_string(rng() % 5);
            who.issued = static_cast<std::int64_t>(rng() % 6);
            const auto got = l.revoking(who);
            const auto it = std::find_if(model.begin(), model.end(), [&](const Revocation& r) { return hetcast::net::revokes(r, who); });
            REQUIRE(got.has_value() == (it != model.end()));
            if (got) CHECK(*got == *it);
        }
    }
}
