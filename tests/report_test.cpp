#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "hetcast/error.hpp"
#include "hetcast/runtime/report.hpp"

using namespace hetcast;
using json = nlohmann::json;

namespace {

Outcome outcome(MessageId m, std::string src, std::string dst, double pred, double ach, bool ok = true,
                std::string error = "") {
    return Outcome{m, std::move(src), std::move(dst), pred, ach, ok, std::move(error)};
}

JobReport sample() {
    JobReport r;
    r.job = 42;
    r.algorithm = "ecef-la";
    r.model = "nonblocking";
    r.bytes = 32u << 20;
    r.predicted = 0.5;
    r.predicted_one_per_link = 0.5;
    r.achieved = 0.6;
    r.lower_bound = 0.4;
    r.outcomes = {outcome(0, "a1", "b1", 0.25, 0.3), outcome(0, "a1", "b2", 0.5, 0.6),
                  outcome(0, "b1", "c1", 0.45, 0, false, "connection reset by c1 (10.0.0.5:7700)")};
    r.skipped = {"c2"};
    return r;
}

/// Valid UTF-8 with quotes, back slashes, control characters and multi-byte characters.
std::string random_text(std::mt19937_64& rng) {
    static const std::vector<std::string> alphabet = {"a", "b", "X", "0", "9", "-", "_", ".", " ", ":",
                                                      "\"", "\\", "/", "\t", "\n", "{", "]", "\x01",
                                                      "\xc3\xa9", "\xe2\x86\x92", "\xf0\x9f\x98\x80"};
    std::uniform_int_distribution<std::size_t> len(0, 12), pick(0, alphabet.size() - 1);
    std::string s;
    for (std::size_t i = len(rng); i > 0; --i) s += alphabet[pick(rng)];
    return s;
}

double random_time(std::mt19937_64& rng) {
    switch (rng() % 4) {
    case 0: return 0;
    case 1: return std::uniform_real_distribution<double>(0, 1e-3)(rng);
    case 2: return std::uniform_real_distribution<double>(0, 100)(rng);
    default: return std::ldexp(static_cast<double>(rng() >> 11), -static_cast<int>(rng() % 80));
    }
}

JobReport random_report(std::mt19937_64& rng) {
    JobReport r;
    r.job = rng();
    r.algorithm = random_text(rng);
    r.model = random_text(rng);
    r.bytes = rng() >> (rng() % 64);
    r.predicted = random_time(rng);
    r.predicted_one_per_link = r.predicted + random_time(rng);
    r.achieved = random_time(rng);
    r.lower_bound = random_time(rng);
    if (rng() % 2) {
        r.relay = "cut-through";
        r.piece = rng() >> 40;
    }
    r.throughput_bound = random_time(rng);
    for (std::size_t i = rng() % 5; i > 0; --i) r.candidates.emplace_back(random_text(rng), random_time(rng));
    for (std::size_t i = rng() % 6; i > 0; --i) {
        const double a = random_time(rng), b = random_time(rng);
        r.hops.push_back({static_cast<MessageId>(rng()), random_text(rng), random_text(rng), rng() >> 20, std::min(a, b),
                          std::max(a, b)});
    }
    for (std::size_t i = rng() % 4; i > 0; --i) r.skipped.push_back(random_text(rng));
    for (std::size_t i = rng() % 20; i > 0; --i) {
        const bool ok = rng() % 3 != 0;
        r.outcomes.push_back(outcome(static_cast<MessageId>(rng()), random_text(rng), random_text(rng),
                                     random_time(rng), ok ? random_time(rng) : 0, ok,
                                     ok ? "" : random_text(rng)));
    }
    return r;
}

void check_same(const JobReport& a, const JobReport& b) {
    CHECK(a.job == b.job);
    CHECK(a.algorithm == b.algorithm);
    CHECK(a.model == b.model);
    CHECK(a.bytes == b.bytes);
    CHECK(a.predicted == b.predicted);
    CHECK(a.predicted_one_per_link == b.predicted_one_per_link);
    CHECK(a.achieved == b.achieved);
    CHECK(a.lower_bound == b.lower_bound);
    CHECK(a.relay == b.relay);
    CHECK(a.piece == b.piece);
    CHECK(a.throughput_bound == b.throughput_bound);
    CHECK(a.candidates == b.candidates);
    CHECK(a.hops == b.hops);
    CHECK(a.skipped == b.skipped);
    REQUIRE(a.outcomes.size() == b.outcomes.size());
    for (std::size_t i = 0; i < a.outcomes.size(); ++i) {
        const Outcome& x = a.outcomes[i];
        const Outcome& y = b.outcomes[i];
        CHECK(x.message == y.message);
        CHECK(x.source == y.source);
        CHECK(x.dest == y.dest);
        CHECK(x.predicted == y.predicted);
        CHECK(x.achieved == y.achieved);
        CHECK(x.ok == y.ok);
        CHECK(x.error == y.error);
    }
}

/// The InputError message report_from_json throws ("" when it accepts `j`).
std::string rejection(const json& j) {
    try {
        (void)report_from_json(j);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("report: ok, failures and ratio") {
    JobReport r = sample();
    CHECK_FALSE(r.ok());
    CHECK(r.failures() == 1);
    CHECK(r.ratio() == doctest::Approx(1.2));

    r.outcomes[2].ok = true;
    CHECK(r.ok());
    CHECK(r.failures() == 0);

    r.predicted = 0;
    CHECK(r.ratio() == 0);
    r.predicted = -1;
    CHECK(r.ratio() == 0);

    const JobReport empty;
    CHECK(empty.ok());
    CHECK(empty.failures() == 0);
    CHECK(empty.ratio() == 0);
}

TEST_CASE("report: to_json writes every field") {
    const json j = to_json(sample());
    CHECK(j.at("job") == "42");
    CHECK(j.at("algorithm") == "ecef-la");
    CHECK(j.at("model") == "nonblocking");
    CHECK(j.at("bytes") == 32u << 20);
    CHECK(j.at("predicted") == 0.5);
    CHECK(j.at("achieved") == 0.6);
    CHECK(j.at("lower_bound") == 0.4);
    CHECK(j.at("ratio").get<double>() == doctest::Approx(1.2));
    CHECK(j.at("ok") == false);
    CHECK(j.at("skipped") == json::array({"c2"}));
    REQUIRE(j.at("outcomes").size() == 3);
    const json& o = j.at("outcomes")[2];
    CHECK(o.at("message") == 0);
    CHECK(o.at("source") == "b1");
    CHECK(o.at("dest") == "c1");
    CHECK(o.at("ok") == false);
    CHECK(o.at("error") == "connection reset by c1 (10.0.0.5:7700)");
}

TEST_CASE("report: JSON round trip over 200 random reports, through text") {
    std::mt19937_64 rng(20240611);
    for (int i = 0; i < 200; ++i) {
        CAPTURE(i);
        const JobReport r = random_report(rng);
        const json j = to_json(r);
        check_same(r, report_from_json(j));
        // Through the wire form as well: doubles and strings survive dump/parse exactly.
        const std::string text = j.dump();
        check_same(r, report_from_json(json::parse(text)));
        CHECK(json::parse(text).at("ok") == r.ok());
    }
}

TEST_CASE("report: the job id is a decimal string, exact past 2^53, numbers from older daemons still read") {
    JobReport r = sample();
    r.job = 18446744073709551615u;
    const json j = to_json(r);
    CHECK(j.at("job") == "18446744073709551615");
    CHECK(report_from_json(json::parse(j.dump())).job == r.job);
    json old = j;
    old["job"] = 9007199254740993u;
    CHECK(report_from_json(old).job == 9007199254740993u);
}

TEST_CASE("report: strings that are not UTF-8 are replaced, so a report always serializes") {
    JobReport r = sample();
    r.outcomes[2].error = "cannot open /srv/caf\xe9/x: \xff\xc3 done \xc3\xa9";
    r.skipped = {"\xed\xa0\x80"};  // a surrogate
    const std::string text = to_json(r).dump();
    const JobReport back = report_from_json(json::parse(text));
    CHECK(back.outcomes[2].error ==
          "cannot open /srv/caf\xef\xbf\xbd/x: \xef\xbf\xbd\xef\xbf\xbd done \xc3\xa9");
    CHECK(back.skipped == std::vector<std::string>{"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"});
    CHECK(back.outcomes[0].source == "a1");
}

TEST_CASE("report: report_from_json rejects missing fields and wrong types") {
    const json good = to_json(sample());
    CHECK(rejection(good).empty());

    // Every top-level field except the derived ones is required.
    for (const char* key : {"job", "algorithm", "model", "bytes", "predicted", "achieved", "lower_bound",
                            "skipped", "outcomes"}) {
        CAPTURE(key);
        json j = good;
        j.erase(key);
        CHECK(rejection(j).find(std::string("missing field '") + key + "'") != std::string::npos);
        // And none accepts null, an object or a nested list of the wrong kind.
        for (const json& wrong : {json(nullptr), json::object(), json::array({json::array()})}) {
            j[key] = wrong;
            CHECK_FALSE(rejection(j).empty());
        }
    }
    for (const char* key : {"message", "source", "dest", "predicted", "achieved", "ok", "error"}) {
        CAPTURE(key);
        json j = good;
        j["outcomes"][1].erase(key);
        CHECK(rejection(j).find("outcomes[1]") != std::string::npos);
        j["outcomes"][1][key] = json::array();
        CHECK(rejection(j).find(std::string("outcomes[1].") + key) != std::string::npos);
    }

    const auto with = [&](const char* key, json v) {
        json j = good;
        j[key] = std::move(v);
        return rejection(j);
    };
    CHECK(!with("job", -1).empty());
    CHECK(!with("job", 1.5).empty());
    CHECK(!with("job", "").empty());
    CHECK(!with("job", "-1").empty());
    CHECK(!with("job", "4x").empty());
    CHECK(!with("job", " 42").empty());
    CHECK(!with("job", "18446744073709551616").empty());
    CHECK(!with("bytes", true).empty());
    CHECK(!with("predicted", "0.5").empty());
    CHECK(!with("algorithm", 7).empty());
    CHECK(!with("ratio", "fast").empty());
    CHECK(!with("ok", 1).empty());
    CHECK(!with("skipped", json::array({"a", 3})).empty());
    CHECK(!with("skipped", "a").empty());
    CHECK(!with("outcomes", json::object()).empty());
    CHECK(!with("outcomes", json::array({5})).empty());
    CHECK(!with("predicted", std::nan("")).empty());
    CHECK(!with("achieved", INFINITY).empty());

    json big = good;
    big["outcomes"][0]["message"] = std::uint64_t{1} << 32;
    CHECK(rejection(big).find("outcomes[0].message") != std::string::npos);

    CHECK(!rejection(json()).empty());
    CHECK(!rejection(json::array()).empty());
    CHECK(!rejection(json("report")).empty());
    CHECK(!rejection(json::object()).empty());
    // The derived fields are optional; unknown fields are ignored (newer senders).
    json lean = good;
    lean.erase("ratio");
    lean.erase("ok");
    lean["extra"] = {{"x", 1}};
    CHECK(rejection(lean).empty());
}

TEST_CASE("report: report_from_json never crashes on mutated reports") {
    std::mt19937_64 rng(7);
    const std::vector<json> junk = {json(nullptr), json(true), json(-1), json(1.5), json("x"),
                                    json::array(), json::object(), json(std::uint64_t{1} << 63)};
    for (int i = 0; i < 500; ++i) {
        json j = to_json(random_report(rng));
        // Replace one random value anywhere in the document with junk.
        std::vector<json*> nodes;
        std::vector<json*> stack = {&j};
        while (!stack.empty()) {
            json* n = stack.back();
            stack.pop_back();
            nodes.push_back(n);
            if (n->is_structured()) {
                for (auto& child : *n) stack.push_back(&child);
            }
        }
        *nodes[rng() % nodes.size()] = junk[rng() % junk.size()];
        try {
            (void)report_from_json(j);
        } catch (const InputError&) {
        }
    }
}

TEST_CASE("report: print_report shows each delivery, the FAILED reason and the summary") {
    std::ostringstream out;
    print_report(out, sample());
    const std::string s = out.str();
    CAPTURE(s);
    CHECK(s.find("job 42: ecef-la, nonblocking model") != std::string::npos);
    CHECK(s.find("source -> dest") != std::string::npos);
    CHECK(s.find("a1 -> b1") != std::string::npos);
    CHECK(s.find("b1 -> c1") != std::string::npos);
    CHECK(s.find("FAILED: connection reset by c1 (10.0.0.5:7700)") != std::string::npos);
    CHECK(s.find("1.20x") != std::string::npos);
    CHECK(s.find("achieved completion  600.000 ms") != std::string::npos);
    CHECK(s.find("predicted            500.000 ms") != std::string::npos);
    CHECK(s.find("lower bound          400.000 ms") != std::string::npos);
    CHECK(s.find("achieved/predicted   1.20x") != std::string::npos);
    CHECK(s.find("skipped members      c2") != std::string::npos);
    CHECK(s.find("FAILED: 1 of 3 deliveries") != std::string::npos);

    // Text from the network cannot move the cursor or start new lines.
    JobReport r = sample();
    r.outcomes[2].error = "bad\n\x1b[2Jthing";
    std::ostringstream evil;
    print_report(evil, r);
    CHECK(evil.str().find('\x1b') == std::string::npos);
    CHECK(evil.str().find("FAILED: bad??[2Jthing") != std::string::npos);

    // Cut-through, auto's runners-up fastest first, and the steady-state bound.
    JobReport ct = sample();
    ct.relay = "cut-through";
    ct.piece = 2 << 20;
    ct.throughput_bound = 5e6;
    ct.bytes = 40'000'000;
    ct.candidates = {{"flat", 9.5}, {"pipeline", 8.25}, {"lcf+ct", 8.5}};
    // 10 MB in 2 s is 40 Mbit/s; 10 MB in 1 s is 80.
    ct.hops = {{0, "a1", "b1", 10'000'000, 0.5, 1.5}, {0, "b1", "c1", 10'000'000, 1.0, 3.0}, {0, "a1", "a2", 10'000'000, 0, 1}};
    std::ostringstream cts;
    print_report(cts, ct);
    CAPTURE(cts.str());
    CHECK(cts.str().find("relays               cut through, pieces of 2097152 bytes") != std::string::npos);
    CHECK(cts.str().find("slowest hop          b1 -> c1  40.0 Mbit/s (1 s to 3 s)") != std::string::npos);
    CHECK(cts.str().find("auto weighed         pipeline 8.25 s, lcf+ct 8.5 s, flat 9.5 s") != std::string::npos);
    CHECK(cts.str().find("steady state       8 s  (bytes / the best pipelined throughput, 40.0 Mbit/s)") != std::string::npos);
    std::ostringstream sfs;
    print_report(sfs, sample());
    CHECK(sfs.str().find("relays") == std::string::npos);
    CHECK(sfs.str().find("auto weighed") == std::string::npos);
    CHECK(sfs.str().find("slowest hop") == std::string::npos);

    // A successful job says no skipped members and no FAILED line.
    r.outcomes.pop_back();
    r.skipped.clear();
    std::ostringstream fine;
    print_report(fine, r);
    CHECK(fine.str().find("FAILED") == std::string::npos);
    CHECK(fine.str().find("skipped members      none") != std::string::npos);
}

TEST_CASE("report: side by side, one column per algorithm and one row per destination") {
    JobReport a = sample();
    JobReport b = sample();
    b.algorithm = "flat";
    b.achieved = 0.88;
    b.predicted = 0.8;
    b.outcomes = {outcome(0, "a1", "b1", 0.4, 0.45), outcome(0, "a1", "b2", 0.8, 0.9),
                  outcome(0, "a1", "c1", 0.7, 0.75), outcome(0, "a1", "d1", 0.75, 0.8)};
    std::ostringstream out;
    print_reports_side_by_side(out, {a, b});
    const std::string s = out.str();
    CAPTURE(s);
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    // Header, 4 destinations, a rule, achieved, predicted, lower bound, ratio.
    REQUIRE(lines.size() == 10);
    CHECK(lines[0].find("ecef-la") != std::string::npos);
    CHECK(lines[0].find("flat") < std::string::npos);
    CHECK(lines[0].find("ecef-la") < lines[0].find("flat"));
    CHECK(lines[1].rfind("b1", 0) == 0);
    CHECK(lines[1].find("300.000 ms") < lines[1].find("450.000 ms"));
    CHECK(lines[3].rfind("c1", 0) == 0);
    CHECK(lines[3].find("FAILED") < lines[3].find("750.000 ms"));
    CHECK(lines[4].rfind("d1", 0) == 0);
    CHECK(lines[4].find(" - ") != std::string::npos);  // ecef-la had no d1
    CHECK(lines[6].rfind("achieved", 0) == 0);
    CHECK(lines[6].find("880.000 ms") != std::string::npos);
    CHECK(lines[7].rfind("predicted", 0) == 0);
    CHECK(lines[7].find("800.000 ms") != std::string::npos);
    CHECK(lines[8].rfind("lower bound", 0) == 0);
    CHECK(lines[9].rfind("achieved/predicted", 0) == 0);
    CHECK(lines[9].find("1.20x") < lines[9].find("1.10x"));

    std::ostringstream none;
    print_reports_side_by_side(none, {});
    CHECK(none.str() == "no reports\n");
}
