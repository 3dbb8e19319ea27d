// Pushes planned but not started (lib/src/runtime/job/plan_board.hpp, internal): keys order
// by time, a coordinator reports its push's flows until it starts, a member reports the
// flows announced to it until their coordinator sets a job up there or they grow old.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../lib/src/runtime/job/plan_board.hpp"

using hetcast::detail::PlanBoard;
using hetcast::detail::PlannedFlow;
using hetcast::detail::planned_flows_from_json;
using hetcast::detail::planning_key;
using json = nlohmann::json;

namespace {

json answer_of(PlanBoard& b, double now, const std::map<std::string, double>& set_up = {}, const std::string& asker = "q") {
    json a{{"ok", true}, {"flows", json::array()}};
    b.answer(a, "m", now, set_up, asker);
    return a["flows"];
}

}  // namespace

TEST_CASE("plan board: keys order by time, then by member") {
    CHECK(planning_key("zz", 999, 5) < planning_key("aa", 1000, 0));
    CHECK(planning_key("aa", 99999999999, 0) < planning_key("aa", 123456789012, 0));
    PlanBoard b;
    CHECK(b.key("aa", 1000) != b.key("aa", 1000));
}

TEST_CASE("plan board: a coordinator reports its push's flows, the last it said, until the push starts") {
    PlanBoard c;
    const std::string key = c.key("m", 1000);
    c.planned(key, {{"m", "d", 4096, 0}, {"m", "e", 0, 0}}, 10.0);
    CHECK(answer_of(c, 10.1) == json::array({json{{"job", key}, {"coordinator", "m"}, {"from", "m"}, {"to", "d"},
                                                  {"left", 4096}, {"rate", 0}}}));  // nothing of 0 bytes
    c.planned(key, {{"m", "e", 4096, 100}, {"e", "d", 4096, 100}}, 10.2);
    const json flows = answer_of(c, 10.3);
    REQUIRE(flows.size() == 2);
    CHECK(flows[1]["from"] == "e");
    CHECK(flows[1]["rate"] == 100);
    c.end(key);
    CHECK(answer_of(c, 10.4).empty());
    // Never started nor ended: reported for planned_life.
    c.planned(c.key("m", 2000), {{"m", "d", 1, 0}}, 30.0);
    CHECK(answer_of(c, 30.0 + PlanBoard::planned_life / 2).size() == 1);
    CHECK(answer_of(c, 30.1 + PlanBoard::planned_life).empty());
}

TEST_CASE("plan board: a member reports announced flows until their coordinator sets a job up there, or for seen_life") {
    PlanBoard m;
    m.note({{"cmd", "flows"}}, "a", 0);
    m.note({{"cmd", "flows"}, {"planning", 7}, {"planned", json::array()}}, "a", 0);  // not a key
    CHECK(answer_of(m, 0).empty());
    const json planned = json::array({json{{"from", "a"}, {"to", "m"}, {"left", 10}, {"rate", 0}},
                                      json{{"from", "a"}, {"to", "x"}, {"left", -1}},  // not a count of bytes
                                      json{{"to", "x"}, {"left", 5}}});
    m.note({{"cmd", "flows"}, {"planning", "k1"}, {"planned", planned}}, "a", 1.0);
    m.note({{"cmd", "flows"}, {"planning", "k2"}, {"planned", planned}}, "b", 1.0);
    json flows = answer_of(m, 1.5);
    REQUIRE(flows.size() == 2);
    CHECK(flows[0] == json{{"job", "k1"}, {"coordinator", "a"}, {"from", "a"}, {"to", "m"}, {"left", 10}, {"rate", 0}});
    CHECK(flows[1]["coordinator"] == "b");
    // a set a job up here after it announced k1: a's receivers report that job from now on.
    flows = answer_of(m, 1.6, {{"a", 1.2}, {"b", 0.5}});
    REQUIRE(flows.size() == 1);
    CHECK(flows[0]["job"] == "k2");
    CHECK(answer_of(m, 1.1 + PlanBoard::seen_life).empty());
}

TEST_CASE("plan board: an asker is not told the flows it announced, and is told everyone else's") {
    PlanBoard m;
    const json planned = json::array({json{{"from", "a"}, {"to", "m"}, {"left", 10}, {"rate", 0}}});
    m.note({{"cmd", "flows"}, {"planning", "k1"}, {"planned", planned}}, "a", 1.0);
    m.note({{"cmd", "flows"}, {"planning", "k2"}, {"planned", planned}}, "b", 1.0);
    m.planned(m.key("m", 1000), {{"m", "a", 7, 0}}, 1.0);
    const auto coordinators = [&](const std::string& asker) {
        std::multiset<std::string> out;
        for (const json& f : answer_of(m, 1.5, {}, asker)) out.insert(f["coordinator"].get<std::string>());
        return out;
    };
    CHECK(coordinators("a") == std::multiset<std::string>{"b", "m"});
    CHECK(coordinators("b") == std::multiset<std::string>{"a", "m"});
    CHECK(coordinators("q") == std::multiset<std::string>{"a", "b", "m"});
    CHECK(coordinators("m") == std::multiset<std::string>{"a", "b", "m"});  // its own always: it asks itself
}

TEST_CASE("plan board: a push announced by its key alone is listed by key and coordinator, for as long") {
    PlanBoard m;
    m.note({{"cmd", "flows"}, {"planning", "k1"}}, "a", 1.0);
    CHECK(answer_of(m, 1.5) == json::array({json{{"job", "k1"}, {"coordinator", "a"}}}));
    CHECK(answer_of(m, 1.5, {}, "a").empty());
    CHECK(answer_of(m, 1.6, {{"a", 1.2}}).empty());  // a set a job up here since
    m.note({{"cmd", "flows"}, {"planning", "k2"}}, "a", 2.0);
    CHECK(answer_of(m, 2.1 + PlanBoard::seen_life).empty());
}

TEST_CASE("plan board: planned flows in a request are read as far as they are flows") {
    CHECK(planned_flows_from_json(json::object()).empty());
    CHECK(planned_flows_from_json(json::array({1, "x", json{{"from", "a"}, {"to", "b"}, {"left", 3}}})) ==
          std::vector<PlannedFlow>{{"a", "b", 3, 0}});
}
