// A hop's start in a job's report is when its first bytes came, not when its first whole
// frame had: at a share of a link a 1 MiB frame takes long to arrive.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/peer.hpp"
#include "peer_cluster.hpp"
#include "tcp_proxy.hpp"

using namespace hetcast;
using namespace std::chrono_literals;

TEST_CASE("hops: a hop starts when its first bytes come, a whole frame before its first frame is in") {
    const std::size_t n = 2;
    const Network net = Network::parametric({"p0", "p1"}, Matrix(n, std::vector<double>(n, 1e-4)),
                                            Matrix(n, std::vector<double>(n, 1e6)), std::vector<Overhead>(n),
                                            std::vector<Overhead>(n));
    test::PeerCluster c(n);
    std::vector<Member> members = c.peers[0]->members();
    // p0 reaches p1 through a proxy that passes 1 MiB/s: the first 1 MiB data frame is
    // whole at p1 about 1 s after its first bytes.
    test::TcpProxy proxy(c.peers[1]->port());
    proxy.throttle(1 << 20);
    for (Member& m : members) {
        if (m.name == "p1") m.port = proxy.port();
    }
    c.peers[0]->set_members(members);

    const std::uint64_t size = std::uint64_t{2} << 20;
    Schedule s("flat", n, {Message{0, static_cast<double>(size), {1}}});
    s.add_transfer(0, 0, 1);
    JobSpec spec;
    spec.network = &net;
    spec.schedule = std::move(s);
    spec.inputs.emplace_back(make_generated_body(size, 3), "x.bin");
    spec.timeout = 60s;
    const JobReport r = c.peers[0]->run(std::move(spec));
    CHECK(r.ok());
    REQUIRE(r.hops.size() == 1);
    const Hop& h = r.hops[0];
    CHECK(h.bytes == size);
    // 2 MiB at 1 MiB/s: the end about 2 s in; the first frame was whole about 1 s in.
    CHECK(h.end >= 1.6);
    CHECK_MESSAGE(h.start < 0.5, "the hop starts at " << h.start << " s, ends at " << h.end << " s");
    for (auto& p : c.peers) p->stop();
    proxy.stop();
}
