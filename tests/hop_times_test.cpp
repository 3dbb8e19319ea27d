// A hop's start in a job's report is when its first bytes came, not when its first whole
// frame had: at a share of a link a 1 MiB frame takes long to arrive.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/peer.hpp"
#include "identity.hpp"
#include "tcp_proxy.hpp"
#include "temp_dir.hpp"

using namespace hetcast;
using namespace std::chrono_literals;

TEST_CASE("hops: a hop starts when its first bytes come, a whole frame before its first frame is in") {
    test::TempDir dir;
    const std::size_t n = 2;
    const Network net = Network::parametric({"p0", "p1"}, Matrix(n, std::vector<double>(n, 1e-4)),
                                            Matrix(n, std::vector<double>(n, 1e6)), std::vector<Overhead>(n),
                                            std::vector<Overhead>(n));
    std::vector<std::unique_ptr<Peer>> peers;
    std::vector<Member> members;
    for (std::size_t i = 0; i < n; ++i) {
        PeerConfig c;
        c.name = net.name(i);
        c.identity = test::identity(c.name);
        c.dest_root = dir.path / c.name;
        c.spool = dir.path / (c.name + "-spool");
        peers.push_back(std::make_unique<Peer>(c));
        peers.back()->start();
        members.push_back({c.name, "127.0.0.1", peers.back()->port()});
    }
    peers[1]->set_members(members);
    // p0 reaches p1 through a proxy that passes 1 MiB/s: the first 1 MiB data frame is
    // whole at p1 about 1 s after its first bytes.
    test::TcpProxy proxy(members[1].port);
    proxy.throttle(1 << 20);
    members[1].port = proxy.port();
    peers[0]->set_members(members);

    const std::uint64_t size = std::uint64_t{2} << 20;
    Schedule s("flat", n, {Message{0, static_cast<double>(size), {1}}});
    s.add_transfer(0, 0, 1);
    JobSpec spec;
    spec.network = &net;
    spec.schedule = std::move(s);
    spec.inputs.emplace_back(make_generated_body(size, 3), "x.bin");
    spec.timeout = 60s;
    const JobReport r = peers[0]->run(std::move(spec));
    CHECK(r.ok());
    REQUIRE(r.hops.size() == 1);
    const Hop& h = r.hops[0];
    CHECK(h.bytes == size);
    // 2 MiB at 1 MiB/s: the end about 2 s in; the first frame was whole about 1 s in.
    CHECK(h.end >= 1.6);
    CHECK_MESSAGE(h.start < 0.5, "the hop starts at " << h.start << " s, ends at " << h.end << " s");
    for (auto& p : peers) p->stop();
    proxy.stop();
}
