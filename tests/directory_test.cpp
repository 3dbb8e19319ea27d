// The members a peer knows and the control connection kept with each
// (lib/src/runtime/wire/directory.hpp, internal): a new member list forgets, and hands back
// to close, exactly the connections of members that left or moved; a closed connection is
// forgotten only if it is the one kept.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>

#include "../lib/src/runtime/wire/directory.hpp"

using hetcast::Member;
using hetcast::detail::MemberDirectory;

namespace {

// A connection the directory only keeps and compares: never used.
hetcast::net::ConnectionPtr fake_connection(int i) {
    return std::shared_ptr<hetcast::net::Connection>(reinterpret_cast<hetcast::net::Connection*>(std::intptr_t{16} * (i + 1)),
                                                     [](hetcast::net::Connection*) {});
}

}  // namespace

TEST_CASE("member directory: random member lists, keeps and closes agree with plain maps") {
    for (unsigned seed = 1; seed <= 30; ++seed) {
        std::mt19937 rng(seed);
        MemberDirectory d;
        std::map<std::string, Member> members;
        std::map<std::string, hetcast::net::ConnectionPtr> kept;
        int made = 0;
        for (int step = 0; step < 200; ++step) {
            const std::string name = "m" + std::to_string(rng() % 6);
            switch (rng() % 4) {
                case 0: {
                    std::vector<Member> next;
                    std::map<std::string, Member> next_map;
                    for (int i = 0; i < 6; ++i) {
                        if (rng() % 3 == 0) continue;
                        Member m{"m" + std::to_string(i), "10.0.0." + std::to_string(rng() % 2), static_cast<std::uint16_t>(7000 + rng() % 2)};
                        next.push_back(m);
                        next_map[m.name] = m;
                    }
                    std::set<const void*> want;
                    for (auto it = kept.begin(); it != kept.end();) {
                        const auto was = members.find(it->first);
                        const auto now = next_map.find(it->first);
                        const bool moved = now == next_map.end() ||
                                           (was != members.end() && (was->second.host != now->second.host || was->second.port != now->second.port));
                        if (moved) {
                            want.insert(it->second.get());
                            it = kept.erase(it);
                        } else {
                            ++it;
                        }
                    }
                    std::set<const void*> got;
                    for (const auto& c : d.set(next)) got.insert(c.get());
                    CHECK(got == want);
                    members = next_map;
                    break;
                }
                case 1: {
                    auto c = fake_connection(made++);
                    d.keep(name, c);
                    kept[name] = c;
                    break;
                }
                case 2: {
                    // Closing another connection than the one kept forgets nothing.
                    d.closed(name, fake_connection(1000 + made));
                    if (rng() % 2 == 0) {
                        if (auto it = kept.find(name); it != kept.end()) {
                            d.closed(name, it->second);
                            kept.erase(it);
                        }
                    }
                    break;
                }
                default:
                    CHECK(d.dial_lock(name) == d.dial_lock(name));  // one lock per member
                    break;
            }
            for (int i = 0; i < 6; ++i) {
                const std::string n = "m" + std::to_string(i);
                const auto it = members.find(n);
                REQUIRE(d.knows(n) == (it != members.end()));
                const auto found = d.find(n);
                REQUIRE(found.has_value() == (it != members.end()));
                if (found) CHECK(found->host == it->second.host);
                const auto k = kept.find(n);
                REQUIRE(d.connection(n) == (k == kept.end() ? nullptr : k->second));
                CHECK(d.knows_other_than(n) == std::any_of(members.begin(), members.end(), [&](const auto& m) { return m.first != n; }));
            }
            REQUIRE(d.list().size() == members.size());
        }
    }
}
