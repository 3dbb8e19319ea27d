// Cut-through relaying: the piece tracker on its own (no sockets), then peers over loopback
// relaying pieces as they arrive — corrupt pieces caught and fetched again, a slow child
// that does not hold up its sibling.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "hetcast/runtime/peer.hpp"
#include "temp_dir.hpp"
#include "wait.hpp"
#include "identity.hpp"

using namespace hetcast;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<const std::vector<std::byte>> random_bytes(std::size_t n, std::uint64_t seed) {
    auto v = std::make_shared<std::vector<std::byte>>(n);
    std::mt19937_64 rng(seed);
    for (auto& b : *v) b = static_cast<std::byte>(rng());
    return v;
}

/// Everything a reader of `body` gets when it only reads what is ready now.
std::vector<std::byte> read_ready(net::MessageBody::Reader& r) {
    std::vector<std::byte> out, buf(777);
    while (r.ready([] {})) {
        const std::size_t n = r.read(buf);
        if (n == 0) break;
        out.insert(out.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
    }
    return out;
}

}  // namespace

TEST_CASE("pieces: readers see exactly the verified prefix, a corrupt piece holds it until a good copy comes") {
    std::mt19937_64 rng(13);
    for (int trial = 0; trial < 200; ++trial) {
        CAPTURE(trial);
        const std::size_t size = rng() % 50'000;
        const std::uint64_t piece = 1 + rng() % 4'000;
        const auto bytes = random_bytes(size, rng());
        const BufferBody whole(bytes);
        const auto digests = piece_digests(whole, piece);
        REQUIRE(digests.size() == piece_count(size, piece));
        TempDir dir;
        const bool on_disk = trial % 2 == 1;
        std::shared_ptr<const int> fd;
        if (on_disk) {
            const int raw = ::open((dir.path / "part").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
            REQUIRE(raw >= 0);
            fd = std::shared_ptr<const int>(new int(raw), [](const int* p) {
                ::close(*p);
                delete p;
            });
        }
        auto t = std::make_shared<PieceTracker>(size, piece, digests, fd);
        auto reader = t->body(whole.sha256())->open();
        std::vector<std::byte> seen;
        std::set<std::uint64_t> corrupted, reported;
        std::size_t at = 0;
        while (at < size) {
            const std::size_t n = std::min<std::size_t>(size - at, 1 + rng() % 3'000);
            std::vector<std::byte> chunk(bytes->begin() + static_cast<std::ptrdiff_t>(at),
                                         bytes->begin() + static_cast<std::ptrdiff_t>(at + n));
            if (rng() % 8 == 0) {
                const std::size_t flip = rng() % n;
                chunk[flip] ^= std::byte{0x5a};
                corrupted.insert((at + flip) / piece);
            }
            if (fd) REQUIRE(::pwrite(*fd, chunk.data(), n, static_cast<off_t>(at)) == static_cast<ssize_t>(n));
            for (std::uint64_t k : t->add(chunk)) reported.insert(k);
            at += n;
            const auto got = read_ready(*reader);
            seen.insert(seen.end(), got.begin(), got.end());
            // Never past what is verified, and what is read is the message's own bytes.
            CHECK(seen.size() == t->verified());
            CHECK(std::equal(seen.begin(), seen.end(), bytes->begin()));
        }
        CHECK(reported == corrupted);
        const auto missing = t->missing();
        CHECK(std::set<std::uint64_t>(missing.begin(), missing.end()) == corrupted);
        CHECK(t->complete() == corrupted.empty());
        for (std::uint64_t k : corrupted) {
            const std::size_t from = k * piece, n = std::min<std::size_t>(size, from + piece) - from;
            std::vector<std::byte> good(bytes->begin() + static_cast<std::ptrdiff_t>(from),
                                        bytes->begin() + static_cast<std::ptrdiff_t>(from + n));
            auto bad = good;
            bad[0] ^= std::byte{1};
            CHECK_FALSE(t->replace(k, bad));
            if (fd) REQUIRE(::pwrite(*fd, good.data(), n, static_cast<off_t>(from)) == static_cast<ssize_t>(n));
            CHECK(t->replace(k, good));
        }
        const auto rest = read_ready(*reader);
        seen.insert(seen.end(), rest.begin(), rest.end());
        CHECK(t->complete());
        CHECK(seen == *bytes);
        if (!fd) CHECK(*t->joined() == *bytes);
    }
}

TEST_CASE("pieces: a waiting reader is woken by progress and by failure, which it then reports") {
    const auto bytes = random_bytes(10'000, 1);
    const BufferBody whole(bytes);
    auto t = std::make_shared<PieceTracker>(bytes->size(), 4'096, piece_digests(whole, 4'096), nullptr);
    auto reader = t->body(whole.sha256())->open();
    std::atomic<int> woken{0};
    CHECK_FALSE(reader->ready([&] { ++woken; }));
    t->add(std::span(*bytes).first(100));  // inside the first piece: nothing verified yet
    CHECK(woken == 0);
    t->add(std::span(*bytes).subspan(100, 4'000));
    CHECK(woken == 1);
    std::vector<std::byte> buf(10'000);
    CHECK(reader->ready([] {}));
    CHECK(reader->read(buf) == 4'096);
    CHECK_FALSE(reader->ready([&] { ++woken; }));
    t->fail("the sender is gone");
    CHECK(woken == 2);
    CHECK(reader->ready([] {}));
    CHECK_THROWS_WITH_AS(reader->read(buf), "the sender is gone", Error);
    CHECK_THROWS_AS(t->wait_for(10'000, std::chrono::milliseconds(10)), Error);
}

TEST_CASE("pieces: a tracker refuses digests that do not match its pieces") {
    CHECK_THROWS_AS(PieceTracker(10'000, 4'096, std::vector<net::Digest>(2), nullptr), InputError);
    CHECK_THROWS_AS(PieceTracker(10, 0, {}, nullptr), InputError);
    CHECK(piece_count(0, 4'096) == 0);
    CHECK(piece_count(4'096, 4'096) == 1);
    CHECK(piece_count(4'097, 4'096) == 2);
}

namespace {

/// Peers in one process; `tamper[name]` sees the cut-through data each one receives.
struct Chain {
    TempDir dir;
    std::vector<std::unique_ptr<Peer>> peers;
    std::vector<std::string> names;
    std::mutex mu;
    std::vector<std::string> logs;
    std::map<std::string, std::function<void(std::uint64_t, std::span<std::byte>)>> tamper;

    explicit Chain(std::size_t n) {
        std::vector<Member> members;
        for (std::size_t i = 0; i < n; ++i) names.push_back("p" + std::to_string(i));
        for (std::size_t i = 0; i < n; ++i) {
            PeerConfig c;
            c.name = names[i];
            c.identity = test::identity(c.name);
            c.dest_root = dir.path / c.name;
            c.spool = dir.path / (c.name + "-spool");
            c.chunk = 64 << 10;
            c.stall_timeout = std::chrono::milliseconds(10000);
            c.log = [this](LogLevel, const std::string& line) {
                std::lock_guard lock(mu);
                logs.push_back(line);
            };
            c.tamper = [this, name = c.name](std::uint64_t, MessageId, std::uint64_t offset, std::span<std::byte> data) {
                if (auto it = tamper.find(name); it != tamper.end()) it->second(offset, data);
            };
            peers.push_back(std::make_unique<Peer>(c));
            peers.back()->start();
            members.push_back({c.name, "127.0.0.1", peers.back()->port()});
        }
        for (auto& p : peers) p->set_members(members);
    }
    ~Chain() {
        for (auto& p : peers) p->stop();
    }
    [[nodiscard]] Network network() const {
        const std::size_t n = names.size();
        return Network::parametric(names, Matrix(n, std::vector<double>(n, 1e-4)), Matrix(n, std::vector<double>(n, 1e9)),
                                   std::vector<Overhead>(n), std::vector<Overhead>(n));
    }
    [[nodiscard]] std::vector<std::byte> landed(std::size_t i, const std::string& name) const {
        std::ifstream in(dir.path / names[i] / name, std::ios::binary);
        std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::vector<std::byte> out(c.size());
        if (!c.empty()) std::memcpy(out.data(), c.data(), c.size());  // memcpy of null is undefined, even of 0 bytes
        return out;
    }
};

/// A cut-through schedule over `edges` (parent, child), children in order.
Schedule tree(std::size_t n, double size, std::uint64_t piece, const std::vector<std::pair<NodeId, NodeId>>& edges) {
    std::vector<NodeId> dests;
    for (NodeId i = 1; i < n; ++i) dests.push_back(i);
    Schedule s("test-tree", n, {Message{0, size, dests}});
    s.relay = Relay::cut_through;
    s.piece = piece;
    for (const auto& [from, to] : edges) s.add_transfer(0, from, to);
    return s;
}

JobReport push(Chain& c, const Network& net, Schedule s, JobInput in) {
    JobSpec spec;
    spec.network = &net;
    spec.schedule = std::move(s);
    spec.inputs.push_back(std::move(in));
    spec.timeout = std::chrono::seconds(60);
    return c.peers[0]->run(std::move(spec));
}

void check_no_leftovers(const fs::path& root) {
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (e.is_regular_file()) CHECK_MESSAGE(e.path().filename().string().find(".part") == std::string::npos, e.path().string());
        if (e.is_regular_file()) CHECK(e.path().string().find("-spool") == std::string::npos);
    }
}

}  // namespace

TEST_CASE("relay: a file and a buffer go down a cut-through chain and land identical everywhere") {
    Chain c(5);
    const Network net = c.network();
    const std::vector<std::pair<NodeId, NodeId>> chain{{0, 1}, {1, 2}, {2, 3}, {3, 4}};
    const auto bytes = random_bytes((3 << 20) + 12'345, 7);
    const fs::path src = c.dir.path / "source.bin";
    std::ofstream(src, std::ios::binary).write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));

    const JobReport file = push(c, net, tree(5, static_cast<double>(bytes->size()), 256 << 10, chain),
                                {std::make_shared<FileBody>(src), "copy.bin"});
    CHECK(file.ok());
    for (std::size_t i = 1; i < 5; ++i) CHECK(c.landed(i, "copy.bin") == *bytes);
    CHECK(file.relay == "cut-through");
    CHECK(file.piece == 256 << 10);
    // One hop per edge, as its receiver saw it.
    REQUIRE(file.hops.size() == chain.size());
    std::set<std::pair<std::string, std::string>> edges;
    for (const Hop& h : file.hops) {
        edges.emplace(h.from, h.to);
        CHECK(h.bytes == bytes->size());
        CHECK(0 <= h.start);
        CHECK(h.start <= h.end);
        CHECK(h.end <= file.achieved + 1e-9);
    }
    CHECK(edges == std::set<std::pair<std::string, std::string>>{{"p0", "p1"}, {"p1", "p2"}, {"p2", "p3"}, {"p3", "p4"}});

    const JobReport buffer = push(c, net, tree(5, static_cast<double>(bytes->size()), 64 << 10, chain),
                                  {std::make_shared<BufferBody>(bytes), ""});
    CHECK(buffer.ok());
    for (std::size_t i = 1; i < 5; ++i) {
        auto d = c.peers[i]->receive(std::chrono::seconds(5));
        REQUIRE(d);
        CHECK(*d->bytes == *bytes);
    }
    check_no_leftovers(c.dir.path);
}

TEST_CASE("relay: a piece corrupted on the way is caught where it arrives, fetched again, and nothing bad lands") {
    Chain c(4);
    const Network net = c.network();
    const auto bytes = random_bytes(2 << 20, 11);
    const std::uint64_t piece = 128 << 10;
    std::atomic<int> seen{0}, flipped{0};
    // Piece 5 arrives damaged at p2, once: p2 must not pass it on, p3 must get good bytes.
    c.tamper["p2"] = [&](std::uint64_t offset, std::span<std::byte> data) {
        const std::uint64_t target = 5 * piece + 1000;
        if (offset <= target && target < offset + data.size() && seen++ == 0) {
            data[target - offset] ^= std::byte{0xff};
            ++flipped;
        }
    };
    const fs::path src = c.dir.path / "source.bin";
    std::ofstream(src, std::ios::binary).write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    const JobReport r = push(c, net, tree(4, static_cast<double>(bytes->size()), piece, {{0, 1}, {1, 2}, {2, 3}}),
                             {std::make_shared<FileBody>(src), "copy.bin"});
    CHECK(r.ok());
    CHECK(flipped == 1);
    CHECK(seen == 2);  // and once more, fetched again
    for (std::size_t i = 1; i < 4; ++i) CHECK(c.landed(i, "copy.bin") == *bytes);
    std::lock_guard lock(c.mu);
    CHECK(std::any_of(c.logs.begin(), c.logs.end(), [](const std::string& l) {
        return l.find("piece 5 of message 0 from 'p1' failed its SHA-256") != std::string::npos;
    }));
    check_no_leftovers(c.dir.path);
}

TEST_CASE("relay: a relay whose every frame arrives damaged still passes on only good pieces") {
    Chain c(3);
    const Network net = c.network();
    const auto bytes = random_bytes(1 << 20, 12);
    const std::uint64_t piece = 64 << 10;
    // Every frame is damaged the first time its bytes arrive; the copies fetched again are not.
    std::set<std::uint64_t> seen;
    c.tamper["p1"] = [&](std::uint64_t offset, std::span<std::byte> data) {
        if (seen.insert(offset).second) data[0] ^= std::byte{1};
    };
    const JobReport r = push(c, net, tree(3, static_cast<double>(bytes->size()), piece, {{0, 1}, {1, 2}}),
                             {std::make_shared<BufferBody>(bytes), ""});
    for (const auto& o : r.outcomes) CHECK_MESSAGE(o.ok, o.error);
    for (std::size_t i = 1; i < 3; ++i) {
        auto d = c.peers[i]->receive(std::chrono::seconds(5));
        REQUIRE(d);
        CHECK(*d->bytes == *bytes);
    }
}

TEST_CASE("relay: a piece damaged every time it comes fails the message, nothing lands, downstream either") {
    Chain c(3);
    const Network net = c.network();
    const auto bytes = random_bytes(1 << 20, 14);
    const std::uint64_t piece = 64 << 10;
    c.tamper["p1"] = [&](std::uint64_t offset, std::span<std::byte> data) {
        if (offset <= 3 * piece && 3 * piece < offset + data.size()) data[3 * piece - offset] ^= std::byte{1};
    };
    const fs::path src = c.dir.path / "source.bin";
    std::ofstream(src, std::ios::binary).write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    const JobReport r = push(c, net, tree(3, static_cast<double>(bytes->size()), piece, {{0, 1}, {1, 2}}),
                             {std::make_shared<FileBody>(src), "copy.bin"});
    CHECK_FALSE(r.ok());
    for (const auto& o : r.outcomes) {
        CHECK_FALSE(o.ok);
        if (o.dest == "p1") CHECK_MESSAGE(o.error.find("failed its SHA-256 again and again") != std::string::npos, o.error);
    }
    for (std::size_t i = 1; i < 3; ++i) CHECK_FALSE(fs::exists(c.dir.path / c.names[i] / "copy.bin"));
    check_no_leftovers(c.dir.path);
}

TEST_CASE("relay: a slow child does not hold up its fast sibling or the relay's own copy") {
    Chain c(4);
    const Network net = c.network();
    const auto bytes = random_bytes(8 << 20, 3);
    // p2 takes each 64 KiB frame in 25 ms (~2.6 MB/s); p1 and p3 run at loopback speed.
    c.tamper["p2"] = [](std::uint64_t, std::span<std::byte>) { std::this_thread::sleep_for(std::chrono::milliseconds(25)); };
    const JobReport r = push(c, net, tree(4, static_cast<double>(bytes->size()), 256 << 10, {{0, 1}, {1, 2}, {1, 3}}),
                             {std::make_shared<BufferBody>(bytes), ""});
    REQUIRE(r.ok());
    std::map<std::string, double> at;
    for (const auto& o : r.outcomes) at[o.dest] = o.achieved;
    // The slow one needs 128 × 25 ms = 3.2 s at least; the others finish while it is far behind.
    CHECK(at["p2"] >= 3.0);
    CHECK(at["p3"] < at["p2"] / 3);
    CHECK(at["p1"] < at["p2"] / 3);
}

TEST_CASE("relay: copies keep the source file's permission bits (0600 stays 0600, an executable stays one)") {
    Chain c(3);
    const Network net = c.network();
    const auto bytes = random_bytes(300'000, 21);
    for (const unsigned mode : {0600u, 0755u, 0640u}) {
        CAPTURE(mode);
        const fs::path src = c.dir.path / ("src-" + std::to_string(mode));
        std::ofstream(src, std::ios::binary).write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
        fs::permissions(src, static_cast<fs::perms>(mode));
        for (const Relay relay : {Relay::store_and_forward, Relay::cut_through}) {
            Schedule s = tree(3, static_cast<double>(bytes->size()), 64 << 10, {{0, 1}, {1, 2}});
            s.relay = relay;
            const std::string name = "m" + std::to_string(mode) + (relay == Relay::cut_through ? "-ct" : "-sf");
            const JobReport r = push(c, net, s, {std::make_shared<FileBody>(src), name});
            for (const auto& o : r.outcomes) CHECK_MESSAGE(o.ok, o.dest << ": " << o.error);
            REQUIRE(r.ok());
            for (std::size_t i = 1; i < 3; ++i) {
                CHECK((static_cast<unsigned>(fs::status(c.dir.path / c.names[i] / name).permissions()) & 0777) == mode);
            }
        }
    }
}
