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

/// `hosts` members in two subnets (the first half and the second): pings answer a round
/// trip of 0.2 ms inside a subnet, 2 ms across; a goodput reads 1 GB/s inside, 10 MB/s
/// across, whatever else runs (uplinks far faster than the flows that cross them).
struct FakeSite {
    std::size_t hosts;
    std::mutex mu;
    std::size_t pings = 0;
    std::vector<std::string> names;

    explicit FakeSite(std::size_t n) : hosts(n) {
        for (std::size_t i = 0; i < n; ++i) names.push_back("h" + std::to_string(i));
    }
    [[nodiscard]] std::size_t subnet(const std::string& name) const { return std::stoul(name.substr(1)) < hosts / 2 ? 0 : 1; }

    ProbeLink link() {
        ProbeLink l;
        l.self = "h0";
        l.call = [this](const std::string& member, const json& req, std::chrono::milliseconds) -> json {
            const std::string cmd = req.value("cmd", "");
            if (cmd == "ping") {
                {
                    std::lock_guard lock(mu);
                    ++pings;
                }
                const double rtt = subnet(member) == subnet(req.value("target", "")) ? 2e-4 : 2e-3;
                return {{"ok", true}, {"samples", samples_to_json({{64, 1.0, 1.0 + rtt / 2, 1.0 + rtt}})}};
            }
            if (cmd == "goodput" && req.value("connect", false)) {
                return {{"ok", true}, {"connection", (subnet(req.value("from", "")) == subnet(member) ? 1 : 2)}};
            }
            if (cmd == "goodput") {
                const double rate = req.value("connection", 0) == 1 ? 1e9 : 1e7;
                const double seconds = req.value("seconds", 0.3);
                json arrivals = json::array();
                for (double t = 0; t <= seconds + 1e-9; t += 0.01) arrivals.push_back({t, static_cast<std::uint64_t>(rate * t)});
                return {{"ok", true}, {"goodput", rate}, {"start", 0.0}, {"arrivals", arrivals}};
            }
            return {{"ok", true}};
        };
        return l;
    }
};

}  // namespace

TEST_CASE("cluster probe: many members are pinged O(n) times, and every pair gets its subnets' latency") {
    FakeSite site(40);
    ProbeOptions o;
    o.repeats = 1;
    o.structure_hosts = 25;
    const MeasuredCluster m = measure_cluster(site.link(), site.names, 2, o);
    REQUIRE(m.result.subnets.size() == 2);
    for (const auto& g : m.result.subnets) {
        for (NodeId v : g) CHECK(site.subnet(site.names[v]) == site.subnet(site.names[g[0]]));
    }
    // The prober's 39, then one pair inside each subnet and one across: not 40 * 39 / 2.
    CHECK(site.pings == 39 + 3);
    const Matrix& lat = m.network.latency();
    for (std::size_t i = 0; i < 40; ++i) {
        for (std::size_t j = 0; j < 40; ++j) {
            if (i == j) continue;
            const bool inside = site.subnet(site.names[i]) == site.subnet(site.names[j]);
            CHECK(lat[i][j] == doctest::Approx(inside ? 1e-4 : 1e-3));
        }
    }
    // Below the threshold every pair is pinged, as ECO's partition needs.
    FakeSite few(8);
    o.structure_hosts = 25;
    (void)measure_cluster(few.link(), few.names, 2, o);
    CHECK(few.pings == 8 * 7 / 2);
}

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
