// File names in JSON (runtime/byte_text.hpp): any bytes travel and come back exactly.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <random>
#include <string>

#include "hetcast/error.hpp"
#include "hetcast/runtime/byte_text.hpp"
#include "hetcast/runtime/tree.hpp"

using namespace hetcast;
using json = nlohmann::json;

namespace {

/// Bytes that are often UTF-8 (ASCII and well-formed sequences) and often not.
std::string random_name(std::mt19937_64& rng) {
    static const std::string pieces[] = {"a", "Z", "/", ".", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                         "\xe9", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "\xe2\x82"};
    std::string s;
    const std::size_t n = rng() % 12;
    for (std::size_t i = 0; i < n; ++i) {
        if (rng() % 4 == 0) {
            s += static_cast<char>(rng());
        } else {
            s += pieces[rng() % std::size(pieces)];
        }
    }
    return s;
}

/// nlohmann's own verdict: a strict dump throws on anything that is not UTF-8.
bool nlohmann_accepts(const std::string& s) {
    try {
        (void)json(s).dump();
        return true;
    } catch (const json::type_error&) {
        return false;
    }
}

}  // namespace

TEST_CASE("byte text: is_utf8 agrees with nlohmann's strict dump, and any bytes round trip (5000 random names)") {
    std::mt19937_64 rng(41);
    int not_utf8 = 0;
    for (int i = 0; i < 5000; ++i) {
        const std::string s = random_name(rng);
        CAPTURE(json(s).dump(-1, ' ', true, json::error_handler_t::replace));
        CHECK(is_utf8(s) == nlohmann_accepts(s));
        const json j = bytes_to_json(s);
        CHECK(j.is_string() == is_utf8(s));
        not_utf8 += is_utf8(s) ? 0 : 1;
        CHECK(bytes_from_json(json::parse(j.dump()), "name") == s);
    }
    CHECK(not_utf8 > 1000);  // the generator does exercise the hex form
}

TEST_CASE("byte text: a malformed hex form is refused") {
    for (const char* bad : {R"({"hex": "abc"})", R"({"hex": "zz"})", R"({"hex": 12})", R"({"hex": "00", "x": 1})",
                            R"({})", "12", "null", R"(["61"])"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS((void)bytes_from_json(json::parse(bad), "name"), InputError);
    }
    CHECK(bytes_from_json(json::parse(R"({"hex": "6361669E"})"), "name") == "caf\x9e");
}

TEST_CASE("byte text: a tree manifest keeps paths and link targets that are not UTF-8") {
    std::vector<TreeEntry> tree(3);
    tree[0].path = "d\xe9";
    tree[0].kind = TreeEntry::Kind::dir;
    tree[1].path = "d\xe9/caf\xe9.txt";
    tree[1].kind = TreeEntry::Kind::file;
    tree[2].path = "d\xe9/l";
    tree[2].kind = TreeEntry::Kind::symlink;
    tree[2].target = "caf\xe9.txt";
    const auto back = tree_from_json(json::parse(tree_to_json(tree).dump()), 0);
    REQUIRE(back.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) CHECK(back[i].path == tree[i].path);
    CHECK(back[2].target == tree[2].target);
}
