// Streams that are no job (lib/src/runtime/wire/streams.hpp, internal): an accepted
// stream's data frames go to its hooks, any other frame to the jobs.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../lib/src/runtime/wire/streams.hpp"

using hetcast::detail::StreamTable;
namespace net = hetcast::net;

namespace {

net::Frame data(std::uint64_t stream) { return net::Frame{net::FrameHeader{net::FrameType::data, 0, stream, 0, 0}, {}}; }

}  // namespace

TEST_CASE("streams: frames of an accepted stream reach its hooks until it ends, others are not taken") {
    StreamTable t;
    net::Frame f = data(7);
    CHECK_FALSE(t.route(nullptr, f));  // none accepted
    std::vector<std::uint64_t> got;
    std::vector<std::string> closed;
    t.accept(7, {[&](const net::ConnectionPtr&, net::Frame&& x) { got.push_back(x.header.job); },
                 [&](const net::Connection*, const std::string& why) { closed.push_back("7: " + why); }});
    t.accept(9, {[&](const net::ConnectionPtr&, net::Frame&& x) { got.push_back(x.header.job); },
                 [&](const net::Connection*, const std::string& why) { closed.push_back("9: " + why); }});
    net::Frame a = data(7), b = data(8), c = data(9);
    CHECK(t.route(nullptr, a));
    CHECK_FALSE(t.route(nullptr, b));  // a job's frame
    CHECK(t.route(nullptr, c));
    CHECK(got == std::vector<std::uint64_t>{7, 9});
    t.closed(nullptr, "reset");
    CHECK(closed == std::vector<std::string>{"7: reset", "9: reset"});
    t.end(7);
    net::Frame d = data(7);
    CHECK(t.route(nullptr, d));  // taken and dropped: its hooks are gone
    CHECK(got == std::vector<std::uint64_t>{7, 9});
    closed.clear();
    t.closed(nullptr, "gone");
    CHECK(closed == std::vector<std::string>{"9: gone"});
}

TEST_CASE("streams: late frames of ended streams are dropped, not passed to the jobs, for the last ends only") {
    // An operator's upload goes on sending after its push is cancelled; the daemon answers the
    // push on that connection, which a job's reset of a lane with no job would lose.
    StreamTable t;
    int calls = 0;
    const int n = 300;
    for (int i = 1; i <= n; ++i) {
        t.accept(static_cast<std::uint64_t>(i), {[&](const net::ConnectionPtr&, net::Frame&&) { ++calls; },
                                                 [](const net::Connection*, const std::string&) {}});
    }
    for (int i = 1; i <= n; ++i) t.end(static_cast<std::uint64_t>(i));
    t.end(5000);  // never accepted: not remembered
    int taken = 0;
    for (int i = 1; i <= n; ++i) {
        net::Frame f = data(static_cast<std::uint64_t>(i));
        if (t.route(nullptr, f)) {
            ++taken;
            CHECK(i > n - 256);  // the most recent ends
        }
    }
    CHECK(taken == 256);
    CHECK(calls == 0);
    net::Frame g = data(5000);
    CHECK_FALSE(t.route(nullptr, g));
}
