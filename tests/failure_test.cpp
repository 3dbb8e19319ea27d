// Failures during a push, with peers in one process over loopback whose links are paced
// (link emulation) so that a push lasts long enough to be hit: a relay stopped at 10%, 50%
// and 90% of its copy, a member gone before set-up, a member whose destination root
// cannot be written, a cancel. Every live destination must end with a verified copy, the
// failed member must be named, nothing may be left behind, and the push must end in time.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/peer.hpp"
#include "hetcast/runtime/push_plan.hpp"
#include "hetcast/sched/plan.hpp"
#include "peer_cluster.hpp"
#include "wait.hpp"

using namespace hetcast;
namespace fs = std::filesystem;

namespace {

constexpr double link_rate = 40e6;  // bytes/s between any two peers (emulated)
constexpr auto stall = std::chrono::milliseconds(2000);

std::size_t open_descriptors() {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator{}));
}

/// Peers p0..p(n-1) (tests/peer_cluster.hpp) with links emulated as profile(n) says, chunks
/// of 64 KiB, the stall deadline `stall` and a spool beside each destination root.
struct Cluster : test::PeerCluster {
    Network net;

    /// Every pair at link_rate, but p0 reaches all but p1 at a fifth of it: store-and-forward
    /// planners then relay through p1 and the others rather than send everything from p0.
    static Network profile(std::size_t n) {
        std::vector<std::string> names;
        for (std::size_t i = 0; i < n; ++i) names.push_back(name(i));
        Matrix b(n, std::vector<double>(n, link_rate));
        for (std::size_t j = 2; j < n; ++j) b[0][j] = link_rate / 5;
        return Network::parametric(names, Matrix(n, std::vector<double>(n, 1e-4)), b, std::vector<Overhead>(n),
                                   std::vector<Overhead>(n));
    }

    explicit Cluster(std::size_t n) : Cluster(profile(n)) {}
    explicit Cluster(Network emulated)
        : PeerCluster(emulated.size(),
                      [&](std::size_t, PeerConfig& c) {
                          c.spool = c.dest_root.parent_path() / (c.name + "-spool");
                          c.chunk = 64 << 10;
                          c.stall_timeout = stall;
                          c.connect_timeout = std::chrono::milliseconds(1000);
                          c.link_profile = emulated;
                      }),
          net(std::move(emulated)) {}

    [[nodiscard]] bool landed(std::size_t i, const std::string& name, const std::vector<char>& bytes) const {
        std::ifstream in(dir.path / PeerCluster::name(i) / name, std::ios::binary);
        const std::vector<char> got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return got == bytes;
    }
    /// Bytes of peer i's temporary copy so far (0 when it has none).
    [[nodiscard]] std::uint64_t partial(std::size_t i) const {
        std::error_code ec;
        std::uint64_t most = 0;
        for (const fs::path& root : {dir.path / name(i), dir.path / (name(i) + "-spool")}) {
            for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
                if (it->path().extension() == ".part") most = std::max<std::uint64_t>(most, fs::file_size(it->path(), ec));
            }
        }
        return most;
    }
    [[nodiscard]] std::size_t leftovers() const {
        std::size_t n = 0;
        for (const auto& e : fs::recursive_directory_iterator(dir.path)) {
            if (e.path().extension() == ".part") ++n;
            if (e.path().string().find("-spool/") != std::string::npos && e.is_regular_file()) ++n;
        }
        return n;
    }
};

std::vector<char> random_file(const fs::path& p, std::size_t n, std::uint64_t seed) {
    std::vector<char> v(n);
    std::mt19937_64 rng(seed);
    for (auto& c : v) c = static_cast<char>(rng());
    std::ofstream(p, std::ios::binary).write(v.data(), static_cast<std::streamsize>(v.size()));
    return v;
}

/// The first node after the root that sends: a relay with a subtree under it.
NodeId first_relay(const Schedule& s, NodeId root) {
    for (NodeId n = 0; n < s.tasks.size(); ++n) {
        if (n == root) continue;
        for (const Task& t : s.tasks[n]) {
            if (t.op == Op::send) return n;
        }
    }
    return root;
}

}  // namespace

TEST_CASE("failures: a relay stopped at 10%, 50% or 90% of its copy costs only itself, its subtree is re-served") {
    const std::size_t size = 6 << 20;
    for (const std::string algo : {"chain", "ecef", "lcf"}) {
        for (const double at : {0.1, 0.5, 0.9}) {
            CAPTURE(algo);
            CAPTURE(at);
            const std::size_t fds = open_descriptors();
            {
                Cluster c(6);
                const auto bytes = random_file(c.dir.path / "src.bin", size, 17);
                // Pieces of 512 KiB: at half the file, the orphans hold several.
                JobSpec spec = plan_push(c.net, make_request(c.net, 0, {}, static_cast<double>(size), ExecModel::nonblocking),
                                         algo, 512 << 10);
                const NodeId victim = first_relay(spec.schedule, 0);
                const Relay spec_relay = spec.schedule.relay;
                REQUIRE(victim != 0);
                spec.inputs.emplace_back(std::make_shared<FileBody>(c.dir.path / "src.bin"), "copy.bin");
                spec.timeout = std::chrono::seconds(120);
                std::atomic<bool> killed{false};
                std::thread killer([&] {
                    if (test::wait_for([&] { return c.partial(victim) >= static_cast<std::uint64_t>(at * size); },
                                       std::chrono::seconds(60))) {
                        c.peers[victim]->stop();
                        killed = true;
                    }
                });
                const auto t0 = std::chrono::steady_clock::now();
                const JobReport r = c.peers[0]->run(std::move(spec));
                const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                killer.join();
                REQUIRE(killed);
                const std::string dead = c.name(victim);
                CAPTURE(dead);
                // The dead relay is named, with its reason; everyone else has a verified copy.
                if (r.failed_members.size() != 1) {
                    for (const auto& l : c.logs()) MESSAGE(l);
                }
                REQUIRE(r.failed_members.size() == 1);
                CHECK(r.failed_members[0].member == dead);
                CHECK_FALSE(r.failed_members[0].reason.empty());
                CHECK_FALSE(r.ok());
                int reserved = 0;
                for (const Outcome& o : r.outcomes) {
                    if (o.dest == dead) {
                        CHECK_FALSE(o.ok);
                        continue;
                    }
                    CHECK_MESSAGE(o.ok, o.dest << ": " << o.error);
                    reserved += o.attempt > 1;
                }
                for (std::size_t i = 1; i < c.peers.size(); ++i) {
                    if (i != victim) CHECK(c.landed(i, "copy.bin", bytes));
                }
                // Its subtree needed a second try: no child is ahead of its relay.
                CHECK(reserved > 0);
                CHECK(r.attempts == 2);
                // Cut through, the orphans kept the pieces they had verified: the second
                // try carried only the rest to the first of them.
                if (spec_relay == Relay::cut_through && at >= 0.5) {
                    CHECK(std::any_of(r.hops.begin(), r.hops.end(), [&](const Hop& h) { return h.bytes < size; }));
                }
                for (const Hop& h : r.hops) CHECK(h.bytes <= size);
                // Bound: the plan twice over (first try, then a re-serving of at most all of
                // it) plus the stall deadline, plus set-up; the plan itself takes < 1 s here.
                CHECK(took < 2 * (r.predicted + 1) + 2 * std::chrono::duration<double>(stall).count() + 5);
                CHECK(c.peers[0]->jobs().empty());
                // Nothing left behind on the survivors (the stopped peer's files may stay, as a
                // killed process's would; a restarted daemon removes them).
                CHECK(test::wait_for([&] {
                    for (std::size_t i = 0; i < c.peers.size(); ++i) {
                        if (i != victim && c.partial(i) > 0) return false;
                    }
                    return true;
                }));
            }
            CHECK(open_descriptors() == fds);
        }
    }
}

TEST_CASE("failures: a member gone before set-up and a member whose root cannot be written are named, the rest complete") {
    Cluster c(6);
    const std::size_t size = 2 << 20;
    const auto bytes = random_file(c.dir.path / "src.bin", size, 5);
    c.peers[2]->stop();
    // p4's destination root is a file: it cannot create anything under it.
    std::ofstream(c.dir.path / "p4") << "not a directory";
    for (const std::string algo : {"chain", "ecef", "flat"}) {
        CAPTURE(algo);
        JobSpec spec = plan_push(c.net, make_request(c.net, 0, {}, static_cast<double>(size), ExecModel::nonblocking), algo);
        spec.inputs.emplace_back(std::make_shared<FileBody>(c.dir.path / "src.bin"), algo + ".bin");
        const JobReport r = c.peers[0]->run(std::move(spec));
        CHECK_FALSE(r.ok());
        std::set<std::string> failed;
        for (const auto& f : r.failed_members) failed.insert(f.member);
        CHECK(failed == std::set<std::string>{"p2", "p4"});
        for (const Outcome& o : r.outcomes) {
            if (o.dest == "p2" || o.dest == "p4") {
                CHECK_FALSE(o.ok);
                CHECK_FALSE(o.error.empty());
            } else {
                CHECK_MESSAGE(o.ok, o.dest << ": " << o.error);
                CHECK(c.landed(std::stoul(o.dest.substr(1)), algo + ".bin", bytes));
            }
        }
    }
    CHECK(test::wait_for([&] { return c.leftovers() == 0; }));
}

TEST_CASE("failures: a cancelled push stops everywhere, reports why, and leaves nothing behind") {
    Cluster c(4);
    const std::size_t size = 16 << 20;  // ~0.4 s per hop at the emulated rate
    random_file(c.dir.path / "src.bin", size, 9);
    for (const std::string algo : {"chain", "ecef"}) {
        CAPTURE(algo);
        JobSpec spec = plan_push(c.net, make_request(c.net, 0, {}, static_cast<double>(size), ExecModel::nonblocking), algo);
        spec.inputs.emplace_back(std::make_shared<FileBody>(c.dir.path / "src.bin"), algo + ".bin");
        std::atomic<std::uint64_t> id{0};
        spec.started = [&](std::uint64_t j) { id = j; };
        JobReport r;
        std::thread runner([&] { r = c.peers[0]->run(std::move(spec)); });
        REQUIRE(test::wait_for([&] { return id != 0 && c.partial(1) > 0; }));
        const auto listed = c.peers[0]->jobs();
        REQUIRE(listed.size() == 1);
        CHECK(listed[0].job == id);
        CHECK(listed[0].role == "coordinator");
        CHECK_FALSE(c.peers[0]->cancel(id + 1, "not this one"));
        CHECK(c.peers[0]->cancel(id, "by the test"));
        runner.join();
        CHECK_FALSE(r.ok());
        CHECK(r.job == id);
        for (const Outcome& o : r.outcomes) {
            if (!o.ok) CHECK(o.error.find("cancelled: by the test") != std::string::npos);
        }
        CHECK(r.attempts == 1);
        CHECK(test::wait_for([&] {
            for (auto& p : c.peers) {
                if (!p->jobs().empty()) return false;
            }
            return c.leftovers() == 0;
        }));
        for (const Outcome& o : r.outcomes) {
            if (!o.ok) CHECK_FALSE(fs::exists(c.dir.path / o.dest / (algo + ".bin")));
        }
    }
}
