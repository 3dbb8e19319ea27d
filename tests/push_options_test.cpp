// The options of a push as `hetcast push`, the daemon and an embedded Node share them.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <random>

#include "hetcast/error.hpp"
#include "hetcast/runtime/push_options.hpp"

using namespace hetcast;

TEST_CASE("push options: property: what the command line writes into a request the daemon reads back") {
    std::mt19937_64 rng(2611);
    const char* algos[] = {"auto", "fef+ct", "pipeline", "wrp", "exchange"};
    for (int i = 0; i < 500; ++i) {
        PushOptions o;
        o.algo = algos[rng() % 5];
        o.bwlimit = rng() % 3 == 0 ? 0 : 1024 + rng() % (std::uint64_t{1} << 40);
        o.piece = rng() % 2 == 0 ? 0 : std::uint64_t{4096} << (rng() % 12);
        o.timeout = std::chrono::milliseconds(rng() % 3 == 0 ? 0 : rng() % (std::int64_t{366} * 86400 * 1000));
        nlohmann::json req{{"cmd", "push"}};
        write_push_options(o, req);
        const PushOptions back = read_push_options(nlohmann::json::parse(req.dump()), "wrp");
        CHECK(back.algo == o.algo);
        CHECK(back.bwlimit == o.bwlimit);
        CHECK(back.piece == o.piece);
        CHECK(back.timeout == o.timeout);
        CHECK(req.contains("bwlimit") == (o.bwlimit > 0));  // defaults stay out of the request
    }
}

TEST_CASE("push options: the defaults, and what neither side accepts") {
    CHECK(read_push_options(nlohmann::json::object()).algo == "auto");
    CHECK(read_push_options(nlohmann::json::object(), "wrp").algo == "wrp");
    PushOptions slow;
    slow.bwlimit = 1023;
    CHECK_THROWS_WITH_AS(check(slow), "--bwlimit must be at least 1 KiB/s", InputError);
    nlohmann::json req;
    CHECK_THROWS_AS(write_push_options(slow, req), InputError);
    CHECK_THROWS_AS((void)read_push_options({{"bwlimit", 10}}), InputError);
    CHECK_THROWS_WITH_AS((void)read_push_options({{"bwlimit", "fast"}}), "request: 'bwlimit' has the wrong type", InputError);
    CHECK_THROWS_WITH_AS((void)read_push_options({{"timeout", std::uint64_t{400} * 86400 * 1000}}),
                         "--timeout: at most a year", InputError);
    PushOptions backwards;
    backwards.timeout = std::chrono::milliseconds(-1);
    CHECK_THROWS_AS(check(backwards), InputError);
    CHECK(read_push_options({{"bwlimit", 1024}, {"timeout", 0}}).bwlimit == 1024);
}
