#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "hetcast/net/digest.hpp"
#include "hetcast/net/frame.hpp"

using namespace hetcast::net;

namespace {
std::vector<std::byte> bytes(std::string_view s) {
    std::vector<std::byte> v(s.size());
    std::memcpy(v.data(), s.data(), s.size());
    return v;
}
}  // namespace

TEST_CASE("frame: round trip of every type and random payloads") {
    std::mt19937_64 rng(5);
    for (std::uint8_t t = 1; t <= 20; ++t) {
        REQUIRE(is_known(t));
        std::vector<std::byte> payload(rng() % 300);
        for (auto& b : payload) b = static_cast<std::byte>(rng());
        FrameHeader h{static_cast<FrameType>(t), static_cast<std::uint16_t>(rng()), rng(),
                      static_cast<std::uint32_t>(rng()), 0};
        const auto wire = encode(h, payload);
        CHECK(wire.size() == header_size + payload.size());
        const Decoded d = decode(wire, 1 << 20);
        REQUIRE(d.status == Decoded::Status::complete);
        CHECK(d.header.type == h.type);
        CHECK(d.header.flags == h.flags);
        CHECK(d.header.job == h.job);
        CHECK(d.header.message == h.message);
        CHECK(d.header.length == payload.size());
        CHECK(d.consumed == wire.size());
        CHECK(std::equal(d.payload.begin(), d.payload.end(), payload.begin(), payload.end()));
    }
    CHECK_FALSE(is_known(0));
    CHECK_FALSE(is_known(21));
}

TEST_CASE("frame: the header is big-endian with the documented layout") {
    const auto wire = encode(FrameType::data, 0x0102030405060708ull, 0x0a0b0c0d, "xy");
    const std::vector<unsigned> expect{0x48, 0x43, 0x53, 0x54, 2, 8, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8,
                                       0x0a, 0x0b, 0x0c, 0x0d, 0, 0, 0, 2, 'x', 'y'};
    REQUIRE(wire.size() == expect.size());
    for (std::size_t i = 0; i < expect.size(); ++i) CHECK(std::to_integer<unsigned>(wire[i]) == expect[i]);
}

TEST_CASE("frame: every truncation needs more, never reads past the input") {
    const auto wire = encode(FrameType::request, 7, 9, "{\"op\":\"status\"}");
    for (std::size_t cut = 0; cut < wire.size(); ++cut) {
        const Decoded d = decode(std::span(wire.data(), cut), 1 << 20);
        CHECK(d.status == Decoded::Status::need_more);
        CHECK(d.consumed == 0);
    }
    // Two frames back to back decode one at a time.
    auto two = wire;
    two.insert(two.end(), wire.begin(), wire.end());
    const Decoded first = decode(two, 1 << 20);
    REQUIRE(first.status == Decoded::Status::complete);
    const Decoded second = decode(std::span(two).subspan(first.consumed), 1 << 20);
    CHECK(second.status == Decoded::Status::complete);
    CHECK(as_text(second.payload) == "{\"op\":\"status\"}");
}

TEST_CASE("frame: oversized, unknown-type, bad-version and bad-magic frames are bad from the header alone") {
    auto wire = encode(FrameType::data, 1, 1, std::string(100, 'a'));
    const Decoded big = decode(std::span(wire.data(), header_size), 99);
    CHECK(big.status == Decoded::Status::bad);
    CHECK(big.error.find("exceeds") != std::string::npos);

    // A header claiming 4 GiB with no payload behind it: bad at once, nothing allocated.
    auto huge = wire;
    for (int i = 20; i < 24; ++i) huge[i] = std::byte{0xff};
    CHECK(decode(std::span(huge.data(), header_size), 1 << 20).status == Decoded::Status::bad);

    auto unknown = wire;
    unknown[5] = std::byte{200};
    CHECK(decode(unknown, 1 << 20).error.find("unknown frame type 200") != std::string::npos);
    auto version = wire;
    version[4] = std::byte{9};
    CHECK(decode(version, 1 << 20).error.find("version 9") != std::string::npos);
    auto magic = wire;
    magic[0] = std::byte{'G'};
    CHECK(decode(magic, 1 << 20).status == Decoded::Status::bad);
}

TEST_CASE("frame: random bytes never crash the decoder") {
    std::mt19937_64 rng(11);
    for (int trial = 0; trial < 20000; ++trial) {
        std::vector<std::byte> junk(rng() % 64);
        for (auto& b : junk) b = static_cast<std::byte>(rng());
        if (trial % 2 && junk.size() >= 5) {  // half of them with a valid prefix, to reach deeper
            const auto prefix = bytes("HCST\x01");
            std::copy(prefix.begin(), prefix.end(), junk.begin());
        }
        const Decoded d = decode(junk, 1024);
        if (d.status == Decoded::Status::complete) {
            CHECK(d.consumed <= junk.size());
            CHECK(d.header.length <= 1024);
        }
    }
}

TEST_CASE("digest: SHA-256 matches FIPS 180-2 vectors") {
    Sha256 h;
    const auto abc = bytes("abc");
    h.update(abc);
    CHECK(to_hex(h.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    Sha256 split;
    const auto part1 = bytes("a"), part2 = bytes("bc");
    split.update(part1);
    split.update(part2);
    CHECK(to_hex(split.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
