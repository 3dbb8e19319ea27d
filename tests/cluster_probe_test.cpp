// Measuring a cluster through a ProbeLink (runtime/cluster_probe.hpp), with members faked.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
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

namespace {

/// Members of a site with subnets behind uplinks that answer pings, hellos and goodputs:
/// a flow's rate is what its NICs and the uplinks on its way allow (the join measures one
/// flow into the joiner and one out of it at a time, which share nothing).
struct FakeSite {
    std::vector<std::string> names;
    std::vector<std::size_t> subnet_of;
    std::vector<double> egress, ingress, uplink;
    std::mutex mu;
    std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> connections;
    std::set<std::string> pinged_joiner;
    std::set<std::pair<std::string, std::string>> pinged;
    std::size_t goodputs = 0;

    std::size_t index(const std::string& n) const {
        return static_cast<std::size_t>(std::find(names.begin(), names.end(), n) - names.begin());
    }
    double rate(std::size_t a, std::size_t b) const {
        double x = std::min(egress[a], ingress[b]);
        if (subnet_of[a] != subnet_of[b]) x = std::min({x, uplink[subnet_of[a]], uplink[subnet_of[b]]});
        return x;
    }
    ProbeLink link() {
        ProbeLink l;
        l.self = names[0];
        l.call = [this](const std::string& member, const json& req, std::chrono::milliseconds) -> json {
            const std::string cmd = req.value("cmd", "");
            std::lock_guard lock(mu);
            if (cmd == "ping") {
                const std::string target = req.value("target", "");
                if (target == names.back()) pinged_joiner.insert(member);
                pinged.insert(std::minmax(member, target));
                // 50 us one way inside a subnet, 300 us across.
                const bool inside = subnet_of[index(member)] == subnet_of[index(target)];
                const double way = inside ? 50e-6 : 300e-6;
                return {{"ok", true}, {"samples", samples_to_json({{64, 1.0, 1.0 + way, 1.0 + 2 * way}})}};
            }
            if (cmd == "goodput" && req.value("connect", false)) {
                const std::uint64_t id = connections.size() + 1;
                connections[id] = {index(req.value("from", "")), index(member)};
                return {{"ok", true}, {"connection", id}};
            }
            if (cmd == "goodput") {
                ++goodputs;
                const auto [a, b] = connections.at(req.value("connection", std::uint64_t{0}));
                return {{"ok", true}, {"goodput", rate(a, b)}};
            }
            return {{"ok", true}, {"send_overhead", {1e-5, 0}}, {"recv_overhead", {1e-5, 0}}};
        };
        return l;
    }
};

}  // namespace

TEST_CASE("cluster probe: a member joining a probed map is measured against a representative of each subnet") {
    // Three subnets of five behind 40, 60 and 50 Mbit/s uplinks, NICs of 100 Mbit/s; the
    // joiner (last) is in the second subnet with a 90 Mbit/s NIC.
    FakeSite site;
    const double mbit = 1e6 / 8;
    Subnets subs(3);
    for (std::size_t i = 0; i < 15; ++i) {
        site.names.push_back("h" + std::to_string(i));
        site.subnet_of.push_back(i / 5);
        site.egress.push_back(100 * mbit);
        site.ingress.push_back(100 * mbit);
        subs[i / 5].push_back(static_cast<NodeId>(i));
    }
    site.uplink = {40 * mbit, 60 * mbit, 50 * mbit};
    const std::size_t n = site.names.size();
    Matrix lat(n, std::vector<double>(n, 1e-4)), bw(n, std::vector<double>(n, 0));
    for (std::size_t a = 0; a < n; ++a) {
        for (std::size_t b = 0; b < n; ++b) bw[a][b] = a == b ? 0 : site.rate(a, b);
    }
    Network old = Network::parametric(site.names, lat, bw, std::vector<Overhead>(n), std::vector<Overhead>(n));
    old.set_subnets(subs);
    old.set_capacities({site.egress, site.ingress, std::vector<double>(n, std::numeric_limits<double>::infinity()),
                        site.uplink});
    site.names.push_back("new");
    site.subnet_of.push_back(1);
    site.egress.push_back(90 * mbit);
    site.ingress.push_back(90 * mbit);

    std::vector<std::string> members = old.names();
    members.push_back("new");
    REQUIRE(joinable(old, members, "new"));
    CHECK_FALSE(joinable(old, {"h0", "h1", "new"}, "new"));  // the map is not the members'
    ProbeOptions o;
    o.repeats = 1;
    const MeasuredJoin j = measure_join(site.link(), old, "new", 2, o);
    CHECK(j.result.subnet == 1);
    CHECK(j.result.doubt.empty());
    CHECK(j.pinged == 3);
    CHECK(site.pinged_joiner.size() == 3);  // one per subnet, not all 15
    CHECK(j.result.measurements <= 2 * 3);
    const Network& net = j.network;
    REQUIRE(net.size() == 16);
    REQUIRE(net.subnets());
    REQUIRE(net.capacities());
    const NodeId id = net.id("new");
    const auto sub = net.subnet_of();
    CHECK(sub[id] == sub[net.id("h5")]);
    CHECK(net.capacities()->uplink.size() == 3);
    CHECK(net.capacities()->egress[id] == doctest::Approx(90 * mbit));
    // Across an uplink its pairs get what the slower uplink allows; inside, what the NICs do.
    CHECK(net.bandwidth()[id][net.id("h0")] == doctest::Approx(40 * mbit));
    CHECK(net.bandwidth()[net.id("h6")][id] == doctest::Approx(90 * mbit));
}

TEST_CASE("cluster probe: a site of many members pings a sample of pairs, the prober every member, and keeps two latencies") {
    // Four subnets of ten behind 40-70 Mbit/s uplinks, NICs of 100 Mbit/s.
    FakeSite site;
    const double mbit = 1e6 / 8;
    const std::size_t n = 40;
    for (std::size_t i = 0; i < n; ++i) {
        site.names.push_back("h" + std::to_string(i));
        site.subnet_of.push_back(i / 10);
        site.egress.push_back(100 * mbit);
        site.ingress.push_back(100 * mbit);
    }
    site.uplink = {40 * mbit, 50 * mbit, 60 * mbit, 70 * mbit};
    ProbeOptions o;
    o.repeats = 1;
    // (These fake members rate each flow alone, not shared: the subnets found are not the
    // point here.)
    const MeasuredCluster c = measure_cluster(site.link(), site.names, 2, o);
    // 16 partners each and the prober with every member; all pairs would be 780.
    CHECK(site.pinged.size() <= 16 * n / 2 + n);
    for (const std::string& m : site.names) {
        if (m != "h0") CHECK(site.pinged.count(std::minmax(std::string("h0"), m)) == 1);
        CHECK(c.offsets.count(m) == 1);
    }
    const Network& net = c.network;
    std::set<double> values;
    for (NodeId a = 0; a < n; ++a) {
        for (NodeId b = 0; b < n; ++b) {
            if (a != b) values.insert(net.latency()[a][b]);
        }
    }
    CHECK(values.size() <= 2);
    for (double v : values) CHECK((v == doctest::Approx(50e-6) || v == doctest::Approx(300e-6)));
    CHECK(format_network(net).find("latency:\n") == std::string::npos);  // no matrix
}
