#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "hetcast/runtime/history.hpp"
#include "temp_dir.hpp"

using namespace hetcast;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

JobReport report_of(std::uint64_t job, std::vector<bool> delivered, const std::string& error = "lost") {
    JobReport r;
    r.job = job;
    r.algorithm = "chain";
    r.bytes = 1000;
    r.achieved = 2.5;
    r.predicted = 2.0;
    for (std::size_t i = 0; i < delivered.size(); ++i) {
        r.outcomes.push_back({0, "ws00", "ws0" + std::to_string(i + 1), 2.0, delivered[i] ? 2.5 : 0, delivered[i],
                              delivered[i] ? "" : error});
    }
    return r;
}

json entry_of(std::uint64_t job) {
    const JobReport r = report_of(job, {true});
    return history_entry({"op", "/srv/f", "t0", "t1", {{"ok", true}, {"reports", json::array({to_json(r)})}}}, r);
}

}  // namespace

TEST_CASE("history: a push's outcome and its audit line") {
    CHECK(push_outcome(report_of(1, {true, true})) == "done");
    CHECK(push_outcome(report_of(1, {true, false})) == "partial");
    CHECK(push_outcome(report_of(1, {false, false})) == "failed");
    CHECK(push_outcome(report_of(1, {true, false}, "cancelled: by the operator")) == "cancelled");
    const JobReport r = report_of(42, {true, false, true});
    CHECK(audit_line({"alice", "/srv/img.iso", "", "", {}}, r) ==
          "job 42 by 'alice': /srv/img.iso, 1000 bytes to 3 (ws[01-03]) with chain: partial (failed: ws02), "
          "2.5 s achieved, 2.0 s predicted");
}

TEST_CASE("history: the last N entries, kept across a reload, written atomically, a bad file is moved aside") {
    test::TempDir dir;
    const fs::path file = dir.path / "history.json";
    {
        JobHistory h(file, 3, {});
        for (std::uint64_t j = 1; j <= 5; ++j) h.add(entry_of(j));
        REQUIRE(h.entries().size() == 3);
        CHECK(h.entries().front()["job"] == "3");
        CHECK(h.find("5").has_value());
        CHECK_FALSE(h.find("2").has_value());
        // hops are left out (empty) so that an entry stays small
        CHECK((*h.find("5"))["answer"]["reports"][0]["hops"] == json::array());
    }
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir.path)) files += e.path().filename().string().find("history") == 0 ? 1 : 0;
    CHECK(files == 1);  // no temporary left
    JobHistory again(file, 2, {});
    REQUIRE(again.entries().size() == 2);
    CHECK(again.entries().back()["job"] == "5");

    std::ofstream(file) << "{not json";
    std::string warned;
    JobHistory bad(file, 3, [&](LogLevel, const std::string& line) { warned = line; });
    CHECK(bad.entries().empty());
    CHECK(warned.find("moved aside") != std::string::npos);
    CHECK(fs::exists(dir.path / "history.json.bad"));

    JobHistory none(dir.path / "none.json", 0, {});
    none.add(entry_of(9));
    CHECK(none.entries().empty());
    CHECK_FALSE(fs::exists(dir.path / "none.json"));
}
