#include <cmath>
#include <limits>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "hetcast/model/loader.hpp"
#include "hetcast/report/json_output.hpp"

using namespace hetcast;
using json = nlohmann::json;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

Network sample_map() {
    Network net = Network::parametric({"a1", "a2", "b1"}, {{0, 1e-4, 5e-3}, {1e-4, 0, 5e-3}, {5e-3, 5e-3, 0}},
                                      {{0, 1.25e8, 6e6}, {1.25e8, 0, 6e6}, {6e6, 6e6, 0}},
                                      {{1e-5, 2e-9}, {0, 0}, {0, 0}}, {{0, 0}, {3e-5, 0}, {0, 0}});
    net.set_subnets({{0, 1}, {2}});
    net.set_capacities({{1.25e8, 1.25e8, 1.25e8}, {1.25e8, 1.25e8, inf}, {inf, 4e7, inf}, {inf, 6e6}});
    return net;
}

}  // namespace

TEST_CASE("json_output: every document starts with the schema version and the command") {
    const json d = json_document("map show");
    CHECK(d == json{{"version", 1}, {"command", "map show"}});
    CHECK(json_schema_version == 1);
}

TEST_CASE("json_output: dump_json writes bytes that are not UTF-8 as U+FFFD instead of throwing") {
    const json j{{"member", "z\xff"}, {"error", "cannot open /srv/caf\xe9/x: \xc3"}, {"ok", "d\xc3\xa9j\xc3\xa0"}};
    CHECK_THROWS((void)j.dump());
    std::string text;
    REQUIRE_NOTHROW(text = dump_json(j));
    const json back = json::parse(text);
    CHECK(back["member"] == "z\xef\xbf\xbd");
    CHECK(back["error"] == "cannot open /srv/caf\xef\xbf\xbd/x: \xef\xbf\xbd");
    CHECK(back["ok"] == "d\xc3\xa9j\xc3\xa0");
}

TEST_CASE("json_output: map_json holds the map's nodes, links, overheads, subnets and capacities") {
    const json m = map_json(sample_map(), "2026-11-25T13:00:00Z");
    CHECK(m["measured_at"] == "2026-11-25T13:00:00Z");
    CHECK(m["nodes"] == json{"a1", "a2", "b1"});
    CHECK(m["latency"][0][2] == 5e-3);
    CHECK(m["bandwidth"][2][1] == 6e6);
    for (int i = 0; i < 3; ++i) {
        CHECK(m["latency"][i][i].is_null());
        CHECK(m["bandwidth"][i][i].is_null());
    }
    CHECK(m["send_overhead"][0] == json{{"fixed", 1e-5}, {"per_byte", 2e-9}});
    CHECK(m["recv_overhead"][1] == json{{"fixed", 3e-5}, {"per_byte", 0.0}});
    CHECK(m["subnets"] == json{json{"a1", "a2"}, json{"b1"}});
    CHECK(m["capacity"]["ingress"] == json{1.25e8, 1.25e8, nullptr});
    CHECK(m["capacity"]["disk"] == json{nullptr, 4e7, nullptr});
    CHECK(m["capacity"]["uplink"] == json{nullptr, 6e6});
    CHECK(map_json(sample_map())["measured_at"].is_null());

    Network bare = Network::parametric({"x", "y"}, {{0, 1e-3}, {1e-3, 0}}, {{0, 1e6}, {1e6, 0}}, {{}, {}}, {{}, {}});
    const json b = map_json(bare);
    CHECK(b["subnets"] == json::array());
    CHECK(b["capacity"].is_null());
}

TEST_CASE("json_output: the map saved as YAML and read back gives the same JSON") {
    const Network net = sample_map();
    const Network back = parse_network(format_network(net, "2026-11-25T13:00:00Z"), "saved map");
    CHECK(map_json(back, "t") == map_json(net, "t"));
}
