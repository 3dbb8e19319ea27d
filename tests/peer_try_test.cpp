// A try of a job as data (lib/src/runtime/peer/peer_try.hpp, internal): the flows of other
// jobs it runs beside, whether busy members have room, the tally of how it ended, and the
// plans its participants get.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../lib/src/runtime/peer/peer_try.hpp"
#include "../lib/src/runtime/peer/peer_try_control.hpp"
#include "hetcast/sched/plan.hpp"
#include "hetcast/sim/simulate.hpp"
#include "support.hpp"

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

TEST_CASE("peer try: a try predicted again at its start counts the jobs that came since its planning") {
    using hetcast::ExecModel;
    using hetcast::detail::Beside;
    using hetcast::detail::repredict;
    const Network net = hetcast::test::alternate_two_subnets(6, "h", 25e6, 5e6, 1e-3);
    JobSpec spec;
    spec.network = &net;
    spec.model = ExecModel::nonblocking;
    spec.schedule = hetcast::find_algorithm("flat").plan(net, hetcast::make_request(net, 0, {1, 2, 3, 4, 5}, 8e6, spec.model));
    const Beside none, one{{{2, 5, 50e6, 0}}, 1, ""}, two{{{2, 5, 50e6, 0}, {4, 3, 50e6, 0}}, 2, ""};
    const auto fresh = [&](const Beside& b) {
        return hetcast::detail::report_of(spec, hetcast::simulate_beside(net, spec.schedule, spec.model, b.flows), b.jobs);
    };
    // Nothing came: nothing changes, and nothing says it did.
    JobReport same = fresh(one);
    const JobReport before = same;
    CHECK_FALSE(repredict(spec, one, one, same));
    CHECK(same.predicted == before.predicted);
    CHECK(same.predicted_at_plan == 0);
    // Planned alone, started beside a job whose flows share its source's way across: later.
    JobReport r = fresh(none);
    const double planned = r.predicted;
    REQUIRE(repredict(spec, none, one, r));
    CHECK(r.predicted_at_plan == planned);
    CHECK(r.beside_at_plan == 0);
    CHECK(r.beside == 1);
    CHECK(r.predicted > planned * 1.05);
    CHECK(r.predicted == doctest::Approx(fresh(one).predicted));
    // Every destination's own time is the start's too, and none of them is later than the whole.
    const JobReport expect = fresh(one);
    REQUIRE(r.outcomes.size() == expect.outcomes.size());
    for (std::size_t i = 0; i < r.outcomes.size(); ++i) {
        CHECK(r.outcomes[i].predicted == doctest::Approx(expect.outcomes[i].predicted));
        CHECK(r.outcomes[i].predicted <= r.predicted + 1e-9);
    }
    // A second job by the start: as many jobs as the start saw.
    JobReport r2 = fresh(one);
    REQUIRE(repredict(spec, one, two, r2));
    CHECK(r2.beside == 2);
    CHECK(r2.beside_at_plan == 1);
    // The report says both, and reads back what it wrote.
    const JobReport back = hetcast::report_from_json(hetcast::to_json(r2));
    CHECK(back.predicted_at_plan == doctest::Approx(r2.predicted_at_plan));
    CHECK(back.beside_at_plan == 1);
    CHECK(hetcast::to_json(fresh(none)).count("predicted_at_plan") == 0);
}

TEST_CASE("plan texts, random plans: each participant's plan is its tasks and the participants it needs, as to_json writes it") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 200; ++round) {
        const std::size_t n = 2 + rng() % 40;
        hetcast::JobPlan common;
        common.job = rng();
        common.algorithm = round % 2 ? "eco" : "pipeline";
        common.coordinator = "m" + std::to_string(rng() % n);
        // The order is the operator's request, an object in the plan: the key the texts are
        // cut at may be in it.
        common.order = round % 2 ? R"({"cmd":"push","participants":[],"x":")" + std::to_string(round) + "\"}"
                                 : R"({"cmd":"push","all":true})";
        common.relay = round % 3 ? hetcast::Relay::store_and_forward : hetcast::Relay::cut_through;
        for (std::size_t i = 0; i < n; ++i) {
            common.participants.push_back({"m" + std::to_string(i), "198.18.0." + std::to_string(i), static_cast<std::uint16_t>(7000 + i)});
        }
        hetcast::JobMessage msg;
        msg.source = common.coordinator;
        msg.size = 1 + rng() % 100000;
        msg.name = "f.bin";
        for (std::size_t i = 0; i < n; ++i) {
            if (rng() % 4) msg.dests.push_back("m" + std::to_string(i));
        }
        common.piece = 64 << 10;
        if (common.relay == hetcast::Relay::cut_through) msg.pieces.resize((msg.size + common.piece - 1) / common.piece);
        common.messages.push_back(msg);
        const hetcast::detail::PlanTexts texts(common);
        const std::string member = "m" + std::to_string(rng() % n);
        std::vector<hetcast::JobTask> tasks;
        for (std::size_t k = rng() % 5; k > 0; --k) {
            const std::string peer = "m" + std::to_string(rng() % n);
            if (peer != member) tasks.push_back({rng() % 2 ? hetcast::Op::send : hetcast::Op::recv, 0, peer, 0});
        }
        hetcast::JobPlan want = common;
        want.tasks = tasks;
        want.participants.clear();
        for (const auto& m : common.participants) {
            const bool peer = std::any_of(tasks.begin(), tasks.end(), [&](const hetcast::JobTask& t) { return t.peer == m.name; });
            if (m.name == member || m.name == common.coordinator || m.name == msg.source || peer) want.participants.push_back(m);
        }
        const json got = json::parse(texts.of(member, tasks));
        CHECK(got == hetcast::to_json(want));
        CHECK(got["participants"].size() <= 3 + tasks.size());
        CHECK(got["messages"][0]["dests"] == json(msg.dests));
        CHECK_NOTHROW((void)hetcast::job_plan_from_json(got, 1ull << 40));
        CHECK(got["order"] == json::parse(common.order));
    }
}
