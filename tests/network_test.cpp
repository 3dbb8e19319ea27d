#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "hetcast/error.hpp"
#include "hetcast/model/generators.hpp"
#include "hetcast/model/units.hpp"
#include "support.hpp"

using namespace hetcast;

TEST_CASE("network: the parametric cost is S_i(m) + L_ij + m/B_ij + R_j(m)") {
    const Matrix lat{{0, 0.001}, {0.002, 0}};
    const Matrix bw{{0, 1e6}, {2e6, 0}};
    const Network net = Network::parametric({"a", "b"}, lat, bw, {{1e-4, 1e-9}, {0, 0}}, {{0, 0}, {2e-4, 2e-9}});
    const double m = 1e6;
    CHECK(net.send_busy(0, 1, m) == doctest::Approx(1e-4 + 1e-3));
    CHECK(net.wire(0, 1, m) == doctest::Approx(0.001 + 1.0));
    CHECK(net.recv_busy(1, m) == doctest::Approx(2e-4 + 2e-3));
    CHECK(net.time(0, 1, m) == doctest::Approx(1.1e-3 + 1.001 + 2.2e-3));
    CHECK(net.time(1, 0, m) == doctest::Approx(0.002 + 0.5));  // directed: C_ij != C_ji
    CHECK(net.cost_matrix(m)[0][1] == doctest::Approx(net.time(0, 1, m)));
}

TEST_CASE("network: a cost matrix is size independent and the sender is busy for all of it") {
    const Network net = test::costs(test::bhat_eq1());
    for (double m : {1.0, 1e9}) {
        CHECK(net.time(0, 2, m) == 995);
        CHECK(net.send_busy(0, 2, m) == 995);
        CHECK(net.wire(0, 2, m) == 0);
        CHECK(net.recv_busy(2, m) == 0);
    }
}

TEST_CASE("network: the cluster model") {
    const Network net = Network::clusters({2, 3}, 1, 7);
    CHECK(net.size() == 5);
    CHECK(net.name(0) == "c0n0");
    CHECK(net.name(4) == "c1n2");
    CHECK(net.time(0, 1, 1) == 1);
    CHECK(net.time(1, 2, 1) == 7);
    CHECK(net.time(3, 4, 1) == 1);
    REQUIRE(net.subnets());
    CHECK(*net.subnets() == Subnets{{0, 1}, {2, 3, 4}});
    CHECK(net.default_root() == 0);
}

TEST_CASE("network: bad values are refused") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_AS((void)test::costs({{0, 1}, {1}}), InputError);
    CHECK_THROWS_AS((void)test::costs({{0, -1}, {1, 0}}), InputError);
    CHECK_THROWS_AS((void)test::costs({{0, nan}, {1, 0}}), InputError);
    CHECK_THROWS_WITH_AS((void)Network::from_costs({"a", "a"}, {{0, 1}, {1, 0}}), doctest::Contains("duplicate"),
                         InputError);
    CHECK_THROWS_WITH_AS((void)Network::parametric({"a", "b"}, {{0, 1}, {1, 0}}, {{0, 0}, {1, 0}},
                                                   std::vector<Overhead>(2), std::vector<Overhead>(2)),
                         doctest::Contains("bandwidth"), InputError);
    Network net = test::costs(test::bhat_eq1());
    CHECK_THROWS_AS(net.set_subnets({{0, 1}}), InputError);
    CHECK_THROWS_AS(net.set_subnets({{0, 1}, {1, 2}}), InputError);
    CHECK_THROWS_AS((void)net.id("nobody"), InputError);
}

TEST_CASE("units: byte counts") {
    CHECK(parse_bytes("1048576") == 1048576);
    CHECK(parse_bytes("1MiB") == 1048576);
    CHECK(parse_bytes("64KiB") == 65536);
    CHECK(parse_bytes("10MB") == 1e7);
    CHECK(parse_bytes("1.5GiB") == 1.5 * 1073741824.0);
    for (const char* bad : {"", "-1", "1 MiB", "1XB", "abc", "1e30"}) {
        CHECK_THROWS_AS((void)parse_bytes(bad), InputError);
    }
}

TEST_CASE("generators: the same seed gives the same network, within the ranges") {
    const Network a = random_bhat(20, 7), b = random_bhat(20, 7), c = random_bhat(20, 8);
    CHECK(a.latency() == b.latency());
    CHECK(a.bandwidth() == b.bandwidth());
    CHECK(a.latency() != c.latency());
    for (std::size_t i = 0; i < 20; ++i) {
        for (std::size_t j = 0; j < 20; ++j) {
            if (i == j) continue;
            CHECK(a.latency()[i][j] >= 10e-6);
            CHECK(a.latency()[i][j] <= 1e-3);
            CHECK(a.bandwidth()[i][j] >= 10e3);
            CHECK(a.bandwidth()[i][j] <= 200e6);
        }
    }
}
