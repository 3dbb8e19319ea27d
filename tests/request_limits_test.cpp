// Requests per peer (lib/src/runtime/wire/request_limits.hpp, internal): counted per peer
// name and per connection while their handles live.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "../lib/src/runtime/wire/request_limits.hpp"

using hetcast::detail::RequestLimits;

namespace {

// Only their addresses are used: the limits never look into a connection.
const char slots[3] = {};
const auto* const c1 = reinterpret_cast<const hetcast::net::Connection*>(&slots[0]);
const auto* const c2 = reinterpret_cast<const hetcast::net::Connection*>(&slots[1]);
const auto* const c3 = reinterpret_cast<const hetcast::net::Connection*>(&slots[2]);

}  // namespace

TEST_CASE("request limits: a peer gets at most its limit at once, whatever connection it uses, and a handle's end frees a place") {
    RequestLimits l;
    auto a = l.take("m1", c1, 2);
    auto b = l.take("m1", c2, 2);
    REQUIRE(a);
    REQUIRE(b);
    CHECK_FALSE(l.take("m1", c3, 2));  // refused: nothing counted
    CHECK(l.running("m1") == 2);
    CHECK_FALSE(l.serving(c3));
    auto other = l.take("m2", c3, 2);  // another peer has places of its own
    CHECK(other);
    CHECK(l.serving(c3));
    b.reset();
    CHECK(l.running("m1") == 1);
    CHECK_FALSE(l.serving(c2));
    auto again = l.take("m1", c1, 2);
    CHECK(again);
    CHECK(l.running("m1") == 2);
    a.reset();
    CHECK(l.serving(c1));  // `again` still runs on it
    again.reset();
    other.reset();
    CHECK_FALSE(l.serving(c1));
    CHECK(l.running("m1") == 0);
    CHECK(l.running("m2") == 0);
}

TEST_CASE("request limits: limit 0 counts without refusing") {
    RequestLimits l;
    std::vector<std::shared_ptr<void>> held;
    for (int i = 0; i < 100; ++i) {
        held.push_back(l.take("m1", c1, 0));
        REQUIRE(held.back());
    }
    CHECK(l.running("m1") == 100);
    held.clear();
    CHECK(l.running("m1") == 0);
    CHECK_FALSE(l.serving(c1));
}
