#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "temp_dir.hpp"
#include "hetcast/error.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/measure.hpp"

using namespace hetcast;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

std::size_t entries(const fs::path& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(dir)) ++n;
    return n;
}

net::Digest sha_of(std::span<const std::byte> data) {
    net::Sha256 s;
    s.update(data);
    return s.finish();
}

}  // namespace

TEST_CASE("files: destination paths stay under the destination root") {
    const fs::path root = "/srv/spool";
    CHECK(confine(root, "a.bin") == "/srv/spool/a.bin");
    CHECK(confine(root, "sub/dir/a.bin") == "/srv/spool/sub/dir/a.bin");
    CHECK(confine(root, "./x//y") == "/srv/spool/x/y");
    for (const char* bad : {"", "/etc/passwd", "..", "../x", "a/../../x", "a/..", ".", "a/b/../..", "sub/"}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH_AS((void)confine(root, bad), doctest::Contains("leaves the destination root"), InputError);
    }
}

TEST_CASE("files: a destination path over PATH_MAX or with a name over NAME_MAX is refused, the root counted") {
    const std::string name255(255, 'n'), name256(256, 'n');
    CHECK(confine("/srv", "a/" + name255).string().size() == 4 + 1 + 2 + 255);
    CHECK_THROWS_WITH_AS((void)confine("/srv", "a/" + name256 + "/b"), doctest::Contains("name of 256 bytes"), InputError);
    // 4095 bytes with the root fit; one more does not, though the relative part alone would.
    const fs::path root = "/" + std::string(200, 'r');
    std::string rel;
    while (rel.size() + 250 < 4095 - 202) rel += std::string(249, 'p') + "/";
    rel += std::string(4095 - 202 - rel.size(), 'f');
    CHECK((root / rel).string().size() == 4095);
    CHECK_NOTHROW((void)confine(root, rel));
    CHECK_THROWS_WITH_AS((void)confine(root, rel + "g"), doctest::Contains("has 4096 bytes, over PATH_MAX (4096 with its NUL)"),
                         InputError);
    CHECK_NOTHROW((void)confine("/", rel + "g"));
    // The line quotes the path in part only.
    try {
        (void)confine("/srv", std::string(5019, 'd'));
        FAIL("a 5019-byte path was taken");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).size() < 200);
    }
}

TEST_CASE("files: a sink lands under its final name only after the checksum matches") {
    TempDir dir;
    std::vector<std::byte> data(300000);
    std::mt19937 rng(3);
    for (auto& b : data) b = static_cast<std::byte>(rng());
    const fs::path final_path = dir.path / "sub" / "file.bin";
    {
        FileSink sink(final_path);
        sink.write(std::span(data).first(1000));
        sink.write(std::span(data).subspan(1000));
        CHECK_FALSE(fs::exists(final_path));
        CHECK(fs::exists(sink.temp_path()));
        sink.commit(sha_of(data));
    }
    REQUIRE(fs::exists(final_path));
    CHECK(fs::file_size(final_path) == data.size());
    CHECK(file_sha256(final_path) == sha_of(data));
    CHECK(entries(dir.path) == 2);  // sub/ and file.bin: no temporary left

    SUBCASE("a wrong checksum leaves nothing behind") {
        const fs::path other = dir.path / "other.bin";
        {
            FileSink sink(other);
            sink.write(data);
            auto wrong = sha_of(data);
            wrong[0] ^= std::byte{1};
            CHECK_THROWS_WITH_AS(sink.commit(wrong), doctest::Contains("checksum mismatch"), Error);
        }
        CHECK_FALSE(fs::exists(other));
        CHECK(entries(dir.path) == 2);
    }
    SUBCASE("an abandoned sink leaves nothing behind") {
        { FileSink sink(dir.path / "abandoned.bin"); sink.write(data); }
        CHECK(entries(dir.path) == 2);
    }
}

TEST_CASE("measure: least squares recovers latency and bandwidth from minimum round trips") {
    std::mt19937_64 rng(9);
    for (int trial = 0; trial < 50; ++trial) {
        const double lat = 1e-5 + 1e-3 * static_cast<double>(rng() % 1000) / 1000;
        const double bw = 1e6 * static_cast<double>(1 + rng() % 1000);
        std::vector<PingSample> samples;
        for (double size : {64.0, 65536.0, 1048576.0}) {
            for (int rep = 0; rep < 10; ++rep) {
                // Every sample is the true time plus non-negative noise; the minimum survives.
                const double noise = rep == 3 ? 0 : 1e-4 * static_cast<double>(rng() % 100);
                const double rtt = 2 * (lat + size / bw) + noise;
                samples.push_back({size, 10.0 + rep, 0, 10.0 + rep + rtt});
            }
        }
        const LinkFit f = fit_link(samples);
        CHECK(f.sizes == 3);
        CHECK(f.latency == doctest::Approx(lat).epsilon(1e-6));
        CHECK(f.bandwidth == doctest::Approx(bw).epsilon(1e-6));
    }
    CHECK_THROWS_AS((void)fit_link({{64, 0, 0, 1}, {64, 0, 0, 2}}), InputError);
}

TEST_CASE("measure: clock offset from the exchange with the smallest round trip") {
    const double offset = 123.456;  // peer clock − prober clock
    std::vector<PingSample> samples;
    // Symmetric 1 ms one-way delay on the best sample; others are delayed asymmetrically.
    samples.push_back({64, 100.0, 100.001 + offset, 100.002});
    samples.push_back({64, 101.0, 101.009 + offset, 101.010});
    samples.push_back({64, 102.0, 102.001 + offset, 102.020});
    CHECK(estimate_offset(samples) == doctest::Approx(offset).epsilon(1e-12));
}

TEST_CASE("measure: an exchange stamped twice on each side cancels the peer's processing time") {
    std::mt19937_64 rng(4);
    std::uniform_real_distribution<double> u(0, 1);
    for (int trial = 0; trial < 200; ++trial) {
        const double offset = 1e4 * (u(rng) - 0.5);      // peer clock − ours
        const double one_way = 1e-4 + 1e-2 * u(rng);     // the same both ways
        const double processing = 5 * u(rng);            // up to seconds between t2 and t3
        const double t1 = 100 * u(rng);
        const double t2 = t1 + one_way + offset;
        const double t3 = t2 + processing;
        const double t4 = t3 - offset + one_way;
        CHECK(exchange_offset(t1, t2, t3, t4) == doctest::Approx(offset).epsilon(1e-9));
        // Stamping the answer only (halfway through the round trip) is off by half the processing.
        CHECK(std::abs(t3 - (t1 + t4) / 2 - offset) == doctest::Approx(processing / 2).epsilon(1e-6));
    }
}

TEST_CASE("measure: a round-robin tournament covers every pair once, in disjoint rounds") {
    for (std::uint32_t n = 1; n <= 12; ++n) {
        const auto rounds = round_robin(n);
        CHECK(rounds.size() == (n < 2 ? 0 : (n % 2 ? n : n - 1)));
        std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
        for (const auto& round : rounds) {
            std::set<std::uint32_t> busy;
            for (auto [a, b] : round) {
                CHECK(a < b);
                CHECK(b < n);
                CHECK(busy.insert(a).second);
                CHECK(busy.insert(b).second);
                CHECK(seen.insert({a, b}).second);
            }
        }
        CHECK(seen.size() == n * (n - 1) / 2);
    }
}

namespace {

std::vector<std::byte> random_bytes(std::size_t n, std::uint64_t seed) {
    std::vector<std::byte> v(n);
    std::mt19937_64 rng(seed);
    for (auto& b : v) b = static_cast<std::byte>(rng());
    return v;
}

std::vector<std::byte> read_all(const net::MessageBody& body) {
    std::vector<std::byte> out;
    auto reader = body.open();
    std::vector<std::byte> buf(7919);  // a prime: reads straddle the writer's chunks
    while (const std::size_t n = reader->read(buf)) out.insert(out.end(), buf.begin(), buf.begin() + static_cast<long>(n));
    return out;
}

}  // namespace

TEST_CASE("files: the threaded hasher gives SHA-256 of the chunks in order, whatever their sizes") {
    std::mt19937_64 rng(17);
    for (int trial = 0; trial < 30; ++trial) {
        const auto data = random_bytes(1 + rng() % 3'000'000, rng());
        // A queue limit far smaller than the data, so add() has to wait for the worker.
        ChunkHasher threaded(true, 1 + rng() % 200'000);
        ChunkHasher inline_(false);
        for (std::size_t pos = 0; pos < data.size();) {
            const std::size_t n = std::min<std::size_t>(data.size() - pos, 1 + rng() % 300'000);
            const auto piece = std::span(data).subspan(pos, n);
            threaded.add(std::vector<std::byte>(piece.begin(), piece.end()));
            inline_.add(piece);
            pos += n;
        }
        const auto expected = sha_of(data);
        CHECK(threaded.finish() == expected);
        CHECK(inline_.finish() == expected);
    }
    ChunkHasher empty(true);
    CHECK(empty.finish() == sha_of({}));
}

TEST_CASE("files: a verified copy is readable before, during and after it lands, and after its sink is gone") {
    TempDir dir;
    const auto data = random_bytes(FileSink::threaded_hash_from + 12345, 5);
    const fs::path final_path = dir.path / "big.bin";
    std::shared_ptr<const net::MessageBody> body;
    {
        FileSink sink(final_path, data.size());
        for (std::size_t pos = 0; pos < data.size(); pos += 1 << 20) {
            const auto piece = std::span(data).subspan(pos, std::min<std::size_t>(1 << 20, data.size() - pos));
            sink.write(std::vector<std::byte>(piece.begin(), piece.end()));
        }
        CHECK_THROWS_WITH_AS((void)sink.body(), doctest::Contains("not verified"), Error);
        CHECK_THROWS_WITH_AS(sink.land(), doctest::Contains("not verified"), Error);
        sink.verify(sha_of(data));
        body = sink.body();
        CHECK_FALSE(fs::exists(final_path));  // verified is not landed
        CHECK(body->size() == data.size());
        CHECK(body->sha256() == sha_of(data));
        auto reader = body->open();  // opened under the temporary name, read after the rename
        sink.land();
        CHECK(fs::exists(final_path));
        std::vector<std::byte> got(data.size());
        std::size_t n = 0;
        while (const std::size_t k = reader->read(std::span(got).subspan(n))) n += k;
        CHECK(n == data.size());
        CHECK(got == data);
    }
    CHECK(read_all(*body) == data);
    CHECK(entries(dir.path) == 1);

    SUBCASE("a relay's copy that never lands is removed with its sink and still read by sends in flight") {
        const fs::path spool = dir.path / "spool" / "job-1-0";
        std::shared_ptr<const net::MessageBody> relay;
        {
            FileSink sink(spool, data.size());
            sink.write(std::span<const std::byte>(data));
            sink.verify(sha_of(data));
            relay = sink.body();
        }
        CHECK(entries(dir.path / "spool") == 0);
        CHECK(read_all(*relay) == data);
    }
}

TEST_CASE("files: a symlink under the root never leads a copy out of it") {
    TempDir dir;
    const fs::path root = dir.path / "root", outside = dir.path / "outside";
    fs::create_directories(root);
    fs::create_directories(outside);
    const std::vector<std::byte> data(1000, std::byte{7});
    const auto sha = sha_of(data);

    // A directory on the way is a symlink (placed by a local user or an earlier push).
    fs::create_directory_symlink(outside, root / "sub");
    CHECK_THROWS_WITH_AS(FileSink(root / "sub" / "x.bin", data.size(), root), doctest::Contains("symbolic link"), Error);
    fs::create_directories(root / "real");
    fs::create_directory_symlink(outside, root / "real" / "deeper");
    CHECK_THROWS_AS(FileSink(root / "real" / "deeper" / "y" / "x.bin", data.size(), root), Error);
    CHECK(fs::is_empty(outside));

    // The final name is a symlink to a file outside: the copy replaces the link, the file
    // outside keeps its bytes.
    std::ofstream(outside / "victim") << "precious";
    fs::create_symlink(outside / "victim", root / "x.bin");
    {
        FileSink sink(root / "x.bin", data.size(), root);
        sink.write(data);
        sink.commit(sha);
    }
    CHECK_FALSE(fs::is_symlink(root / "x.bin"));
    CHECK(fs::file_size(root / "x.bin") == data.size());
    std::ifstream in(outside / "victim");
    std::string kept;
    in >> kept;
    CHECK(kept == "precious");

    // The directory is swapped for a symlink while the copy arrives: it still lands in the
    // directory it was opened in, under the root.
    fs::create_directories(root / "swap");
    {
        FileSink sink(root / "swap" / "z.bin", data.size(), root);
        fs::rename(root / "swap", root / "swapped");
        fs::create_directory_symlink(outside, root / "swap");
        sink.write(data);
        sink.commit(sha);
    }
    CHECK(fs::exists(root / "swapped" / "z.bin"));
    CHECK_FALSE(fs::exists(outside / "z.bin"));
    // Missing directories are made under the root.
    {
        FileSink sink(root / "a" / "b" / "c.bin", data.size(), root);
        sink.write(data);
        sink.commit(sha);
    }
    CHECK(fs::exists(root / "a" / "b" / "c.bin"));
}

TEST_CASE("files: a copy lands with the source's permission bits less the umask, never wider, never set-uid") {
    TempDir dir;
    const std::vector<std::byte> data(10, std::byte{1});
    const auto sha = sha_of(data);
    struct Case {
        unsigned mode, umask, want;
    };
    for (const Case c : {Case{0600, 022, 0600}, Case{0755, 022, 0755}, Case{0666, 027, 0640}, Case{04755, 022, 0755},
                         Case{02775, 002, 0775}, Case{01777, 022, 0755}, Case{0000, 022, 0000}}) {
        CAPTURE(c.mode);
        CAPTURE(c.umask);
        const fs::path p = dir.path / ("m" + std::to_string(c.mode) + "-" + std::to_string(c.umask));
        {
            FileSink sink(p, data.size(), dir.path);
            sink.set_mode(c.mode, c.umask);
            // While it arrives, only its owner may read it.
            struct stat st {};
            REQUIRE(::stat(sink.temp_path().c_str(), &st) == 0);
            CHECK((st.st_mode & 07777) == 0600);
            sink.write(data);
            sink.commit(sha);
        }
        struct stat st {};
        REQUIRE(::stat(p.c_str(), &st) == 0);
        CHECK((st.st_mode & 07777) == c.want);
    }
}

TEST_CASE("files: a daemon serves only files under its serve_roots, symlinks resolved") {
    TempDir dir;
    const fs::path root = dir.path / "out", other = dir.path / "other";
    fs::create_directories(root / "sub");
    fs::create_directories(other);
    std::ofstream(root / "sub" / "a.bin") << "a";
    std::ofstream(other / "b.bin") << "b";
    fs::create_symlink(other / "b.bin", root / "link-out");
    fs::create_symlink(root / "sub" / "a.bin", other / "link-in");
    const std::vector<fs::path> roots{root};
    CHECK(served(root / "sub" / "a.bin", roots) == fs::canonical(root / "sub" / "a.bin"));
    CHECK(served(other / "link-in", roots) == fs::canonical(root / "sub" / "a.bin"));  // where it really is
    CHECK(served(root / "sub" / ".." / "sub" / "a.bin", roots) == fs::canonical(root / "sub" / "a.bin"));
    for (const fs::path& bad : {other / "b.bin", root / "link-out", root / ".." / "other" / "b.bin"}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH_AS((void)served(bad, roots), doctest::Contains("outside the folders this daemon serves"), InputError);
    }
    CHECK_THROWS_WITH_AS((void)served(root / "sub" / "a.bin", {}), doctest::Contains("serves no files until serve_roots"), InputError);
    CHECK_THROWS_WITH_AS((void)served("sub/a.bin", roots), doctest::Contains("not an absolute path"), InputError);
    CHECK_THROWS_AS((void)served(root / "missing.bin", roots), InputError);
    // A root that is a prefix of another folder's name does not cover it.
    fs::create_directories(dir.path / "out2");
    std::ofstream(dir.path / "out2" / "c.bin") << "c";
    CHECK_THROWS_AS((void)served(dir.path / "out2" / "c.bin", roots), InputError);
    // The root itself is not a file it serves.
    CHECK_THROWS_AS((void)served(root, roots), InputError);
}
