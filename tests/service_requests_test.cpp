// The daemon's request table (lib/src/runtime/service/requests.hpp, internal): who may make
// each request, checked by its dispatcher before any handler runs.
#include <doctest/doctest.h>

#include <set>
#include <string_view>

#include "../lib/src/runtime/service/requests.hpp"

using hetcast::detail::Access;
using hetcast::detail::Requests;

namespace {

// What a member may ask with its identity alone: each only reads, or measures a link.
const std::set<std::string_view> read_only{"hello", "status", "map", "ping", "goodput", "jobs", "history", "wait"};
// Each changes files, jobs, members, the map or revocations, here or on other members.
const std::set<std::string_view> changing{"set_map", "probe", "push", "cancel", "join", "leave", "set_members"};

}  // namespace

TEST_CASE("service requests: each that changes state takes the operator's identity or a signed order") {
    for (const auto& e : Requests::table()) {
        CAPTURE(e.name);
        CAPTURE(to_string(e.from_member));
        // A new request is either read-only (listed above, on purpose) or guarded.
        CHECK((read_only.contains(e.name) || changing.contains(e.name)));
        if (e.changes_state || !read_only.contains(e.name)) {
            CHECK(e.from_member != Access::open);
            CHECK(e.from_operator != Access::refused);
        }
        CHECK(static_cast<bool>(e.run));
    }
    for (const auto name : changing) {
        CAPTURE(name);
        const auto* e = Requests::find(name);
        REQUIRE(e != nullptr);
        CHECK(e->changes_state);
    }
}

TEST_CASE("service requests: one entry per name, unknown names found nowhere") {
    std::set<std::string_view> seen;
    for (const auto& e : Requests::table()) {
        CAPTURE(e.name);
        CHECK(seen.insert(e.name).second);
        CHECK(Requests::find(e.name) == &e);
    }
    CHECK(seen.size() == read_only.size() + changing.size());
    CHECK(Requests::find("") == nullptr);
    CHECK(Requests::find("Push") == nullptr);
    CHECK(Requests::find("push ") == nullptr);
}

TEST_CASE("service requests: starting pushes and probes takes the operator and its order to this daemon") {
    for (const auto name : {"push", "probe"}) {
        CAPTURE(name);
        const auto* e = Requests::find(name);
        REQUIRE(e != nullptr);
        CHECK(e->from_operator == Access::order_to_me);
        CHECK(e->from_member == Access::refused);
    }
    CHECK(Requests::find("leave")->from_member == Access::refused);
    CHECK(Requests::find("cancel")->from_member == Access::order_to_caller);
    CHECK(Requests::find("join")->from_member == Access::signed_join);
}
