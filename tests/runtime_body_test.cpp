// Generated payloads made as they are read, and received files whose names are as long as
// a file name can be.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <algorithm>
#include <limits>
#include <thread>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/files.hpp"

using namespace hetcast;
namespace fs = std::filesystem;

namespace {

/// splitmix64 stepped as a generator: state += gamma, then mixed; words little-endian.
std::vector<std::byte> reference(std::uint64_t size, std::uint64_t seed) {
    std::vector<std::byte> out;
    std::uint64_t state = seed;
    while (out.size() < size) {
        state += 0x9E3779B97F4A7C15ull;
        std::uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        for (int b = 0; b < 8 && out.size() < size; ++b) out.push_back(static_cast<std::byte>(z >> (8 * b)));
    }
    return out;
}

std::vector<std::byte> read_randomly(const net::MessageBody& body, std::mt19937_64& rng) {
    auto r = body.open();
    std::vector<std::byte> got;
    std::vector<std::byte> buf(5000);
    while (true) {
        const std::size_t want = 1 + rng() % buf.size();
        const std::size_t n = r->read(std::span(buf).first(want));
        if (n == 0) break;
        got.insert(got.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
    }
    return got;
}

net::Digest sha_of(const std::vector<std::byte>& v) {
    net::Sha256 h;
    h.update(v);
    return h.finish();
}

}  // namespace

TEST_CASE("generated body: random-sized reads give the splitmix64 bytes of any size and the matching sha") {
    std::mt19937_64 rng(42);
    for (const std::uint64_t size : {0ull, 1ull, 7ull, 8ull, 9ull, 4095ull, 65536ull, 1'000'003ull}) {
        for (const std::uint64_t seed : {0ull, 1ull, 0xFFFFFFFFFFFFFFFFull}) {
            CAPTURE(size);
            CAPTURE(seed);
            const auto body = make_generated_body(size, seed);
            CHECK(body->size() == size);
            const auto want = reference(size, seed);
            CHECK(read_randomly(*body, rng) == want);
            CHECK(net::same_digest(body->sha256(), sha_of(want)));
            CHECK(net::same_digest(body->sha256(), sha_of(want)));  // kept, same again
        }
    }
}

TEST_CASE("generated body: the same seed gives the same sha and another seed another and any offset reads") {
    const auto a = make_generated_body(300'001, 5), b = make_generated_body(300'001, 5), c = make_generated_body(300'001, 6);
    CHECK(net::same_digest(a->sha256(), b->sha256()));
    CHECK(!net::same_digest(a->sha256(), c->sha256()));
    CHECK(!net::same_digest(make_generated_body(300'000, 5)->sha256(), a->sha256()));
    const auto want = reference(300'001, 5);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 200; ++i) {
        const std::uint64_t at = rng() % want.size();
        std::vector<std::byte> out(rng() % 100);
        GeneratedBody::generate(5, at, out);
        for (std::size_t k = 0; k < out.size() && at + k < want.size(); ++k) REQUIRE(out[k] == want[at + k]);
    }
    // A reader that skips ahead goes on from there.
    auto r = a->open();
    r->skip(12345);
    std::vector<std::byte> out(1000);
    CHECK(r->read(out) == 1000);
    CHECK(std::equal(out.begin(), out.end(), want.begin() + 12345));
}

TEST_CASE("generated body: the sha is computed once whichever thread asks first") {
    const auto body = make_generated_body(2'000'000, 9);
    const auto want = sha_of(reference(2'000'000, 9));
    std::vector<std::thread> ts;
    std::vector<net::Digest> got(4);
    for (std::size_t i = 0; i < got.size(); ++i) ts.emplace_back([&, i] { got[i] = body->sha256(); });
    for (auto& t : ts) t.join();
    for (const auto& d : got) CHECK(net::same_digest(d, want));
}

TEST_CASE("file sink: a 255-byte file name lands and its temporary name fits and keeps the tag") {
    const fs::path dir = fs::temp_directory_path() / ("hetcast-longname-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const std::size_t len : {1u, 200u, 229u, 230u, 231u, 254u, 255u}) {
        CAPTURE(len);
        const std::string name(len, 'n');
        const std::string t = temp_name(name, 4294967295u);
        CHECK(t.size() <= 255);
        CHECK(t.front() == '.');
        CHECK(t.ends_with(".hetcast-4294967295.part"));
        CHECK(t.substr(1, std::min<std::size_t>(len, 10)) == name.substr(0, 10));
        CHECK(temp_name(name, std::numeric_limits<std::uint64_t>::max()).size() <= 255);

        const std::vector<std::byte> bytes(1000, std::byte{3});
        {
            FileSink sink(dir / name, bytes.size());
            CHECK(sink.temp_path().filename().string().size() <= 255);
            sink.write(std::span<const std::byte>(bytes));
            sink.commit(sha_of(bytes));
        }
        CHECK(fs::file_size(dir / name) == bytes.size());
    }
    // Nothing is left but the landed files.
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        CHECK(e.path().filename().string().front() != '.');
        ++n;
    }
    CHECK(n == 7);
    fs::remove_all(dir);
}

TEST_CASE("suffix_of: the bytes from an offset on, in reads of any size, with the whole message's checksum") {
    std::mt19937_64 rng(77);
    for (int trial = 0; trial < 100; ++trial) {
        auto bytes = std::make_shared<std::vector<std::byte>>(rng() % 300'000);
        for (auto& b : *bytes) b = static_cast<std::byte>(rng());
        const auto whole = std::make_shared<BufferBody>(bytes);
        const std::uint64_t offset = bytes->empty() ? 0 : rng() % (bytes->size() + 1);
        const auto tail = suffix_of(whole, offset);
        CHECK(tail->size() == bytes->size() - offset);
        CHECK(net::same_digest(tail->sha256(), whole->sha256()));
        auto reader = tail->open();
        std::vector<std::byte> got;
        while (true) {
            std::vector<std::byte> buf(1 + rng() % 70'000);
            const std::size_t n = reader->read(buf);
            if (n == 0) break;
            got.insert(got.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
        }
        CHECK(std::equal(got.begin(), got.end(), bytes->begin() + static_cast<std::ptrdiff_t>(offset), bytes->end()));
        CHECK(got.size() == bytes->size() - offset);
    }
    CHECK_THROWS_AS((void)suffix_of(std::make_shared<BufferBody>(std::make_shared<std::vector<std::byte>>(10)), 11), InputError);
}

TEST_CASE("file sink: a copy resumed at a piece boundary keeps its prefix, takes the rest, and verifies the whole") {
    const auto dir = std::filesystem::temp_directory_path() / ("hetcast-resume-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::mt19937_64 rng(5);
    std::vector<std::byte> bytes(1 << 20);
    for (auto& b : bytes) b = static_cast<std::byte>(rng());
    const auto sha = BufferBody(std::make_shared<std::vector<std::byte>>(bytes)).sha256();
    {
        FileSink sink(dir / "f.bin", bytes.size());
        sink.write(std::span(bytes).first(700'000));       // an earlier try got this far
        sink.resume_at(512 << 10);                          // its verified pieces
        CHECK(sink.written() == 512 << 10);
        CHECK_THROWS_AS(sink.resume_at(600 << 10), Error);  // not past what it holds
        sink.write(std::span(bytes).subspan(512 << 10));
        sink.commit(sha);
    }
    std::ifstream in(dir / "f.bin", std::ios::binary);
    std::vector<char> landed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(landed.size() == bytes.size());
    CHECK(std::memcmp(landed.data(), bytes.data(), bytes.size()) == 0);
    {
        FileSink sink(dir / "g.bin", bytes.size());
        sink.write(std::span(bytes).first(700'000));
        sink.resume_at(512 << 10);
        auto other = bytes;
        other[600'000] ^= std::byte{1};
        sink.write(std::span(other).subspan(512 << 10));   // the rest, damaged
        CHECK_THROWS_AS(sink.verify(sha), Error);
    }
    CHECK_FALSE(std::filesystem::exists(dir / "g.bin"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("file body: with serve_roots, the file it opened must lie under one, all readers share that descriptor") {
    const auto dir = std::filesystem::temp_directory_path() / ("hetcast-served-" + std::to_string(::getpid()));
    const auto root = dir / "root", other = dir / "other";
    std::filesystem::create_directories(root);
    std::filesystem::create_directories(other);
    std::ofstream(root / "in.bin") << "inside";
    std::ofstream(other / "out.bin") << "outside";
    std::filesystem::create_symlink(other / "out.bin", root / "link-out");
    const std::vector<std::filesystem::path> roots{root};
    const FileBody in(root / "in.bin", &roots);
    CHECK(in.size() == 6);
    CHECK_THROWS_WITH_AS(FileBody(root / "link-out", &roots), doctest::Contains("outside the folders"), InputError);
    CHECK_THROWS_AS(FileBody(other / "out.bin", &roots), InputError);
    CHECK(FileBody(other / "out.bin").size() == 7);  // no roots: an embedded peer's own file
    // Renamed away after it was opened, the body still reads what it checked.
    std::filesystem::rename(root / "in.bin", root / "moved.bin");
    std::filesystem::create_symlink(other / "out.bin", root / "in.bin");
    auto r = in.open();
    std::vector<std::byte> buf(64);
    const std::size_t n = r->read(buf);
    CHECK(std::string(reinterpret_cast<const char*>(buf.data()), n) == "inside");
    CHECK_THROWS_AS(FileBody(root / "missing.bin", &roots), InputError);
    CHECK_THROWS_WITH_AS(FileBody(root, &roots), doctest::Contains("not a regular file"), InputError);
    std::filesystem::remove_all(dir);
}
