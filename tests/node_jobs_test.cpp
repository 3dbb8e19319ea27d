// hetcast::Node's job handles, options and file pushes (runtime/node.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>

#include "hetcast/error.hpp"
#include "hetcast/runtime/node.hpp"
#include "netlab_networks.hpp"
#include "node_cluster.hpp"
#include "wait.hpp"

using namespace hetcast;
using test::Nodes;
using test::random_bytes;
namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void write_random(const fs::path& p, std::size_t n, std::uint64_t seed) {
    fs::create_directories(p.parent_path());
    std::mt19937_64 rng(seed);
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    std::ofstream(p, std::ios::binary) << s;
}

/// Files under `root` that are not in `allowed` (temporary files left behind, say).
std::vector<std::string> strays(const fs::path& root, const std::vector<std::string>& allowed) {
    std::vector<std::string> out;
    if (!fs::exists(root)) return out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (!e.is_regular_file()) continue;
        const std::string rel = fs::relative(e.path(), root).generic_string();
        if (std::find(allowed.begin(), allowed.end(), rel) == allowed.end()) out.push_back(rel);
    }
    return out;
}

}  // namespace

TEST_CASE("node jobs: a started broadcast reports progress, its callbacks and wait() agree on the report") {
    Nodes c(3, true);  // 2 MB/s links: the job takes seconds
    // Progress counts a destination's bytes in steps of 4 MiB: 9 MiB shows two steps.
    const Bytes bytes = random_bytes(9 << 20, 7);
    std::mutex mu;
    std::vector<std::uint64_t> seen;
    std::atomic<int> done_calls{0};
    std::optional<JobReport> from_callback;
    SendOptions o;
    o.algo = "flat-tree";
    o.on_progress = [&](const JobProgress& p) {
        std::lock_guard lock(mu);
        seen.push_back(p.delivered);
    };
    o.on_done = [&](const JobReport& r) {
        std::lock_guard lock(mu);
        from_callback = r;
        ++done_calls;
    };
    JobHandle job = c[0].start_broadcast(bytes, o);
    CHECK_FALSE(job.wait_for(std::chrono::milliseconds(1)));  // 9 MiB at 2 MB/s to two nodes
    REQUIRE(test::wait_for([&] { return job.progress().delivered > 0; }));
    const JobProgress mid = job.progress();
    CHECK(mid.owed == 2u * bytes->size());
    CHECK(mid.delivered < mid.owed);
    CHECK(mid.members.size() == 3);
    CHECK(job.id() != 0);
    const JobReport r = job.wait();
    CHECK(r.ok());
    CHECK(r.job == job.id());
    CHECK(r.algorithm == "flat-tree");
    CHECK(job.done());
    CHECK_FALSE(job.cancel());  // over: nothing to cancel
    REQUIRE(test::wait_for([&] { return done_calls == 1; }));
    std::lock_guard lock(mu);
    REQUIRE(from_callback);
    CHECK(from_callback->job == r.job);
    CHECK(from_callback->ok());
    CHECK(std::is_sorted(seen.begin(), seen.end()));
    REQUIRE_FALSE(seen.empty());
    CHECK(seen.back() == 2u * bytes->size());
    for (std::size_t i = 1; i < 3; ++i) {
        const auto d = c[i].receive(std::chrono::seconds(5));
        REQUIRE(d);
        CHECK(*d->bytes == *bytes);
    }
}

TEST_CASE("node jobs: cancel() mid-run and before the job starts ends it, nothing is delivered half") {
    Nodes c(3, true);
    const Bytes bytes = random_bytes(9 << 20, 8);  // progress moves at 4 MiB, the job goes on
    SUBCASE("mid-run") {
        JobHandle job = c[0].start_multicast(bytes, {"n1", "n2"});
        REQUIRE(test::wait_for([&] { return job.progress().delivered > 0; }));
        CHECK(job.cancel("by the test"));
        const JobReport r = job.wait();
        CHECK_FALSE(r.ok());
        for (const Outcome& o : r.outcomes) {
            if (!o.ok) CHECK(o.error.find("cancelled: by the test") != std::string::npos);
        }
    }
    SUBCASE("at once") {
        JobHandle job = c[0].start_multicast(bytes, {"n1", "n2"});
        CHECK(job.cancel("before it moved"));
        const JobReport r = job.wait();
        CHECK_FALSE(r.ok());
        REQUIRE(r.outcomes.size() == 2);
        for (const Outcome& o : r.outcomes) {
            CHECK_FALSE(o.ok);
            CHECK(o.error.find("cancelled: before it moved") != std::string::npos);
        }
    }
    // A receiver hands on a buffer only whole and verified.
    for (std::size_t i = 1; i < 3; ++i) {
        while (auto d = c[i].receive(std::chrono::milliseconds(200))) CHECK(*d->bytes == *bytes);
    }
}

TEST_CASE("node jobs: a timeout aborts the job, bwlimit caps what the plan predicts") {
    Nodes c(3, true);
    const Bytes bytes = random_bytes(2 << 20, 9);
    SendOptions slow;
    slow.timeout = std::chrono::milliseconds(200);
    const JobReport r = c[0].start_broadcast(bytes, slow).wait();
    CHECK_FALSE(r.ok());

    Nodes fast(3);
    SendOptions capped;
    capped.bwlimit = 4'000'000;  // bytes/s per member in all
    const JobReport limited = fast[0].start_broadcast(bytes, capped).wait();
    CHECK(limited.ok());
    // The source alone must send the 2 MiB at least once at 4 MB/s.
    CHECK(limited.predicted >= static_cast<double>(bytes->size()) / 4e6 * (1 - 1e-9));
    const JobReport free = fast[0].start_broadcast(bytes).wait();
    CHECK(free.ok());
    CHECK(free.predicted < limited.predicted);
    // Checked as the daemon checks a push's options (runtime/push_options.hpp).
    SendOptions crawl;
    crawl.bwlimit = 100;
    CHECK_THROWS_WITH_AS((void)fast[0].start_broadcast(bytes, crawl), "--bwlimit must be at least 1 KiB/s", InputError);
}

TEST_CASE("node jobs: push() lands a file and a directory tree on every other node, verified, nothing else left") {
    Nodes c(4);
    const fs::path src = c.dir.path / "src";
    write_random(src / "model.bin", 3 << 20, 1);
    write_random(src / "data" / "a.txt", 1000, 2);
    write_random(src / "data" / "deep" / "b.bin", 70'000, 3);
    fs::permissions(src / "data" / "a.txt", fs::perms(0640));
    std::mutex mu;
    std::map<std::string, std::vector<Landed>> landed;  // by receiving node
    for (std::size_t i = 1; i < 4; ++i) {
        c[i].on_landed([&, who = "n" + std::to_string(i)](Landed l) {
            std::lock_guard lock(mu);
            landed[who].push_back(std::move(l));
        });
    }

    PushFiles one;
    one.paths = {src / "model.bin"};
    one.name = "ckpt/model-1.bin";
    const JobReport r1 = c[0].push(one);
    REQUIRE(r1.ok());
    CHECK(r1.outcomes.size() == 3);

    PushFiles tree;
    tree.paths = {src / "data"};
    tree.recursive = true;
    tree.name = "sets";
    tree.dests = {"n[0-3]!n2", "n1"};  // node sets as `push --to` takes them: this node out, n1 once
    const JobReport r2 = c[0].push(tree);
    REQUIRE(r2.ok());
    CHECK(r2.outcomes.size() == 2);

    const std::string model = read_all(src / "model.bin");
    for (std::size_t i = 1; i < 4; ++i) {
        const fs::path root = c.dir.path / ("n" + std::to_string(i));
        CHECK(read_all(root / "ckpt" / "model-1.bin") == model);
        const bool got_tree = i != 2;
        CHECK(fs::exists(root / "sets" / "data" / "a.txt") == got_tree);
        if (got_tree) {
            CHECK(read_all(root / "sets" / "data" / "a.txt") == read_all(src / "data" / "a.txt"));
            CHECK(read_all(root / "sets" / "data" / "deep" / "b.bin") == read_all(src / "data" / "deep" / "b.bin"));
            CHECK((fs::status(root / "sets" / "data" / "a.txt").permissions() & fs::perms::all) == fs::perms(0640));
            CHECK(strays(root, {"ckpt/model-1.bin", "sets/data/a.txt", "sets/data/deep/b.bin"}).empty());
        } else {
            CHECK(strays(root, {"ckpt/model-1.bin"}).empty());
        }
        // Told before the job heard of it, so push() returned after every call.
        std::lock_guard lock(mu);
        const auto& got = landed["n" + std::to_string(i)];
        REQUIRE(got.size() == (got_tree ? 2U : 1U));
        CHECK(got[0].path == root / "ckpt" / "model-1.bin");
        CHECK(got[0].source == "n0");
        CHECK(got[0].bytes == 3U << 20);
        CHECK(got[0].entries == 0);
        CHECK(got[0].job == r1.job);
        if (got_tree) {
            CHECK(got[1].path == root / "sets");
            CHECK(got[1].entries >= 4);  // data, deep, a.txt, b.bin
            CHECK(got[1].job == r2.job);
        }
    }
}

TEST_CASE("node jobs: push() refuses what it cannot send before anything moves") {
    Nodes c(3);
    const fs::path src = c.dir.path / "src";
    write_random(src / "f", 10, 1);
    PushFiles missing;
    missing.paths = {src / "nope"};
    CHECK_THROWS_AS((void)c[0].start_push(missing), InputError);
    PushFiles dir;
    dir.paths = {src};
    CHECK_THROWS_AS((void)c[0].start_push(dir), InputError);  // a directory without recursive
    for (const std::string bad : {"../out", "/etc/x", "a/../../b"}) {
        PushFiles escape;
        escape.paths = {src / "f"};
        escape.name = bad;
        CAPTURE(bad);
        CHECK_THROWS_AS((void)c[0].start_push(escape), InputError);
    }
    PushFiles unknown;
    unknown.paths = {src / "f"};
    unknown.dests = {"n9"};
    CHECK_THROWS_AS((void)c[0].start_push(unknown), InputError);
    CHECK(strays(c.dir.path / "n1", {}).empty());
}

TEST_CASE("node jobs: nodes are movable and live in a vector, a handle outlives its node") {
    test::TempDir dir;
    const Network map = test::two_subnets(3, true);
    std::vector<Node> nodes;
    std::vector<Member> members;
    for (std::size_t i = 0; i < 3; ++i) {
        PeerConfig pc;
        pc.name = "n" + std::to_string(i);
        pc.identity = test::identity(pc.name);
        pc.dest_root = dir.path / pc.name;
        pc.link_profile = map;
        nodes.emplace_back(pc);  // the vector moves the earlier ones as it grows
        nodes.back().start();
        members.push_back({pc.name, "127.0.0.1", nodes.back().port()});
    }
    for (auto& n : nodes) n.join(members, map);
    const Bytes small = random_bytes(1000, 1);
    CHECK(nodes[2].broadcast(small).ok());
    for (std::size_t i = 0; i < 2; ++i) CHECK(nodes[i].receive(std::chrono::seconds(5)));

    Node moved = std::move(nodes[0]);
    JobHandle job = moved.start_broadcast(random_bytes(8 << 20, 2));
    REQUIRE(test::wait_for([&] { return job.progress().delivered > 0; }));
    { Node gone = std::move(moved); }  // destroyed mid-job: the job is aborted
    REQUIRE(job.wait_for(std::chrono::seconds(30)));
    CHECK_FALSE(job.wait().ok());
    CHECK_FALSE(job.cancel());
}

TEST_CASE("node jobs: an exchange planned by the exchange planner cuts through and delivers every buffer intact") {
    Nodes c(5);
    // Planned on a map with NICs and uplinks (two subnets, 40 Mbit/s between them), where
    // relays are worth it and passing pieces on as they come beats whole messages.
    const Network map = test::lab_network({{40, {{"n0"}, {"n1"}}}, {40, {{"n2"}, {"n3"}, {"n4"}}}});
    std::vector<Member> members;
    for (std::size_t i = 0; i < 5; ++i) members.push_back({"n" + std::to_string(i), "127.0.0.1", c[i].port()});
    for (std::size_t i = 0; i < 5; ++i) c[i].join(members, map);
    const Bytes a = random_bytes(3 << 20, 11), b = random_bytes(300'000, 12), d = random_bytes(1 << 20, 13);
    c[1].offer("a", a);
    c[2].offer("b", b);
    c[4].offer("d", d);
    SendOptions o;
    o.algo = "exchange";
    const JobReport r = c[0].start_exchange({{"n1", "a", {}}, {"n2", "b", {"n0", "n3"}}, {"n4", "d", {"n1", "n2", "n3"}}}, o).wait();
    REQUIRE(r.ok());
    CHECK(r.algorithm == "exchange");
    CHECK(r.relay == "cut-through");
    CHECK(r.lower_bound <= r.predicted + 1e-12);
    std::map<std::pair<std::string, std::string>, Bytes> expected{
        {{"n0", "n1"}, a}, {{"n2", "n1"}, a}, {{"n3", "n1"}, a}, {{"n4", "n1"}, a}, {{"n0", "n2"}, b},
        {{"n3", "n2"}, b}, {{"n1", "n4"}, d}, {{"n2", "n4"}, d}, {{"n3", "n4"}, d}};
    std::size_t seen = 0;
    for (std::size_t i = 0; i < 5; ++i) {
        while (auto got = c[i].receive(std::chrono::milliseconds(300))) {
            const auto it = expected.find({"n" + std::to_string(i), got->source});
            REQUIRE(it != expected.end());
            CHECK(*got->bytes == *it->second);
            ++seen;
        }
    }
    CHECK(seen == expected.size());
}

// Issue 27: max_jobs limits what runs, not what may wait. With one job per member, a second
// broadcast started while the first runs waits (its progress says "queued") and then runs;
// a third, cancelled while it waits, ends as cancelled and moves nothing.
TEST_CASE("node jobs: a push that finds members busy waits in its coordinator's queue, and can be cancelled there") {
    Nodes c(3, true, 1);  // 2 MB/s links, one job per member
    const Bytes first = random_bytes(5 << 20, 21), second = random_bytes(1 << 20, 22), third = random_bytes(1 << 20, 23);
    JobHandle a = c[0].start_broadcast(first);
    REQUIRE(test::wait_for([&] { return a.progress().delivered > 0; }));
    JobHandle b = c[1].start_broadcast(second);
    const auto queued = [](const JobHandle& j) {
        const auto p = j.progress();
        return !p.members.empty() && std::all_of(p.members.begin(), p.members.end(),
                                                 [](const auto& m) { return m.state == "queued"; });
    };
    REQUIRE(test::wait_for([&] { return queued(b); }));
    CHECK_FALSE(b.done());
    JobHandle cancelled = c[2].start_broadcast(third);
    REQUIRE(test::wait_for([&] { return queued(cancelled); }));
    CHECK(cancelled.cancel("not needed any more"));
    const JobReport rc = cancelled.wait();
    CHECK_FALSE(rc.ok());
    for (const Outcome& o : rc.outcomes) CHECK(o.error == "cancelled: not needed any more");

    const JobReport ra = a.wait();
    const JobReport rb = b.wait();
    CHECK(ra.ok());
    CHECK(rb.ok());
    CHECK(rb.job == b.id());
    // Every copy arrived once, and nothing of the cancelled one.
    std::map<std::string, int> got;
    for (std::size_t i = 0; i < 3; ++i) {
        while (auto d = c[i].receive(std::chrono::milliseconds(300))) {
            CHECK(d->source != "n2");
            CHECK(*d->bytes == *(d->source == "n0" ? first : second));
            ++got[d->source];
        }
    }
    CHECK(got["n0"] == 2);
    CHECK(got["n1"] == 2);
}

TEST_CASE("node jobs: probe() measures every member and gives each embedded node the map") {
    Nodes c(3);
    ProbeOptions o;
    o.repeats = 1;
    o.seconds = 0.1;
    const Network before = *c[1].map();
    CHECK_FALSE(before.capacities().has_value());  // the parametric map the nodes joined with
    const Network map = c[0].probe(o);
    CHECK(map.names() == std::vector<std::string>{"n0", "n1", "n2"});
    REQUIRE(map.capacities().has_value());
    REQUIRE(map.subnets().has_value());
    std::vector<NodeId> placed;
    for (const auto& g : *map.subnets()) placed.insert(placed.end(), g.begin(), g.end());
    std::sort(placed.begin(), placed.end());
    CHECK(placed == std::vector<NodeId>{0, 1, 2});  // every member in exactly one subnet
    for (NodeId i = 0; i < 3; ++i) {
        CHECK(map.capacities()->egress[i] > 1e6);  // loopback moves far more than 1 MB/s
        CHECK(map.capacities()->ingress[i] > 1e6);
    }
    for (std::size_t i = 0; i < 3; ++i) {
        const auto got = c[i].map();
        REQUIRE(got.has_value());
        CHECK(got->capacities().has_value());
        CHECK(got->bandwidth() == map.bandwidth());
    }
    o.seconds = 0.001;
    CHECK_THROWS_AS((void)c[0].probe(o), InputError);
}
