#include <doctest/doctest.h>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "hetcast/runtime/cluster_probe.hpp"
#include "hetcast/runtime/nic_queue.hpp"

using namespace hetcast;

namespace {

constexpr std::uint32_t root = 0xffffffffU;
constexpr std::uint32_t ingress = 0xfffffff1U;
std::uint32_t h(std::uint32_t major, std::uint32_t minor = 0) { return major << 16 | minor; }

/// netlab's host egress (scripts/netlab, shape()): HTB 1: with the default class 1:2 over a
/// byte FIFO, and with `pairs` > 0 one more class and FIFO per host pair, steered by a u32
/// filter each.
std::vector<Qdisc> netlab_egress(std::size_t pairs) {
    std::vector<Qdisc> q{{"htb", h(1), root}, {"bfifo", h(2), h(1, 2)}};
    for (std::uint32_t k = 0; k < pairs; ++k) q.push_back({"bfifo", h(16 + k), h(1, 16 + k)});
    return q;
}

}  // namespace

TEST_CASE("nic queue: what the kernel's disciplines say of a NIC's sharing") {
    CHECK(classify_nic_queue({}, 0) == NicQueue::unknown);
    CHECK(classify_nic_queue({{"noqueue", 0, root}}, 0) == NicQueue::unknown);
    for (const char* k : {"pfifo_fast", "pfifo", "bfifo", "codel", "tbf", "netem"}) {
        CHECK_MESSAGE(classify_nic_queue({{k, h(1), root}}, 0) == NicQueue::fifo, k);
    }
    for (const char* k : {"fq_codel", "fq", "sfq", "cake", "fq_pie"}) {
        CHECK_MESSAGE(classify_nic_queue({{k, h(1), root}}, 0) == NicQueue::fair, k);
        // below a shaper or a multiqueue root, as a tuned host or a real NIC has it
        CHECK(classify_nic_queue({{"htb", h(1), root}, {k, h(2), h(1, 2)}}, 0) == NicQueue::fair);
        CHECK(classify_nic_queue({{"mq", h(1), root}, {k, h(2), h(1, 1)}, {k, h(3), h(1, 2)}}, 0) == NicQueue::fair);
    }
    CHECK(classify_nic_queue({{"mq", h(1), root}, {"pfifo_fast", h(2), h(1, 1)}, {"pfifo_fast", h(3), h(1, 2)}}, 0) ==
          NicQueue::fifo);
    CHECK(classify_nic_queue(netlab_egress(0), 0) == NicQueue::fifo);
    CHECK(classify_nic_queue(netlab_egress(5), 10) == NicQueue::fair);
    // A filter that steers everything into the one queue separates nothing.
    CHECK(classify_nic_queue(netlab_egress(0), 3) == NicQueue::fifo);
    // Classes without filters (prio's bands go by TOS): still one queue per flow's kind.
    CHECK(classify_nic_queue(netlab_egress(3), 0) == NicQueue::fifo);
    // What receives is no egress: a fair ingress discipline says nothing of what is sent.
    CHECK(classify_nic_queue({{"pfifo_fast", 0, root}, {"ingress", h(0xffff), ingress}}, 0) == NicQueue::fifo);
}

TEST_CASE("nic queue: the order the kernel lists disciplines in, and ingress ones, change nothing") {
    std::mt19937 rng(7);
    const std::vector<std::string> kinds{"pfifo", "bfifo", "fq_codel", "codel", "sfq", "pfifo_fast"};
    for (int trial = 0; trial < 300; ++trial) {
        auto q = netlab_egress(rng() % 4);
        for (auto& leaf : q) {
            if (leaf.parent != root && rng() % 3 == 0) leaf.kind = kinds[rng() % kinds.size()];
        }
        const std::size_t filters = rng() % 3;
        const NicQueue before = classify_nic_queue(q, filters);
        q.push_back({rng() % 2 ? "ingress" : "clsact", h(0xffff), ingress});
        q.push_back({"fq_codel", h(0xfff1), ingress});
        std::shuffle(q.begin(), q.end(), rng);
        CHECK(classify_nic_queue(q, filters) == before);
        CHECK(before != NicQueue::unknown);
    }
}

TEST_CASE("nic queue: the map says fifo when most members that could tell send through FIFOs") {
    std::mt19937 rng(11);
    for (int trial = 0; trial < 500; ++trial) {
        const std::size_t n = 1 + rng() % 12;
        std::vector<NicQueue> nics(n);
        std::vector<std::string> names(n);
        std::size_t fifo = 0, fair = 0;
        for (std::size_t i = 0; i < n; ++i) {
            nics[i] = static_cast<NicQueue>(rng() % 3);
            names[i] = "h" + std::to_string(i);
            fifo += nics[i] == NicQueue::fifo;
            fair += nics[i] == NicQueue::fair;
        }
        const auto q = queues_of(nics, names);
        if (fifo + fair == 0) {
            CHECK_FALSE(q.has_value());
            continue;
        }
        REQUIRE(q.has_value());
        CHECK(q->first == (fifo > fair ? Queues::fifo : Queues::realistic));
        CHECK(q->second.find(std::to_string(fifo) + " of the " + std::to_string(fifo + fair)) != std::string::npos);
    }
}

namespace {

/// A network namespace of this test's own with one veth pair, removed however the test ends.
struct Namespace {
    std::string name = "hcnq" + std::to_string(::getpid());
    bool up = false;
    Namespace() {
        up = std::system(("ip netns add " + name + " 2>/dev/null && ip -n " + name +
                          " link add hcq0 type veth peer name hcq1 && ip -n " + name +
                          " link set hcq0 up && ip -n " + name + " link set hcq1 up && ip -n " + name +
                          " addr add 10.250.7.1/24 dev hcq0")
                             .c_str()) == 0;
    }
    ~Namespace() { (void)std::system(("ip netns del " + name + " 2>/dev/null").c_str()); }
    [[nodiscard]] bool tc(const std::string& args) const {
        return std::system(("tc -n " + name + " " + args + " 2>/dev/null").c_str()) == 0;
    }
    /// What nic_queue_of("10.250.7.1") says inside the namespace (a thread of its own enters it).
    [[nodiscard]] std::pair<std::string, NicQueue> look() const {
        std::pair<std::string, NicQueue> out{"", NicQueue::unknown};
        std::thread t([&] {
            const int fd = ::open(("/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) return;
            ::close(fd);
            out = {device_of("10.250.7.1"), nic_queue_of("10.250.7.1")};
        });
        t.join();
        return out;
    }
};

}  // namespace

TEST_CASE("nic queue: read from the kernel in a namespace, as netlab shapes a host's NIC") {
    if (::geteuid() != 0) {
        MESSAGE("skipped: creating a network namespace needs root");
        return;
    }
    const Namespace ns;
    if (!ns.up) {
        MESSAGE("skipped: 'ip netns add' failed (no iproute2, or no namespaces here)");
        return;
    }
    auto [dev, q] = ns.look();
    CHECK(dev == "hcq0");
    CHECK(q == NicQueue::unknown);  // a veth queues nothing: noqueue

    REQUIRE(ns.tc("qdisc replace dev hcq0 root handle 1: htb default 2"));
    REQUIRE(ns.tc("class add dev hcq0 parent 1: classid 1:1 htb rate 100mbit"));
    REQUIRE(ns.tc("class add dev hcq0 parent 1:1 classid 1:2 htb rate 100mbit"));
    REQUIRE(ns.tc("qdisc add dev hcq0 parent 1:2 handle 2: bfifo limit 524288"));
    CHECK(ns.look().second == NicQueue::fifo);

    for (int k = 0; k < 2; ++k) {
        const std::string minor = std::to_string(16 + k);
        REQUIRE(ns.tc("class add dev hcq0 parent 1:1 classid 1:" + minor + " htb rate 50mbit ceil 100mbit"));
        REQUIRE(ns.tc("qdisc add dev hcq0 parent 1:" + minor + " handle " + minor + ": bfifo limit 65536"));
        REQUIRE(ns.tc("filter add dev hcq0 parent 1: protocol ip prio 1 u32 match ip src 10.250.7.1/32 match ip dst 10.250.7." +
                      std::to_string(2 + k) + "/32 flowid 1:" + minor));
    }
    CHECK(ns.look().second == NicQueue::fair);

    REQUIRE(ns.tc("qdisc replace dev hcq0 root pfifo limit 100"));
    CHECK(ns.look().second == NicQueue::fifo);
    CHECK(ns.look().first == "hcq0");
}

TEST_CASE("nic queue: an address no device holds is unknown, not an error") {
    CHECK(device_of("192.0.2.77").empty());
    CHECK(nic_queue_of("192.0.2.77") == NicQueue::unknown);
    CHECK(device_of("127.0.0.1") == "lo");
}
