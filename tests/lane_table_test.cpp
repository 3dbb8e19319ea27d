// Which connections are data lanes (lib/src/runtime/wire/lanes.hpp, internal): a noted
// lane is told back once, when it closes, with its job and direction.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "../lib/src/runtime/wire/lanes.hpp"

using hetcast::detail::Lane;
using hetcast::detail::LaneTable;

namespace {

// Only their addresses are used: the table never looks into a connection.
const char slots[8] = {};
const hetcast::net::Connection* conn(unsigned i) { return reinterpret_cast<const hetcast::net::Connection*>(&slots[i]); }

}  // namespace

TEST_CASE("lane table: random notes and closes agree with a plain map") {
    for (unsigned seed = 1; seed <= 30; ++seed) {
        std::mt19937 rng(seed);
        LaneTable t;
        std::map<const hetcast::net::Connection*, Lane> model;
        for (int step = 0; step < 300; ++step) {
            const auto* c = conn(rng() % 8);
            if (rng() % 2 == 0) {
                const Lane l{rng() % 5, rng() % 2 == 0};
                t.note(c, l.job, l.in);
                model[c] = l;
            } else {
                const auto got = t.closed(c);
                const auto it = model.find(c);
                REQUIRE(got.has_value() == (it != model.end()));
                if (got) {
                    CHECK(got->job == it->second.job);
                    CHECK(got->in == it->second.in);
                    model.erase(it);
                }
                CHECK_FALSE(t.closed(c).has_value());  // told once
            }
            for (unsigned i = 0; i < 8; ++i) REQUIRE(t.carries(conn(i)) == (model.count(conn(i)) > 0));
            REQUIRE(t.size() == model.size());
        }
    }
}
