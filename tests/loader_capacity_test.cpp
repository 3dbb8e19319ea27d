#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
#include "loader_errors.hpp"

using namespace hetcast;
using test::error_of;

TEST_SUITE_BEGIN("loader");

namespace {

bool starts_with(const std::string& s, const std::string& head) { return s.rfind(head, 0) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// A site of `hosts` hosts in subnets of 20 as hetcast-bench writes it (capacities, no
/// matrices), one subnet a line; the host named `bad` in the last subnet when not empty.
std::string site(std::size_t hosts, const std::string& bad = "") {
    std::string nodes, subnets, nics, uplinks;
    for (std::size_t i = 0; i < hosts; ++i) {
        const std::string name = "s" + std::to_string(i / 20) + "h" + std::to_string(i % 20);
        nodes += (i ? ", " : "") + name;
        nics += (i ? ", " : "") + std::to_string(100 + i % 7) + "Mbit";
        if (i % 20 == 0) {
            subnets += i ? "]\n  - [" : "  - [";
            uplinks += (i ? ", " : "") + std::to_string(1 + i / 20 % 3) + "Gbit";
        } else {
            subnets += ", ";
        }
        subnets += !bad.empty() && i + 1 == hosts ? bad : name;
    }
    return "nodes: [" + nodes + "]\nlatency: {subnet: 50e-6, across: 200e-6}\nsubnets:\n" + subnets +
           "]\ncapacity:\n  nic: [" + nics + "]\n  uplink: [" + uplinks + "]\n";
}

}  // namespace

TEST_CASE("loader: without 'bandwidth' a pair's is the least of the capacities it crosses alone") {
    const Network net = parse_network(
        "nodes: [a1, a2, b1, b2]\n"
        "latency: {subnet: 0.001, across: 0.004}\n"
        "subnets: [[a1, a2], [b1, b2]]\n"
        "capacity:\n"
        "  nic: 100MB/s\n"
        "  egress: {a2: 20MB/s}\n"
        "  disk: {b2: 5MB/s}\n"
        "  uplink: [50MB/s, 1GB/s]\n");
    const auto& b = net.bandwidth();
    CHECK(b[0][1] == 100e6);  // NICs alone inside a subnet
    CHECK(b[1][0] == 20e6);   // a2's egress
    CHECK(b[0][2] == 50e6);   // a's uplink across
    CHECK(b[2][0] == 50e6);   // ... both ways
    CHECK(b[2][3] == 5e6);    // b2's disk
    CHECK(b[1][2] == 20e6);
    CHECK(net.latency()[0][1] == 0.001);
    CHECK(net.latency()[3][0] == 0.004);
    CHECK(net.latency()[2][2] == 0);
    REQUIRE(net.capacities());
    CHECK(net.capacities()->uplink.size() == 2);
}

TEST_CASE("loader: a 5000-host site loads from its capacities, bad input still at file:line") {
    // Its matrices as YAML would be 50 million numbers (about 1 GB of text and minutes of
    // parsing); as capacities the map is a few hundred kB.
    const Network net = parse_network(site(5000), "t.yaml");
    REQUIRE(net.size() == 5000);
    REQUIRE(net.subnets());
    CHECK(net.subnets()->size() == 250);
    CHECK(net.bandwidth()[0][1] == 100e6 / 8);
    CHECK(net.bandwidth()[1][2] == 101e6 / 8);
    CHECK(net.bandwidth()[0][4999] == 100e6 / 8);
    CHECK(net.latency()[0][19] == 50e-6);
    CHECK(net.latency()[0][20] == 200e-6);

    // The last subnet is line 253 (nodes, latency, "subnets:", then 250 lines).
    const std::string msg = error_of(site(5000, "nobody"));
    INFO(msg);
    CHECK(starts_with(msg, "t.yaml:253:"));
    CHECK(contains(msg, "unknown node 'nobody'"));
    const std::string dup = error_of(site(1000, "s0h3"));
    INFO(dup);
    CHECK(starts_with(dup, "t.yaml:53:"));
    CHECK(contains(dup, "'s0h3' is in two subnets"));
}

TEST_CASE("loader: a network without 'bandwidth' needs a finite capacity on every pair") {
    const std::string msg = error_of(
        "nodes: [a, b]\n"
        "latency: 0\n"
        "capacity:\n"
        "  egress: [1Gbit, .inf]\n");
    INFO(msg);
    CHECK(starts_with(msg, "t.yaml:3:1:"));
    CHECK(contains(msg, "'b' -> 'a' has none"));
    CHECK(starts_with(error_of("nodes: [a, b]\nlatency: 0\n"), "t.yaml:1:1: missing 'bandwidth'"));
}

TEST_CASE("loader: latency per subnet needs subnets, and both values") {
    const std::string no_subnets = error_of("nodes: [a, b]\nlatency: {subnet: 0, across: 1}\nbandwidth: 1\n");
    INFO(no_subnets);
    CHECK(starts_with(no_subnets, "t.yaml:2:10:"));
    CHECK(contains(no_subnets, "needs 'subnets'"));
    const std::string half =
        error_of("nodes: [a, b]\nsubnets: [[a], [b]]\nlatency: {subnet: 0}\nbandwidth: 1\n");
    INFO(half);
    CHECK(starts_with(half, "t.yaml:3:10:"));
    CHECK(contains(half, "both 'subnet' and 'across'"));
    const std::string unknown =
        error_of("nodes: [a, b]\nsubnets: [[a], [b]]\nlatency: {subnet: 0, accross: 1}\nbandwidth: 1\n");
    INFO(unknown);
    CHECK(starts_with(unknown, "t.yaml:3:22:"));
    CHECK(contains(unknown, "unknown key 'accross'"));
}

TEST_CASE("loader: a second document is found with or without the quick look for markers") {
    CHECK(starts_with(error_of("nodes: [a]\ncost: [[0]]\n--- \nnodes: [b]\n"), "t.yaml:4:1: expected a single"));
    CHECK(starts_with(error_of("nodes: [a]\ncost: [[0]]\n...\nnodes: [b]\n"), "t.yaml:4:1: expected a single"));
    CHECK(error_of("---\nnodes: [a]\ncost: [[0]]\n") == "");
    CHECK(error_of("nodes: [a, '---']\ncost: [[0, 1], [1, 0]]\n") == "");
}

TEST_CASE("loader: format_network writes a site by its capacities, and what it cannot so as matrices") {
    const Network net = parse_network(site(200), "site.yaml");
    const std::string text = format_network(net, "2026-11-26T12:00:00Z");
    INFO(text.substr(0, 400));
    CHECK(!contains(text, "bandwidth:"));
    CHECK(contains(text, "latency: {subnet: 5.0000000000000002e-05, across: 0.00020000000000000001}"));
    CHECK(text.size() < 20000);  // 2 x 40,000 matrix entries would be over 1 MB
    const Network back = parse_network(text, "back.yaml");
    CHECK(back.bandwidth() == net.bandwidth());
    CHECK(back.latency() == net.latency());
    CHECK(back.subnets() == net.subnets());

    // One pair measured apart from its capacities, one latency of its own: both matrices.
    Matrix bandwidth = net.bandwidth();
    Matrix latency = net.latency();
    bandwidth[3][150] *= 0.5;
    latency[7][8] = 1e-3;
    Network odd = Network::parametric(net.names(), latency, bandwidth, net.send_overheads(), net.recv_overheads());
    odd.set_subnets(*net.subnets());
    odd.set_capacities(*net.capacities());
    const std::string full = format_network(odd, "");
    CHECK(contains(full, "bandwidth:"));
    CHECK(!contains(full, "latency: {"));
    const Network odd_back = parse_network(full, "odd.yaml");
    CHECK(odd_back.bandwidth() == bandwidth);
    CHECK(odd_back.latency()[7][8] == 1e-3);
}
