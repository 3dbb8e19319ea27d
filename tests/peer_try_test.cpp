// A try of a job as data (lib/src/runtime/peer/peer_try.hpp, internal): the flows of other
// jobs it runs beside, whether busy members have room, and the tally of how it ended.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "../lib/src/runtime/peer/peer_try.hpp"

using hetcast::Coord;
using hetcast::JobReport;
using hetcast::JobSpec;
using hetcast::Matrix;
using hetcast::Network;
using hetcast::Outcome;
using hetcast::Overhead;
using nlohmann::json;

namespace {

Network three() {
    const std::vector<std::string> names{"a", "b", "c"};
    const Matrix lat(3, std::vector<double>(3, 1e-3)), bw(3, std::vector<double>(3, 1e6));
    return Network::parametric(names, lat, bw, std::vector<Overhead>(3), std::vector<Overhead>(3));
}

}  // namespace

TEST_CASE("peer try: the flows beside a try are those naming two of its members, each job counted once") {
    const Network net = three();
    std::map<std::string, json> answers{
        {"b", {{"ok", true}, {"flows", {{{"job", "1"}, {"from", "a"}, {"to", "b"}, {"left", 100}, {"rate", 5}},
                                  {{"job", "1"}, {"from", "a"}, {"to", "c"}, {"left", 50}}}}}},
        {"c", {{"ok", true},
         {"flows", {{{"job", "2"}, {"from", "x"}, {"to", "b"}, {"left", 10}},   // x is no member of the try
                    {{"job", "3"}, {"from", "b"}, {"to", "b"}, {"left", 10}},   // to itself
                    {{"job", "4"}, {"from", "a"}, {"to", "c"}, {"left", 0}},    // nothing left
                    {{"from", "a"}}}}}}};                                          // not a flow
    const hetcast::detail::Beside b = hetcast::detail::beside_of(net, answers);
    REQUIRE(b.flows.size() == 2);
    CHECK(b.jobs == 1);
    CHECK(b.flows[0].from == 0);
    CHECK(b.flows[0].to == 1);
    CHECK(b.flows[0].bytes == 100);
    CHECK(b.flows[0].cap == 5);
    CHECK(b.flows[1].to == 2);
    CHECK(b.flows[1].cap == 0);
}

TEST_CASE("peer try: a member at its max_jobs leaves no room, one that does not say lets the try find out") {
    using hetcast::detail::has_room;
    CHECK(has_room({}));
    CHECK(has_room({{{"running", 1}, {"max_jobs", 2}}}));
    CHECK_FALSE(has_room({{{"running", 1}, {"max_jobs", 2}}, {{"running", 2}, {"max_jobs", 2}}}));
    CHECK(has_room({{{"running", 9}, {"max_jobs", 0}}}));  // no limit
    CHECK(has_room({{{"ok", true}, {"flows", json::array()}}}));  // an older member
}

TEST_CASE("peer try: the tally names who failed on their own account, not those orphaned by a failed feeder") {
    // a feeds b, b feeds c; b fails, so c never gets the message; d, fed by a, delivers.
    Coord k;
    k.nodes["a"].finished = true;
    k.nodes["b"].finished = true;
    k.nodes["b"].error = "disk full";
    k.nodes["c"].finished = true;
    k.nodes["c"].error = "'b' failed: disk full";
    k.nodes["d"].finished = true;
    k.feeder[{0, "b"}] = "a";
    k.feeder[{0, "c"}] = "b";
    k.feeder[{0, "d"}] = "a";
    k.sizes = {1000};
    k.owed = 3000;
    const double t0 = 100;
    k.delivered[{0, "d"}] = Coord::Delivered{t0 + 2, t0 + 3};
    JobReport report;
    for (const char* d : {"b", "c", "d"}) report.outcomes.push_back(Outcome{0, "a", d, 0, 0, false, {}});
    hetcast::detail::Try result;
    hetcast::detail::tally(k, JobSpec{}, "", {}, t0, result, report);
    CHECK(result.failed.size() == 1);
    CHECK(result.failed.count("b") == 1);
    CHECK(report.outcomes[0].error == "disk full");
    CHECK(report.outcomes[1].error == "'b' failed: disk full");
    CHECK(report.outcomes[2].ok);
    CHECK(report.outcomes[2].achieved == doctest::Approx(2));
    CHECK(report.achieved == doctest::Approx(2));
}
