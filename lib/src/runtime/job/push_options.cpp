#include "hetcast/runtime/push_options.hpp"

#include <nlohmann/json.hpp>

#include "hetcast/error.hpp"
#include "hetcast/runtime/job.hpp"
#include "../wire/json_field.hpp"

namespace hetcast {

namespace {

constexpr std::int64_t year_ms = std::int64_t{366} * 86400 * 1000;

}  // namespace

void check(const PushOptions& o) {
    if (o.bwlimit != 0 && o.bwlimit < min_bwlimit) throw InputError("--bwlimit must be at least 1 KiB/s");
    if (o.timeout.count() < 0) throw InputError("--timeout: not negative");
    if (o.timeout.count() > year_ms) throw InputError("--timeout: at most a year");
}

void write_push_options(const PushOptions& o, nlohmann::json& req) {
    check(o);
    req["algo"] = o.algo;
    if (o.bwlimit > 0) req["bwlimit"] = o.bwlimit;
    if (o.piece > 0) req["piece"] = o.piece;
    if (o.timeout.count() > 0) req["timeout"] = static_cast<std::uint64_t>(o.timeout.count());
}

PushOptions read_push_options(const nlohmann::json& req, std::string_view algo) {
    PushOptions o;
    o.algo = field<std::string>(req, "algo", std::string(algo));
    o.bwlimit = field<std::uint64_t>(req, "bwlimit", 0);
    o.piece = field<std::uint64_t>(req, "piece", 0);
    const auto ms = field<std::uint64_t>(req, "timeout", 0);
    if (ms > static_cast<std::uint64_t>(year_ms)) throw InputError("--timeout: at most a year");
    o.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(ms));
    check(o);
    return o;
}

Network capped_for_push(const Network& net, std::uint64_t bwlimit) {
    return bwlimit > 0 ? net.with_rate_limit(static_cast<double>(bwlimit)) : net;
}

}  // namespace hetcast
