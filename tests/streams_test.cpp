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
    CHECK_FALSE(t.route(nullptr, d));
    closed.clear();
    t.closed(nullptr, "gone");
    CHECK(closed == std::vector<std::string>{"9: gone"});
}
