// Pattern files (sched/pattern.hpp parse_pattern), also what a push request's "pattern"
// carries, on a fixed eight-node network (conf/examples/three-subnets.yaml's names). What it
// accepts must pass check_pattern.
#include "fuzz.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/sched/pattern.hpp"

namespace {

const hetcast::Network& network() {
    static const hetcast::Network net = hetcast::parse_network(R"(name: fuzz
nodes: [a1, a2, a3, b1, b2, b3, c1, c2]
latency: 1e-3
bandwidth: 1e8
)", "fuzz-network");
    return net;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const hetcast::Network& net = network();
    hetcast::PatternRequest req;
    if (!fuzz::accepts([&] { req = hetcast::parse_pattern(fuzz::text(data, size), "fuzz", net); })) return 0;
    if (!fuzz::accepts([&] { hetcast::check_pattern(net, req); })) fuzz::finding("parse_pattern accepted what check_pattern rejects");
    if (req.files.size() != req.messages.size() || req.sized.size() != req.messages.size()) {
        fuzz::finding("a pattern's files or sized do not match its messages");
    }
    return 0;
}
