// Measuring a cluster through a ProbeLink (runtime/cluster_probe.hpp), with members faked.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/cluster_probe.hpp"
#include "hetcast/runtime/membership.hpp"

using namespace hetcast;
using json = nlohmann::json;

namespace {

/// Members that answer pings at once, except that pinging between n1 and n2 fails
/// `failures` times first; goodput is refused, so a probe ends right after its pings.
struct FakeMembers {
    std::mutex mu;
    int failures = 0;
    int tries = 0;
    std::vector<std::string> notes;

    ProbeLink link() {
        ProbeLink l;
        l.self = "n0";
        l.call = [this](const std::string& member, const json& req, std::chrono::milliseconds) -> json {
            const std::string cmd = req.value("cmd", "");
            if (cmd == "goodput") throw Error("no goodput here");
            if (cmd != "ping") return {{"ok", true}};
            const std::set<std::string> pair{member, req.value("target", "")};
            if (pair == std::set<std::string>{"n1", "n2"}) {
                std::lock_guard lock(mu);
                ++tries;
                if (failures > 0) {
                    --failures;
                    throw Error("cannot reach it: timed out after 5000 ms");
                }
            }
            return {{"ok", true}, {"samples", samples_to_json({{64, 1.0, 5.0, 1.0002}})}};
        };
        l.note = [this](const std::string& line) {
            std::lock_guard lock(mu);
            notes.push_back(line);
        };
        return l;
    }
};

std::string error_of(FakeMembers& m) {
    ProbeOptions o;
    o.repeats = 1;
    try {
        (void)measure_cluster(m.link(), {"n0", "n1", "n2"}, 2, o);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("cluster probe: a ping that fails among many is tried again alone, twice, before the probe ends") {
    for (int failures : {1, 2}) {
        FakeMembers m;
        m.failures = failures;
        const std::string e = error_of(m);
        CHECK(e.find("no goodput here") != std::string::npos);  // past the pings, into the goodputs
        CHECK(m.tries == failures + 1);
        CHECK(m.notes.size() >= static_cast<std::size_t>(failures));
    }
    FakeMembers down;
    down.failures = 1000;
    const std::string e = error_of(down);
    CHECK(e.find("probe failed: pinging n") != std::string::npos);
    CHECK(e.find("timed out after 5000 ms") != std::string::npos);
    CHECK(down.tries == 3);
}
