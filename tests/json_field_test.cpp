// A field of a request or an answer with a fallback (lib/src/runtime/wire/json_field.hpp,
// internal), the one getter of the daemon, the push options and the probe.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "../lib/src/runtime/wire/json_field.hpp"

using hetcast::field;
using hetcast::InputError;
using json = nlohmann::json;

TEST_CASE("json field: a missing or null key gives the fallback, a present one its value") {
    const json j{{"name", "n2"}, {"port", 7000}, {"gone", nullptr}, {"sizes", {64, 65536}}};
    CHECK(field<std::string>(j, "name", "?") == "n2");
    CHECK(field<std::uint16_t>(j, "port", 1) == 7000);
    CHECK(field<std::vector<std::size_t>>(j, "sizes", {}) == std::vector<std::size_t>{64, 65536});
    CHECK(field<std::string>(j, "missing", "fallback") == "fallback");
    CHECK(field<int>(j, "gone", 5) == 5);
    CHECK(field<bool>(json(), "ok", true));        // null: no field at all
    CHECK(field<bool>(json::array(), "ok", true));  // not an object: no field either
}

TEST_CASE("json field: a wrong type is an InputError naming the key") {
    const json j{{"bwlimit", "fast"}, {"verbose", 1}, {"to", {{"a", 1}}}, {"ok", "yes"}};
    CHECK_THROWS_WITH_AS((void)field<std::uint64_t>(j, "bwlimit", 0), "request: 'bwlimit' has the wrong type", InputError);
    CHECK_THROWS_WITH_AS((void)field<bool>(j, "verbose", false), "request: 'verbose' has the wrong type", InputError);
    CHECK_THROWS_WITH_AS((void)field<std::vector<std::string>>(j, "to", {}), "request: 'to' has the wrong type",
                         InputError);
    CHECK_THROWS_WITH_AS((void)field<bool>(j, "ok", false, "answer"), "answer: 'ok' has the wrong type", InputError);
    CHECK_THROWS_WITH_AS((void)field<bool>(j, "ok", false, ""), "'ok' has the wrong type", InputError);
}
