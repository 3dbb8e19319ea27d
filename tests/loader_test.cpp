#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
#include "loader_errors.hpp"
#include "hetcast/sched/pattern.hpp"
#include "hetcast/model/generators.hpp"

using namespace hetcast;
using test::error_of;
namespace fs = std::filesystem;

TEST_SUITE_BEGIN("loader");

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Asserts that `yaml` is rejected on one line starting with `where` ("t.yaml:LINE:COL:")
/// and mentioning `phrase`.
void check_error(const std::string& yaml, const std::string& where, const std::string& phrase) {
    const std::string msg = error_of(yaml);
    INFO("yaml:\n" << yaml << "message: " << msg);
    CHECK(msg.rfind(where, 0) == 0);
    CHECK(contains(msg, phrase));
    CHECK(!contains(msg, "\n"));
}

const fs::path examples = fs::path(HETCAST_SOURCE_DIR) / "conf" / "examples";

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("hetcast-loader-test-" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("loader: a cost matrix gives size-independent costs, row = sender") {
    const Network net = parse_network(
        "nodes: [P0, P1, P2]\n"
        "cost:\n"
        "  - [0, 10, 995]\n"
        "  - [2000, 0, 10]\n"
        "  - [70, 5, 0]\n");
    REQUIRE(net.size() == 3);
    CHECK(net.names() == std::vector<std::string>{"P0", "P1", "P2"});
    CHECK(net.is_cost_matrix());
    CHECK(net.default_root() == 0);
    CHECK(net.time(0, 2, 1) == 995);
    CHECK(net.time(1, 0, 1e9) == 2000);
    CHECK(net.time(2, 1, 1e6) == 5);
    CHECK(!net.subnets());
}

TEST_CASE("loader: a cost matrix may use flow style, + signs and exponents, the diagonal is ignored") {
    const Network net = parse_network("nodes: [a, b]\ncost: [[7, +1.5e1], [2e-3, -1]]\n");
    CHECK(net.time(0, 1, 0) == 15);
    CHECK(net.time(1, 0, 0) == doctest::Approx(0.002));
    CHECK(net.cost_matrix(0)[1][1] == 0);
}

TEST_CASE("loader: parametric with matrices and {fixed, per_byte} overheads") {
    const Network net = parse_network(
        "nodes: [a, b]\n"
        "latency: [[0, 0.001], [0.002, 0]]\n"
        "bandwidth: [[0, 1e6], [2e6, 0]]\n"
        "send_overhead: {fixed: 1e-4, per_byte: 1e-9}\n"
        "recv_overhead: {fixed: 2e-4, per_byte: 2e-9}\n");
    CHECK(!net.is_cost_matrix());
    const double m = 1e6;
    // S_a = 1e-4 + 1e-3, wire = 1e-3 + 1, R_b = 2e-4 + 2e-3
    CHECK(net.time(0, 1, m) == doctest::Approx(0.0011 + 1.001 + 0.0022));
    // S_b = 0.0011, wire = 0.002 + 0.5, R_a = 0.0022
    CHECK(net.time(1, 0, m) == doctest::Approx(0.0011 + 0.502 + 0.0022));
    CHECK(net.send_busy(0, 1, m) == doctest::Approx(0.0011));
    CHECK(net.recv_busy(1, m) == doctest::Approx(0.0022));
}

TEST_CASE("loader: a scalar latency or bandwidth applies to every pair") {
    const Network scalar = parse_network("nodes: [a, b, c]\nlatency: 0.001\nbandwidth: 1e6\n");
    for (NodeId i = 0; i < 3; ++i) {
        for (NodeId j = 0; j < 3; ++j) {
            if (i != j) CHECK(scalar.time(i, j, 1e6) == doctest::Approx(1.001));
        }
    }
    CHECK(scalar.latency()[1][1] == 0);
    CHECK(scalar.send_overheads().size() == 3);
    CHECK(scalar.send_overheads()[2].at(1e6) == 0);

    const Network mixed = parse_network(
        "nodes: [a, b]\n"
        "latency: 0.5\n"
        "bandwidth:\n"
        "  - [0, 100]\n"
        "  - [50, 0]\n");
    CHECK(mixed.time(0, 1, 1000) == doctest::Approx(0.5 + 10));
    CHECK(mixed.time(1, 0, 1000) == doctest::Approx(0.5 + 20));
}

TEST_CASE("loader: overhead variants: number, map, per-node list") {
    const Network net = parse_network(
        "nodes: [a, b, c]\n"
        "latency: 0\n"
        "bandwidth: 1e9\n"
        "send_overhead: 0.25\n"
        "recv_overhead: [1, {fixed: 2, per_byte: 0.5}, {per_byte: 1e-3}]\n");
    const auto& s = net.send_overheads();
    REQUIRE(s.size() == 3);
    for (const auto& o : s) {
        CHECK(o.fixed == 0.25);
        CHECK(o.per_byte == 0);
    }
    const auto& r = net.recv_overheads();
    REQUIRE(r.size() == 3);
    CHECK(r[0].fixed == 1);
    CHECK(r[0].per_byte == 0);
    CHECK(r[1].fixed == 2);
    CHECK(r[1].per_byte == 0.5);
    CHECK(r[2].fixed == 0);
    CHECK(r[2].per_byte == doctest::Approx(1e-3));
    // a→b of 10 bytes: S = 0.25, wire = 1e-8, R_b = 2 + 5
    CHECK(net.time(0, 1, 10) == doctest::Approx(7.25 + 1e-8));
}

TEST_CASE("loader: Khuller's cluster model") {
    const Network net = parse_network("clusters: {sizes: [2, 3], local: 1, global: 7}\n");
    REQUIRE(net.size() == 5);
    CHECK(net.name(0) == "c0n0");
    CHECK(net.name(4) == "c1n2");
    CHECK(net.time(0, 1, 1e6) == 1);
    CHECK(net.time(0, 2, 1e6) == 7);
    CHECK(net.time(3, 4, 1e6) == 1);
    REQUIRE(net.subnets());
    CHECK(*net.subnets() == Subnets{{0, 1}, {2, 3, 4}});

    const Network default_local = parse_network("clusters:\n  sizes: [1, 2]\n  global: 3.5\n");
    CHECK(default_local.time(1, 2, 0) == 1);
    CHECK(default_local.time(0, 2, 0) == 3.5);
}

TEST_CASE("loader: subnets by node names, on any form") {
    const Network net = parse_network(
        "nodes: [a, b, c, d]\n"
        "latency: 0.001\n"
        "bandwidth: 1e6\n"
        "subnets: [[a, c], [b], [d]]\n");
    REQUIRE(net.subnets());
    CHECK(*net.subnets() == Subnets{{0, 2}, {1}, {3}});

    const Network costs = parse_network("nodes: [x, y]\ncost: [[0, 1], [1, 0]]\nsubnets:\n  - [y, x]\n");
    CHECK(*costs.subnets() == Subnets{{1, 0}});

    const Network clusters =
        parse_network("clusters: {sizes: [2, 1], global: 5}\nsubnets: [[c0n0], [c0n1, c1n0]]\n");
    CHECK(*clusters.subnets() == Subnets{{0}, {1, 2}});
}

TEST_CASE("loader: local_broadcast as a list or a map by name") {
    const std::string head = "nodes: [a, b, c]\ncost: [[0, 1, 1], [1, 0, 1], [1, 1, 0]]\n";
    CHECK(parse_network(head + "local_broadcast: [0.5, 0, 2]\n").local_broadcast() ==
          std::vector<double>{0.5, 0, 2});
    CHECK(parse_network(head + "local_broadcast: {c: 3, a: 1, b: 2}\n").local_broadcast() ==
          std::vector<double>{1, 2, 3});
    CHECK(parse_network(head).local_broadcast().empty());
}

TEST_CASE("loader: name, description and measured_at are accepted") {
    const Network net = parse_network(
        "name: lab\n"
        "description: |\n"
        "  two machines\n"
        "  under the desk\n"
        "measured_at: 2024-03-01T12:00:00Z\n"
        "nodes: [a, b]\n"
        "cost: [[0, 1], [2, 0]]\n");
    CHECK(net.size() == 2);
    check_error("name: [a]\nnodes: [a]\ncost: [[0]]\n", "t.yaml:1:7:", "name: expected text");
}

TEST_CASE("loader: YAML syntax errors carry the parser's position") {
    check_error("nodes: [a, b\ncost: [[0, 1], [1, 0]]\n", "t.yaml:", "end of sequence");
    check_error("nodes: [a, b]\ncost:\n  - [0, 1]\n - [1, 0]\n", "t.yaml:4:", "");
    check_error("nodes: [a, b]\ncost: *nowhere\n", "t.yaml:2:7:", "anchor is not defined");
    CHECK(contains(error_of("nodes: [a, b\n"), ":"));
}

TEST_CASE("loader: the document must be one mapping") {
    check_error("", "t.yaml:1:1:", "empty");
    check_error("# only a comment\n", "t.yaml:1:1:", "empty");
    check_error("- a\n- b\n", "t.yaml:1:1:", "expected a mapping");
    check_error("nodes: [a]\ncost: [[0]]\n---\nnodes: [b]\n", "t.yaml:4:1:", "single YAML document");
}

TEST_CASE("loader: missing keys and mixed forms") {
    check_error("cost: [[0, 1], [1, 0]]\n", "t.yaml:1:1:", "missing 'nodes'");
    check_error("# header\nnodes: [a, b]\n", "t.yaml:2:1:", "missing 'cost'");
    check_error("nodes: [a, b]\nlatency: 1\n", "t.yaml:1:1:", "missing 'bandwidth'");
    check_error("nodes: [a, b]\nbandwidth: 1\n", "t.yaml:1:1:", "missing 'latency'");
    check_error("nodes: [a, b]\nsend_overhead: 1\n", "t.yaml:1:1:", "missing 'cost'");
    check_error("nodes: [a, b]\ncost: [[0, 1], [1, 0]]\nlatency: 1\n", "t.yaml:3:1:",
                "'cost' cannot be combined with 'latency'");
    check_error("nodes: [a, b]\ncost: [[0, 1], [1, 0]]\nrecv_overhead: 1\n", "t.yaml:3:1:",
                "'cost' cannot be combined with 'recv_overhead'");
    check_error("clusters: {sizes: [2], global: 1}\nnodes: [a, b]\n", "t.yaml:2:1:",
                "'clusters' cannot be combined with 'nodes'");
}

TEST_CASE("loader: unknown and repeated top-level keys") {
    check_error("nodes: [a, b]\nlatncy: 1\nbandwidth: 1\n", "t.yaml:2:1:", "unknown key 'latncy'");
    check_error("nodes: [a]\ncost: [[0]]\nnodes: [b]\n", "t.yaml:3:1:", "duplicate key 'nodes'");
    check_error("nodes: [a]\ncost: [[0]]\nclusters:\n  sizes: [1]\n  global: 1\n", "t.yaml:1:1:",
                "'clusters' cannot be combined with 'nodes'");
    check_error("clusters:\n  sizes: [1]\n  global: 1\n  lokal: 2\n", "t.yaml:4:3:",
                "clusters: unknown key 'lokal'");
    check_error("nodes: [a]\nlatency: 0\nbandwidth: 1\nsend_overhead: {fixed: 1, perbyte: 2}\n",
                "t.yaml:4:27:", "send_overhead: unknown key 'perbyte'");
}

TEST_CASE("loader: node names") {
    check_error("nodes: [a, b, a]\ncost: [[0, 1, 1], [1, 0, 1], [1, 1, 0]]\n", "t.yaml:1:15:",
                "duplicate node name 'a'");
    check_error("nodes:\n  - a\n  - b\n  - b\ncost: 0\n", "t.yaml:4:5:", "duplicate node name 'b'");
    check_error("nodes: []\ncost: []\n", "t.yaml:1:8:", "at least one node");
    check_error("nodes: a\ncost: [[0]]\n", "t.yaml:1:8:", "nodes: expected a list");
    check_error("nodes: [a, [b]]\ncost: 0\n", "t.yaml:1:12:", "node name");
    check_error("nodes: [a, \"\"]\ncost: 0\n", "t.yaml:1:12:", "node name");
    check_error("nodes: [a, \"b\\nc\"]\ncost: 0\n", "t.yaml:1:12:", "control characters");
}

TEST_CASE("loader: a matrix must be square, the error points at the bad row") {
    check_error(
        "nodes: [a, b, c]\n"
        "cost:\n"
        "  - [0, 1, 1]\n"
        "  - [1, 0]\n"
        "  - [1, 1, 0]\n",
        "t.yaml:4:5:", "cost row 1: expected 3 entries");
    check_error("nodes: [a, b]\ncost:\n  - [0, 1]\n  - [1, 0]\n  - [1, 1]\n", "t.yaml:5:5:",
                "cost: expected 2 rows (one per node), got 3");
    check_error("nodes: [a, b, c]\ncost:\n  - [0, 1, 1]\n", "t.yaml:3:3:",
                "cost: expected 3 rows (one per node), got 1");
    check_error("nodes: [a, b]\ncost: [[0, 1], 5]\n", "t.yaml:2:16:", "cost row 1: expected a list");
    check_error("nodes: [a, b]\nlatency: [[0, 1], [1, 0, 3]]\nbandwidth: 1\n", "t.yaml:2:26:",
                "latency row 1: expected 2 entries");
    check_error("nodes: [a, b]\ncost: {a: 1}\n", "t.yaml:2:7:", "cost: expected a number or a list of rows");
}

TEST_CASE("loader: costs must be non-negative finite numbers, the error points at the entry") {
    const std::string head = "nodes: [a, b]\ncost:\n  - [0, 1]\n";
    check_error(head + "  - [-5, 0]\n", "t.yaml:4:6:",
                "cost[1][0] must be non-negative and finite, got '-5'");
    check_error(head + "  - [.nan, 0]\n", "t.yaml:4:6:", "must be non-negative and finite");
    check_error(head + "  - [.inf, 0]\n", "t.yaml:4:6:", "must be non-negative and finite");
    check_error(head + "  - [.Inf, 0]\n", "t.yaml:4:6:", "must be non-negative and finite");
    check_error(head + "  - [1e999, 0]\n", "t.yaml:4:6:", "cost[1][0]");
    check_error(head + "  - [ten, 0]\n", "t.yaml:4:6:", "cost[1][0]: expected a number, got 'ten'");
    check_error(head + "  - [12abc, 0]\n", "t.yaml:4:6:", "expected a number");
    check_error(head + "  - [~, 0]\n", "t.yaml:4:6:", "expected a number");
    check_error(head + "  - [[1], 0]\n", "t.yaml:4:6:", "expected a number");
    check_error(head + "  - [\"|\\n\", 0]\n", "t.yaml:4:6:", "expected a number");
    // Diagonal entries are ignored, whatever they hold.
    CHECK(error_of(head + "  - [1, -1]\n").empty());
}

TEST_CASE("loader: bandwidth must be positive, latency non-negative") {
    const std::string head = "nodes: [a, b]\n";
    check_error(head + "latency: 0\nbandwidth: 0\n", "t.yaml:3:12:",
                "bandwidth must be positive and finite, got '0'");
    check_error(head + "latency: 0\nbandwidth: -1e6\n", "t.yaml:3:12:", "bandwidth must be positive");
    check_error(head + "latency: 0\nbandwidth: [[0, 1e6], [0, 0]]\n", "t.yaml:3:24:",
                "bandwidth[1][0] must be positive and finite");
    check_error(head + "latency: -0.001\nbandwidth: 1\n", "t.yaml:2:10:", "latency must be non-negative");
    check_error(head + "latency: .inf\nbandwidth: 1\n", "t.yaml:2:10:",
                "latency must be non-negative and finite");
}

TEST_CASE("loader: overhead errors") {
    const std::string head = "nodes: [a, b, c]\nlatency: 0\nbandwidth: 1\n";
    check_error(head + "send_overhead: [1, 2]\n", "t.yaml:4:16:",
                "send_overhead: expected 3 entries (one per node), got 2");
    check_error(head + "recv_overhead: [1, 2, 3, 4]\n", "t.yaml:4:26:", "recv_overhead: expected 3 entries");
    check_error(head + "send_overhead: -1\n", "t.yaml:4:16:", "send_overhead must be non-negative");
    check_error(head + "send_overhead: {fixed: 1, per_byte: -1}\n", "t.yaml:4:37:",
                "send_overhead.per_byte must be non-negative");
    check_error(head + "send_overhead: [1, {fixed: x}, 2]\n", "t.yaml:4:28:",
                "send_overhead[1].fixed: expected a number");
    check_error(head + "send_overhead: [1, [2], 3]\n", "t.yaml:4:20:",
                "send_overhead[1]: expected a number or");
}

TEST_CASE("loader: subnet errors name the node and point at it") {
    const std::string head = "nodes: [a, b, c]\nlatency: 0.001\nbandwidth: 1e6\n";
    check_error(head + "subnets: [[a, b], [x]]\n", "t.yaml:4:20:", "subnets: unknown node 'x'");
    check_error(head + "subnets:\n  - [a, b]\n  - [c, a]\n", "t.yaml:6:9:", "node 'a' is in two subnets");
    check_error(head + "subnets: [[a], [c]]\n", "t.yaml:4:10:", "node 'b' is in no subnet");
    check_error(head + "subnets: [[a, b, c], []]\n", "t.yaml:4:22:", "a subnet is empty");
    check_error(head + "subnets: [a, b, c]\n", "t.yaml:4:11:", "subnets: expected a list");
    check_error(head + "subnets: {a: b}\n", "t.yaml:4:10:", "subnets: expected a list");
}

TEST_CASE("loader: local_broadcast errors") {
    const std::string head = "nodes: [a, b]\ncost: [[0, 1], [1, 0]]\n";
    check_error(head + "local_broadcast: [1]\n", "t.yaml:3:18:", "local_broadcast: expected 2 entries");
    check_error(head + "local_broadcast: [1, -2]\n", "t.yaml:3:22:",
                "local_broadcast[1] must be non-negative");
    check_error(head + "local_broadcast: {a: 1, z: 2}\n", "t.yaml:3:25:",
                "local_broadcast: unknown node 'z'");
    check_error(head + "local_broadcast: {a: 1}\n", "t.yaml:3:18:", "no entry for node 'b'");
    check_error(head + "local_broadcast: {a: 1, b: 2, a: 3}\n", "t.yaml:3:31:", "node 'a' given twice");
    check_error(head + "local_broadcast: 3\n", "t.yaml:3:18:",
                "local_broadcast: expected one number per node or a map");
}

TEST_CASE("loader: cluster errors") {
    check_error("clusters: {sizes: [2, 0], global: 1}\n", "t.yaml:1:23:",
                "clusters.sizes: expected a positive whole number");
    check_error("clusters: {sizes: [2, 1.5], global: 1}\n", "t.yaml:1:23:", "positive whole number");
    check_error("clusters: {sizes: [2, -1], global: 1}\n", "t.yaml:1:23:", "positive whole number");
    check_error("clusters: {sizes: [], global: 1}\n", "t.yaml:1:19:", "at least one cluster");
    check_error("clusters: {sizes: [2]}\n", "t.yaml:1:11:", "clusters: missing 'global'");
    check_error("clusters: {global: 1}\n", "t.yaml:1:11:", "clusters: missing 'sizes'");
    check_error("clusters: {sizes: [2], global: -4}\n", "t.yaml:1:32:",
                "clusters.global must be non-negative");
    check_error("clusters: [2, 2]\n", "t.yaml:1:11:", "clusters: expected a mapping");
    check_error("clusters: {sizes: [5000, 5000], global: 1}\n", "t.yaml:1:26:", "more than 8192 nodes");
}

TEST_CASE("loader: hostile input gives InputError, never another exception") {
    std::string deep(20000, '[');
    CHECK(!error_of("cost: " + deep + "\n").empty());
    CHECK(!error_of(std::string("nodes: [a]\ncost: [[0]]\n\t\x01\n")).empty());
    CHECK(!error_of("nodes: &x [a, *x]\ncost: 0\n").empty());
    check_error(std::string((64u << 20) + 1, ' '), "t.yaml:1:1:", "larger than 64 MiB");

    // Every prefix of a valid file either parses or gives one located InputError.
    std::ifstream in(examples / "three-subnets.yaml");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(text.size() > 100);
    for (std::size_t n = 0; n <= text.size(); n += 7) {
        try {
            (void)parse_network(text.substr(0, n), "cut.yaml");
        } catch (const InputError& e) {
            const std::string msg = e.what();
            INFO(msg);
            CHECK(msg.rfind("cut.yaml:", 0) == 0);
            CHECK(!contains(msg, "\n"));
        }
    }
}

TEST_CASE("loader: load_network reports unreadable and oversized files by path") {
    TempDir tmp;
    const fs::path missing = tmp.path / "missing.yaml";
    try {
        (void)load_network(missing);
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()) == missing.string() + ": cannot read: No such file or directory");
    }
    try {
        (void)load_network(tmp.path);
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).rfind(tmp.path.string() + ": cannot read: ", 0) == 0);
    }

    const fs::path big = tmp.path / "big.yaml";
    std::ofstream(big).put(' ');
    fs::resize_file(big, (64u << 20) + 1);
    try {
        (void)load_network(big);
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()) == big.string() + ": cannot read: larger than 64 MiB");
    }

    const fs::path bad = tmp.path / "bad.yaml";
    std::ofstream(bad) << "nodes: [a, b]\ncost:\n  - [0, 1]\n  - [x, 0]\n";
    try {
        (void)load_network(bad);
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).rfind(bad.string() + ":4:6: cost[1][0]: expected a number", 0) == 0);
    }
}

TEST_CASE("loader: every file in conf/examples loads") {
    std::size_t loaded = 0;
    for (const auto& entry : fs::directory_iterator(examples)) {
        if (entry.path().extension() != ".yaml") continue;
        INFO(entry.path());
        const std::string stem = entry.path().stem().string();
        if (const auto cut = stem.rfind("-pattern"); cut != std::string::npos && cut + 8 == stem.size()) {
            // A pattern goes with the network file of the same name without "-pattern".
            const Network net = load_network(examples / (stem.substr(0, cut) + ".yaml"));
            CHECK_NOTHROW((void)load_pattern(entry.path(), net));
        } else {
            CHECK_NOTHROW((void)load_network(entry.path()));
        }
        ++loaded;
    }
    CHECK(loaded >= 6);

    CHECK(load_network(examples / "bhat-eq1.yaml").time(0, 2, 1) == 995);
    const Network gusto = load_network(examples / "bhat-eq2-gusto.yaml");
    CHECK(gusto.names() == std::vector<std::string>{"AMES", "ANL", "IND", "USC-ISI"});
    CHECK(gusto.time(0, 3, 1e7) == 39);
    CHECK(load_network(examples / "bhat-eq10-adsl.yaml").time(3, 1, 1) == doctest::Approx(0.1));
    CHECK(load_network(examples / "bhat-eq11.yaml").time(4, 0, 1) == doctest::Approx(0.001));

    const Network khuller = load_network(examples / "khuller-clusters.yaml");
    CHECK(khuller.size() == 23);
    REQUIRE(khuller.subnets());
    CHECK(khuller.subnets()->size() == 9);
    CHECK(khuller.time(0, 7, 1) == 1);
    CHECK(khuller.time(0, 8, 1) == 4);

    const Network three = load_network(examples / "three-subnets.yaml");
    CHECK(three.size() == 8);
    CHECK(!three.subnets());
    const double m = 1e6;
    const double overhead = 20e-6 + 1e-10 * m;
    // a1→a2: 0.1 ms + 1e6 / 125e6 s; a1→b1: 5 ms + 1e6 / 6.25e6 s; c1→c2 inside c.
    CHECK(three.time(0, 1, m) == doctest::Approx(2 * overhead + 1e-4 + 8e-3));
    CHECK(three.time(0, 3, m) == doctest::Approx(2 * overhead + 5e-3 + 0.16));
    CHECK(three.time(6, 7, m) == doctest::Approx(2 * overhead + 1e-4 + 8e-3));
    CHECK(three.time(7, 2, m) == doctest::Approx(2 * overhead + 5e-3 + 0.16));
}

TEST_SUITE_END();

TEST_CASE("loader: format_network gives back the same network (random parametric networks)") {
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        Network net = random_bhat(2 + seed % 9, seed);
        if (seed % 2) {
            Subnets s(2);
            for (NodeId i = 0; i < net.size(); ++i) s[i % 2].push_back(i);
            net.set_subnets(s);
        }
        const Network back = parse_network(format_network(net, seed % 3 ? "2026-11-23T12:00:00Z" : ""), "round-trip");
        REQUIRE(back.names() == net.names());
        CHECK(back.subnets() == net.subnets());
        for (NodeId i = 0; i < net.size(); ++i) {
            for (NodeId j = 0; j < net.size(); ++j) {
                if (i == j) continue;
                for (double m : {0.0, 1e3, 1e6}) CHECK(back.time(i, j, m) == net.time(i, j, m));
            }
        }
    }
    CHECK_THROWS_AS((void)format_network(Network::from_costs({"a", "b"}, {{0, 1}, {1, 0}})), InputError);
}

TEST_CASE("loader: a network text yaml-cpp 0.7's LoadAll never returns on is refused in one line (fuzz finding)") {
    // tests/fuzz/crashes/network-1; such maps also come from peers (set_map, join answers).
    for (const std::string bad : {",", " ,", "#x\n,", ",a", "!t ,", "nodes: [a]\ncost: [[0]]\n---\n,"}) {
        CAPTURE(bad);
        const std::string msg = error_of(bad);
        CHECK(msg.rfind("t.yaml:", 0) == 0);
        CHECK(!contains(msg, "\n"));
    }
}
