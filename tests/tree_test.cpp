#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <set>

#include "temp_dir.hpp"
#include "hetcast/error.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/tree.hpp"

using namespace hetcast;
using test::TempDir;
namespace fs = std::filesystem;
using json = nlohmann::json;
using Kind = TreeEntry::Kind;

namespace {

net::Digest sha_of(const std::string& s) {
    net::Sha256 h;
    h.update(std::span(reinterpret_cast<const std::byte*>(s.data()), s.size()));
    return h.finish();
}

void write(const fs::path& p, const std::string& text, unsigned mode = 0644) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    fs::permissions(p, static_cast<fs::perms>(mode));
}

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct stat lstat_of(const fs::path& p) {
    struct stat st {};
    REQUIRE(::lstat(p.c_str(), &st) == 0);
    return st;
}

std::int64_t mtime_of(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

/// A random valid manifest: directories, files beneath them, links; sizes adding up.
std::vector<TreeEntry> random_tree(std::mt19937_64& rng, std::uint64_t& total) {
    std::vector<std::string> dirs{""};
    std::vector<TreeEntry> out;
    std::set<std::string> used;
    total = 0;
    const int n = static_cast<int>(rng() % 40) + 1;
    for (int i = 0; i < n; ++i) {
        const std::string& parent = dirs[rng() % dirs.size()];
        std::string name = "n" + std::to_string(rng() % 1000);
        if (rng() % 5 == 0) name += " \xc3\xa9\t\"\\";  // any bytes but '/' and NUL
        const std::string path = parent.empty() ? name : parent + "/" + name;
        if (!used.insert(path).second) continue;
        TreeEntry e;
        e.path = path;
        e.mode = static_cast<unsigned>(rng() % 01000);
        e.mtime = static_cast<std::int64_t>(rng() % 4'000'000'000'000'000'000ull) - 1'000'000'000'000'000'000ll;
        switch (rng() % 3) {
            case 0:
                e.kind = Kind::dir;
                dirs.push_back(path);
                break;
            case 1:
                e.kind = Kind::file;
                e.size = rng() % 100000;
                total += e.size;
                e.sha = sha_of(path);
                break;
            default:
                e.kind = Kind::symlink;
                e.target = rng() % 2 ? "/etc/passwd" : "../x/" + name;
        }
        if (rng() % 4 == 0) {
            e.uid = static_cast<std::uint32_t>(rng() % 70000);
            e.gid = static_cast<std::uint32_t>(rng() % 70000);
        }
        out.push_back(std::move(e));
    }
    return out;
}

bool rejects(const json& j, std::uint64_t size) {
    try {
        (void)tree_from_json(j, size);
        return false;
    } catch (const InputError&) {
        return true;
    }
}

}  // namespace

TEST_CASE("tree: a manifest survives JSON (text too) unchanged (property, 300 random trees)") {
    std::mt19937_64 rng(16);
    for (int k = 0; k < 300; ++k) {
        std::uint64_t total = 0;
        const auto tree = random_tree(rng, total);
        CAPTURE(k);
        const json j = tree_to_json(tree);
        CHECK(tree_from_json(j, total) == tree);
        CHECK(tree_from_json(json::parse(j.dump()), total) == tree);
        CHECK(rejects(j, total + 1));
    }
}

TEST_CASE("tree: malformed or unsafe manifests are refused with InputError, never anything else") {
    const json good = json::array({
        {{"path", "d"}, {"type", "dir"}, {"mode", 0755u}, {"mtime", 1}},
        {{"path", "d/f"}, {"type", "file"}, {"mode", 0644u}, {"mtime", -5}, {"size", 3u}, {"sha256", net::to_hex(sha_of("x"))}},
        {{"path", "l"}, {"type", "link"}, {"mode", 0777u}, {"mtime", 0}, {"target", "/etc"}},
    });
    REQUIRE(tree_from_json(good, 3).size() == 3);
    const auto with = [&](std::size_t i, const char* key, const json& v) {
        json j = good;
        j[i][key] = v;
        return j;
    };
    for (const char* bad : {"", "/abs", "..", "a/../b", "./a", "a/./b", "a//b", "a/", "d/f/x", "l/x", "d/f"}) {
        CAPTURE(bad);
        json j = good;
        j.push_back({{"path", bad}, {"type", "dir"}, {"mode", 0755u}, {"mtime", 1}});
        CHECK(rejects(j, 3));
    }
    CHECK(rejects(with(0, "path", std::string(300, 'a')), 3));
    CHECK(rejects(with(0, "path", std::string("a\0b", 3)), 3));
    CHECK(rejects(with(0, "mode", 01755u), 3));
    CHECK(rejects(with(0, "mode", -1), 3));
    CHECK(rejects(with(0, "type", "fifo"), 3));
    CHECK(rejects(with(0, "mtime", 1.5), 3));
    CHECK(rejects(with(1, "size", 4), 3));
    CHECK(rejects(with(1, "size", "3"), 3));
    CHECK(rejects(with(1, "sha256", "zz"), 3));
    CHECK(rejects(with(2, "target", ""), 3));
    CHECK(rejects(with(2, "uid", 1ull << 40), 3));
    CHECK(rejects(good, 2));
    CHECK(rejects(json::object(), 0));
    CHECK(rejects(json::array({1}), 0));
    // Two files whose sizes wrap around 2^64 to the message's size.
    json wrap = good;
    wrap[1]["size"] = std::numeric_limits<std::uint64_t>::max();
    wrap.push_back({{"path", "g"}, {"type", "file"}, {"mode", 0644u}, {"mtime", 0}, {"size", 4u}, {"sha256", net::to_hex(sha_of("x"))}});
    CHECK(rejects(wrap, 3));
    // Random byte flips of a valid manifest's text: rejected or accepted, never a crash.
    std::mt19937_64 rng(7);
    const std::string text = good.dump();
    for (int k = 0; k < 2000; ++k) {
        std::string t = text;
        for (int f = 0; f < 3; ++f) t[rng() % t.size()] = static_cast<char>(rng() % 128);
        const json j = json::parse(t, nullptr, false);
        if (j.is_discarded()) continue;
        try {
            (void)tree_from_json(j, 3);
        } catch (const InputError&) {
        }
    }
}

TEST_CASE("tree: a job plan carries its manifest, a tree without a landing directory is refused") {
    JobPlan p;
    p.job = 9;
    p.algorithm = "flat";
    p.coordinator = "a";
    p.participants = {{"a", "127.0.0.1", 1}, {"b", "127.0.0.1", 2}};
    JobMessage m;
    m.source = "a";
    m.size = 3;
    m.name = "dest";
    m.dests = {"b"};
    m.preserve = true;
    m.owner = true;
    m.tree = {{"x", Kind::file, 3, sha_of("abc"), 0600, 123, {}, 0u, 0u}, {"y", Kind::symlink, 0, {}, 0777, -1, "x", {}, {}}};
    p.messages = {m};
    const JobPlan q = job_plan_from_json(to_json(p), 1 << 20);
    CHECK(q.messages[0].tree == m.tree);
    CHECK(q.messages[0].preserve);
    CHECK(q.messages[0].owner);
    json j = to_json(p);
    j["messages"][0]["name"] = "";
    CHECK_THROWS_AS((void)job_plan_from_json(j, 1 << 20), InputError);
    j["messages"][0]["name"] = "dest";
    j["messages"][0]["size"] = 4;
    CHECK_THROWS_AS((void)job_plan_from_json(j, 1 << 20), InputError);
    // The fuzz target's seed with a tree is a valid plan, so fuzzing starts inside the manifest.
    std::ifstream seed(HETCAST_SOURCE_DIR "/tests/fuzz/corpus/job_plan/tree.json");
    const JobPlan fromseed = job_plan_from_json(json::parse(seed), 1 << 20);
    CHECK(fromseed.messages.at(0).tree.size() == 7);
}

TEST_CASE("tree: walking arguments: links inside kept as links, collisions and special files refused") {
    TempDir dir;
    const fs::path s = dir.path / "src";
    write(s / "d/a.txt", "alpha", 0600);
    write(s / "d/sub/b.bin", "beta", 0755);
    fs::create_directories(s / "d/empty");
    fs::create_symlink("../../outside", s / "d/sub/up");
    write(s / "x", "x1");
    write(s / "other/x", "x2");
    write(s / "other/d/a.txt", "clash");
    fs::create_symlink(s / "x", s / "xlink");

    const BuiltTree t = build_tree({(s / "d").string(), (s / "x").string()}, {true, false});
    std::vector<std::string> paths;
    for (const auto& e : t.entries) paths.push_back(e.path);
    CHECK(paths == std::vector<std::string>{"d", "d/a.txt", "d/empty", "d/sub", "d/sub/b.bin", "d/sub/up", "x"});
    CHECK(t.entries[1].mode == 0600);
    CHECK(t.entries[4].mode == 0755);
    CHECK(t.entries[5].kind == Kind::symlink);
    CHECK(t.entries[5].target == "../../outside");
    CHECK(t.sources[6] == s / "x");

    // A link named as an argument is followed: it lands as the file, under the link's name.
    const BuiltTree l = build_tree({(s / "xlink").string()}, {false, false});
    REQUIRE(l.entries.size() == 1);
    CHECK(l.entries[0].kind == Kind::file);
    CHECK(l.entries[0].path == "xlink");
    CHECK(TreeBody(build_tree({(s / "xlink").string()}, {false, false}), nullptr).size() == 2);
    fs::create_symlink(s / "d", s / "dlink");
    const BuiltTree viadir = build_tree({(s / "dlink").string()}, {true, false});
    CHECK(viadir.entries.at(1).path == "dlink/a.txt");

    const auto refused = [](const std::vector<std::string>& args, bool r, const std::string& words) {
        CAPTURE(words);
        try {
            (void)build_tree(args, {r, false});
            FAIL("accepted");
        } catch (const InputError& e) {
            CHECK(std::string(e.what()).find(words) != std::string::npos);
            CHECK(std::string(e.what()).find('\n') == std::string::npos);
        }
    };
    refused({(s / "x").string(), (s / "other/x").string()}, false, "would both land at 'x'");
    refused({(s / "d").string(), (s / "other/d").string()}, true, "would both land at 'd'");
    refused({(s / "d").string()}, false, "is a directory (use -r)");
    refused({(s / "nothing").string()}, false, "No such file");
    refused({"relative"}, false, "not an absolute path");
    REQUIRE(::mkfifo((s / "d/sub/pipe").c_str(), 0644) == 0);
    refused({(s / "d").string()}, true, "is a fifo");
}

TEST_CASE("tree: the body streams the files back to back, each file's and the whole SHA in one pass") {
    TempDir dir;
    write(dir.path / "t/a", "first-");
    write(dir.path / "t/b", "");
    write(dir.path / "t/c/d", "second");
    TreeBody body(build_tree({(dir.path / "t").string()}, {true, false}), nullptr);
    CHECK(body.size() == 12);
    CHECK(net::same_digest(body.sha256(), sha_of("first-second")));
    CHECK(net::same_digest(body.entries()[1].sha, sha_of("first-")));
    CHECK(net::same_digest(body.entries()[2].sha, sha_of("")));
    auto r = body.open();
    std::string got;
    std::vector<std::byte> buf(4);
    while (const std::size_t n = r->read(buf)) got.append(reinterpret_cast<const char*>(buf.data()), n);
    CHECK(got == "first-second");
    auto s = body.open();
    s->skip(4);
    std::vector<std::byte> rest(20);
    std::string tail;
    while (const std::size_t n = s->read(rest)) tail.append(reinterpret_cast<const char*>(rest.data()), n);
    CHECK(tail == "t-second");
    // A file that changed after the body was made: the reader says so, no bytes made up.
    write(dir.path / "t/c/d", "short");
    auto changed = body.open();
    changed->skip(6);
    CHECK_THROWS_AS((void)changed->read(rest), Error);
    // With serve_roots, files outside are refused when the body is made.
    const std::vector<fs::path> roots{dir.path / "elsewhere"};
    CHECK_THROWS_AS(TreeBody(build_tree({(dir.path / "t").string()}, {true, false}), &roots), InputError);
}

namespace {

/// Builds the bundle of `src`'s tree in a file and lands it under `root/landing`.
struct Landed {
    std::vector<TreeEntry> tree;
    std::vector<LandFailure> failed;
};

Landed land(const fs::path& src, const fs::path& root, const std::string& landing, LandOptions o = {},
            const std::function<void(std::string&)>& corrupt = {}) {
    TreeBody body(build_tree({src.string()}, {true, false}), nullptr);
    std::string bytes;
    auto r = body.open();
    std::vector<std::byte> buf(1 << 16);
    while (const std::size_t n = r->read(buf)) bytes.append(reinterpret_cast<const char*>(buf.data()), n);
    if (corrupt) corrupt(bytes);
    const fs::path bundle = root.parent_path() / "bundle";
    std::ofstream(bundle, std::ios::binary) << bytes;
    const int fd = ::open(bundle.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    Landed out{body.entries(), land_tree(root, landing, body.entries(), fd, o)};
    ::close(fd);
    return out;
}

std::size_t temporaries(const fs::path& dir) {
    std::size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.path().filename().string().find(".hetcast-") != std::string::npos) ++n;
    }
    return n;
}

}  // namespace

TEST_CASE("tree: landing keeps modes, mtimes, links (as links), empty and deep directories") {
    TempDir dir;
    const fs::path s = dir.path / "src/proj";
    write(s / "secret", "key", 0600);
    write(s / "bin/run", "#!/bin/sh\n", 0755);
    write(s / "empty", "", 0644);
    fs::create_directories(s / "void");
    fs::path deep = s;
    for (int i = 0; i < 40; ++i) deep /= "l" + std::to_string(i);
    write(deep / "leaf", "deep");
    fs::create_symlink("/etc/passwd", s / "out");
    fs::create_symlink("bin/run", s / "in");
    fs::permissions(s / "void", static_cast<fs::perms>(0500));
    const timespec old[2] = {{0, UTIME_OMIT}, {1'000'000'000, 123'456'789}};
    REQUIRE(::utimensat(AT_FDCWD, (s / "secret").c_str(), old, 0) == 0);
    REQUIRE(::utimensat(AT_FDCWD, (s / "out").c_str(), old, AT_SYMLINK_NOFOLLOW) == 0);
    REQUIRE(::utimensat(AT_FDCWD, (s / "bin").c_str(), old, 0) == 0);
    REQUIRE(::utimensat(AT_FDCWD, (s / "void").c_str(), old, 0) == 0);

    const fs::path root = dir.path / "root";
    const Landed l = land(s, root, "to/here");
    CHECK(l.failed.empty());
    const fs::path d = root / "to/here/proj";
    for (const auto& e : l.tree) {
        CAPTURE(e.path);
        const struct stat a = lstat_of(s.parent_path() / e.path), b = lstat_of(root / "to/here" / e.path);
        CHECK((a.st_mode & 0170777) == (b.st_mode & 0170777));
        if (e.kind == Kind::file) CHECK(read(s.parent_path() / e.path) == read(root / "to/here" / e.path));
        CHECK(mtime_of(a) == mtime_of(b));
    }
    CHECK(fs::read_symlink(d / "out") == "/etc/passwd");
    CHECK(fs::is_symlink(d / "in"));
    CHECK(fs::is_empty(d / "void"));
    CHECK(read(root / "to/here" / fs::relative(deep / "leaf", s.parent_path())) == "deep");
    CHECK(temporaries(root) == 0);
    fs::permissions(d / "void", fs::perms::owner_all);
    fs::permissions(s / "void", fs::perms::owner_all);

    // Without preserving: the umask applies and mtimes are the landing's.
    const fs::path plain = dir.path / "plain";
    CHECK(land(s, plain, ".", LandOptions{false, 027, false}).failed.empty());
    CHECK((lstat_of(plain / "proj/bin/run").st_mode & 0777) == 0750);
    CHECK((lstat_of(plain / "proj/empty").st_mode & 0777) == 0640);
    CHECK(lstat_of(plain / "proj/secret").st_mtim.tv_sec > 1'000'000'000);
}

TEST_CASE("tree: what cannot land fails alone, with its reason, nothing unverified, no temporaries, no link followed") {
    TempDir dir;
    const fs::path s = dir.path / "src/proj";
    write(s / "a", "aaaa");
    write(s / "b", "bbbb");
    write(s / "sub/c", "cccc");
    write(s / "sub/d", "dddd");

    // A directory where a file goes.
    const fs::path root = dir.path / "root";
    fs::create_directories(root / "proj/a/keep");
    Landed l = land(s, root, ".");
    REQUIRE(l.failed.size() == 1);
    CHECK(l.failed[0].path == "proj/a");
    CHECK(l.failed[0].why.find("Is a directory") != std::string::npos);
    CHECK(fs::is_directory(root / "proj/a/keep"));
    CHECK(read(root / "proj/b") == "bbbb");
    CHECK(read(root / "proj/sub/d") == "dddd");
    CHECK(temporaries(root) == 0);
    CHECK(land_failures_text(l.failed, l.tree.size()).starts_with("1 of 6 entries did not land: 'proj/a': "));

    // A bundle whose bytes of one file are wrong: that file does not land.
    const fs::path bad = dir.path / "bad";
    l = land(s, bad, ".", {}, [](std::string& b) { b[5] = 'X'; });
    REQUIRE(l.failed.size() == 1);
    CHECK(l.failed[0].path == "proj/b");
    CHECK(l.failed[0].why.find("checksum mismatch") != std::string::npos);
    CHECK_FALSE(fs::exists(bad / "proj/b"));
    CHECK(read(bad / "proj/a") == "aaaa");
    CHECK(temporaries(bad) == 0);

    // A symlink at a directory's place in the destination is never followed.
    const fs::path trap = dir.path / "trap", outside = dir.path / "outside";
    fs::create_directories(trap / "proj");
    fs::create_directories(outside);
    fs::create_symlink(outside, trap / "proj/sub");
    l = land(s, trap, ".");
    CHECK(l.failed.size() == 3);  // sub, sub/c, sub/d
    CHECK(fs::is_empty(outside));
    CHECK(read(trap / "proj/a") == "aaaa");
    CHECK(temporaries(trap) == 0);

    // An escaping landing directory is refused before anything is written.
    CHECK_THROWS_AS((void)land(s, dir.path / "esc", "../x"), InputError);
}

TEST_CASE("tree: owners are recorded with --preserve-owner and applied by a root receiver, links too") {
    if (::geteuid() != 0) return;  // only root can give files away
    TempDir dir;
    const fs::path s = dir.path / "src/proj";
    write(s / "f", "data");
    fs::create_symlink("f", s / "l");
    CHECK_FALSE(build_tree({s.string()}, {true, false}).entries[0].uid);
    BuiltTree t = build_tree({s.string()}, {true, true});
    REQUIRE(t.entries[0].uid == 0u);
    for (auto& e : t.entries) e.uid = e.gid = 4321u;
    TreeBody body(std::move(t), nullptr);
    const fs::path bundle = dir.path / "bundle";
    std::ofstream(bundle) << "data";
    const int fd = ::open(bundle.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    const fs::path root = dir.path / "root";
    CHECK(land_tree(root, ".", body.entries(), fd, LandOptions{true, 022, true}).empty());
    CHECK(land_tree(dir.path / "mine", ".", body.entries(), fd, LandOptions{true, 022, false}).empty());
    ::close(fd);
    for (const char* p : {"proj", "proj/f", "proj/l"}) {
        CAPTURE(p);
        CHECK(lstat_of(root / p).st_uid == 4321u);
        CHECK(lstat_of(root / p).st_gid == 4321u);
        CHECK(lstat_of(dir.path / "mine" / p).st_uid == 0u);
    }
}

TEST_CASE("tree: a landing whose entries would pass PATH_MAX under the destination's root is refused before anything moves") {
    std::vector<TreeEntry> tree(2);
    tree[0].path = "proj";
    tree[0].kind = TreeEntry::Kind::dir;
    tree[1].path = "proj/" + std::string(200, 'e');
    const std::string landing = std::string(200, 'l') + "/" + std::string(200, 'm');
    CHECK_NOTHROW(check_landing("/srv", landing, tree));
    // The same tree under a long root: its deepest entry is over 4095 bytes there.
    std::string root = "/";
    while (root.size() < 3700) root += std::string(200, 'r') + "/";
    CHECK_THROWS_WITH_AS(check_landing(root, landing, tree), doctest::Contains("over PATH_MAX"), InputError);
    CHECK_THROWS_WITH_AS(check_landing("/srv", "../x", tree), doctest::Contains("leaves the destination root"), InputError);
    tree[1].path = "proj/" + std::string(256, 'e');
    CHECK_THROWS_WITH_AS(check_landing("/srv", ".", tree), doctest::Contains("name of 256 bytes"), InputError);
}
