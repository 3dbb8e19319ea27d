// Pushes planned at the same moment (lib/src/runtime/job/plan_board.hpp, internal): keys
// order by time, a member lists the keys announced to it while they live, a coordinator
// lists what it still plans and the flows of what it planned until the push starts, and a
// push waits only for earlier keys whose coordinator still plans them.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../lib/src/runtime/job/plan_board.hpp"

using hetcast::detail::earlier_planning;
using hetcast::detail::PlanBoard;
using json = nlohmann::json;

namespace {

json answer_of(PlanBoard& b, double now) {
    json a{{"ok", true}, {"flows", json::array()}};
    b.answer(a, now);
    return a;
}

}  // namespace

TEST_CASE("plan board: keys order by time, then by member") {
    PlanBoard a, b;
    const std::string early = b.begin("zz", 999, 0), late = a.begin("aa", 1000, 0), later = a.begin("aa", 1000, 0);
    CHECK(early < late);
    CHECK(late != later);
    CHECK(a.begin("aa", 123456789012, 0) > a.begin("aa", 99999999999, 0));
}

TEST_CASE("plan board: a coordinator lists what it plans, then the planned flows until the push starts") {
    PlanBoard c;
    const std::string key = c.begin("c", 1000, 10.0);
    json a = answer_of(c, 10.1);
    CHECK(a["planning"] == json::array({key}));
    CHECK(a["flows"].empty());
    c.planned(key, {{"c", "d", 4096, 0}, {"d", "e", 4096, 100}, {"c", "e", 0, 0}}, 10.2);
    a = answer_of(c, 10.3);
    CHECK(a["planning"].empty());
    REQUIRE(a["flows"].size() == 2);  // nothing left of a flow of 0 bytes
    CHECK(a["flows"][1] == json{{"job", key}, {"from", "d"}, {"to", "e"}, {"left", 4096}, {"rate", 100}});
    c.end(key);
    a = answer_of(c, 10.4);
    CHECK(a["flows"].empty());
    CHECK(a["planning"].empty());
    // Never planned nor ended: it stops holding others up after intent_life.
    const std::string stuck = c.begin("c", 2000, 20.0);
    CHECK(answer_of(c, 20.0 + PlanBoard::intent_life / 2)["planning"].size() == 1);
    CHECK(answer_of(c, 20.1 + PlanBoard::intent_life)["planning"].empty());
    c.planned(stuck, {{"c", "d", 1, 0}}, 30.0);
    CHECK(answer_of(c, 30.0 + PlanBoard::planned_life / 2)["flows"].size() == 1);
    CHECK(answer_of(c, 30.1 + PlanBoard::planned_life)["flows"].empty());
}

TEST_CASE("plan board: a member lists the keys announced to it while they live") {
    PlanBoard m;
    m.note({{"cmd", "flows"}}, "a", 0);
    m.note({{"cmd", "flows"}, {"planning", 7}}, "a", 0);  // not a key
    CHECK(answer_of(m, 0)["seen"].empty());
    m.note({{"cmd", "flows"}, {"planning", "k1"}}, "a", 0);
    m.note({{"cmd", "flows"}, {"planning", "k2"}}, "b", 1);
    CHECK(answer_of(m, 1)["seen"] == json::array({json{{"key", "k1"}, {"coordinator", "a"}},
                                                  json{{"key", "k2"}, {"coordinator", "b"}}}));
    CHECK(answer_of(m, 0.5 + PlanBoard::intent_life)["seen"].size() == 1);
    m.note({{"cmd", "flows"}, {"planning", "k2"}}, "b", PlanBoard::intent_life);  // asked again: lives on
    CHECK(answer_of(m, 1.5 + PlanBoard::intent_life)["seen"].size() == 1);
}

TEST_CASE("plan board: a push waits for earlier keys that their coordinator still plans, and only those") {
    const json seen = json::array({json{{"key", "k1"}, {"coordinator", "a"}}, json{{"key", "k3"}, {"coordinator", "c"}},
                                   json{{"key", "k0"}, {"coordinator", "z"}}});
    std::map<std::string, json> answers{{"m", {{"seen", seen}}},
                                        {"a", {{"planning", json::array({"k1"})}}},
                                        {"c", {{"planning", json::array({"k3"})}}}};
    std::vector<std::string> also;
    // k3 is later than k2; z, not asked yet, must be.
    CHECK(earlier_planning("k2", answers, also) == std::vector<std::string>{"k0", "k1"});
    CHECK(also == std::vector<std::string>{"z"});
    // z answered without it (planned), or not at all (an empty answer): no wait for k0.
    answers["z"] = json::object();
    answers["a"]["planning"] = json::array();
    also.clear();
    CHECK(earlier_planning("k2", answers, also).empty());
    CHECK(also.empty());
    CHECK(earlier_planning("k0", answers, also).empty());
}
