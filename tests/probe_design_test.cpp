// The sharing tests the probe designs (map/probe_model.hpp): what the host's flows may share
// with the flows they watch.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "../lib/src/map/probe_model.hpp"

using namespace hetcast;
using namespace hetcast::probing;

namespace {

constexpr double mbit = 1e6 / 8;

std::set<NodeId> ends(const std::vector<FlowPair>& flows) {
    std::set<NodeId> s;
    for (const auto& [i, j] : flows) {
        s.insert(i);
        s.insert(j);
    }
    return s;
}

}  // namespace

TEST_CASE("probe design: the host's flows meet no watched flow at a NIC when the other subnets have hosts enough") {
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> nic(20, 300), up(10, 150);
    std::uniform_int_distribution<int> subnets(2, 4), size(2, 8);
    int designed = 0, both_ways = 0;
    for (int round = 0; round < 400; ++round) {
        const int s = subnets(rng);
        Model m;
        Subnets found(static_cast<std::size_t>(s));
        for (int k = 0; k < s; ++k) {
            m.uplink.push_back(up(rng) * mbit);
            for (int c = size(rng); c > 0; --c) {
                found[static_cast<std::size_t>(k)].push_back(static_cast<NodeId>(m.egress.size()));
                m.egress.push_back(nic(rng) * mbit);
                m.ingress.push_back(nic(rng) * mbit);
                m.subnet.push_back(static_cast<std::size_t>(k));
            }
        }
        const auto h = static_cast<NodeId>(m.egress.size());
        m.egress.push_back(nic(rng) * mbit);
        m.ingress.push_back(nic(rng) * mbit);
        m.subnet.push_back(none);
        for (std::size_t a = 0; a < found.size(); ++a) {
            const auto d = design(m, h, a, found);
            if (!d) continue;
            ++designed;
            CAPTURE(round);
            CAPTURE(a);
            REQUIRE(d->test.size() > d->base.size());
            REQUIRE(std::equal(d->base.begin(), d->base.end(), d->test.begin()));
            CHECK(d->log_drop < 0);
            const std::vector<FlowPair> added(d->test.begin() + static_cast<std::ptrdiff_t>(d->base.size()), d->test.end());
            both_ways += added.size() == 2 ? 1 : 0;
            for (const auto& [i, j] : added) CHECK((i == h) != (j == h));
            // Two subnets: the watched flows' ends there are two hosts, the host's two more.
            bool room = true;
            for (std::size_t k = 0; k < found.size(); ++k) {
                if (k != a && s == 2 && found[k].size() < 4) room = false;
            }
            if (!room) continue;
            std::set<NodeId> theirs = ends(added);
            theirs.erase(h);
            const std::set<NodeId> watched = ends(d->base);
            for (NodeId x : theirs) CHECK_MESSAGE(!watched.count(x), "host " << x << " carries a watched flow and one of h's");
            CHECK(theirs.size() == added.size());
        }
    }
    CHECK(designed > 200);
    CHECK(both_ways > 20);
}
