#include "hetcast/runtime/nic_queue.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <set>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace hetcast {

std::string_view to_text(NicQueue q) {
    switch (q) {
        case NicQueue::fifo: return "fifo";
        case NicQueue::fair: return "fair";
        case NicQueue::unknown: break;
    }
    return "unknown";
}

NicQueue nic_queue_from_text(std::string_view s) {
    if (s == "fifo") return NicQueue::fifo;
    if (s == "fair") return NicQueue::fair;
    return NicQueue::unknown;
}

namespace {

bool fair_kind(std::string_view k) {
    static const std::set<std::string_view> fair{"fq_codel", "fq", "sfq", "cake", "fq_pie"};
    return fair.count(k) > 0;
}

bool ingress_side(const Qdisc& q) { return q.parent == TC_H_INGRESS || q.kind == "ingress" || q.kind == "clsact"; }

}  // namespace

NicQueue classify_nic_queue(const std::vector<Qdisc>& qdiscs, std::size_t filters) {
    std::vector<const Qdisc*> egress;
    for (const auto& q : qdiscs) {
        if (!ingress_side(q)) egress.push_back(&q);
    }
    const auto root = std::find_if(egress.begin(), egress.end(), [](const Qdisc* q) { return q->parent == TC_H_ROOT; });
    if (root == egress.end() || (*root)->kind == "noqueue") return NicQueue::unknown;
    if (std::any_of(egress.begin(), egress.end(), [](const Qdisc* q) { return fair_kind(q->kind); })) {
        return NicQueue::fair;
    }
    // A leaf: no other discipline hangs below it.
    std::size_t leaves = 0;
    for (const Qdisc* q : egress) {
        const auto major = q->handle & TC_H_MAJ_MASK;
        const bool parent_of_some = std::any_of(egress.begin(), egress.end(), [&](const Qdisc* c) {
            return c != q && c->parent != TC_H_ROOT && (c->parent & TC_H_MAJ_MASK) == major;
        });
        if (!parent_of_some) ++leaves;
    }
    return filters > 0 && leaves >= 2 ? NicQueue::fair : NicQueue::fifo;
}

namespace {

/// One rtnetlink dump of `type` (RTM_GETQDISC, RTM_GETTFILTER) for device `ifindex`
/// under `parent`; `each` gets every answer's header and its TCA_KIND. False when the
/// kernel could not be asked or answered with an error.
bool dump_tc(int type, int ifindex, std::uint32_t parent, const std::function<void(const tcmsg&, std::string_view)>& each) {
    const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return false;
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    const timeval patience{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    struct {
        nlmsghdr nh;
        tcmsg tc;
    } req{};
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(tcmsg));
    req.nh.nlmsg_type = static_cast<std::uint16_t>(type);
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.nh.nlmsg_seq = 1;
    req.tc.tcm_family = AF_UNSPEC;
    req.tc.tcm_ifindex = ifindex;
    req.tc.tcm_parent = parent;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd, &req, req.nh.nlmsg_len, 0, reinterpret_cast<const sockaddr*>(&kernel), sizeof kernel) < 0) {
        return false;
    }
    alignas(nlmsghdr) std::array<char, 32768> buf{};
    for (;;) {
        const ssize_t got = ::recv(fd, buf.data(), buf.size(), 0);
        if (got <= 0) return false;
        auto len = static_cast<unsigned>(got);
        for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
            if (h->nlmsg_type == NLMSG_DONE) return true;
            if (h->nlmsg_type == NLMSG_ERROR) return false;
            if (h->nlmsg_len < NLMSG_LENGTH(sizeof(tcmsg))) continue;
            const auto* t = static_cast<const tcmsg*>(NLMSG_DATA(h));
            if (t->tcm_ifindex != ifindex) continue;
            std::string_view kind;
            int alen = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof(tcmsg)));
            for (auto* a = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(const_cast<tcmsg*>(t)) + NLMSG_ALIGN(sizeof(tcmsg)));
                 RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
                if (a->rta_type == TCA_KIND && RTA_PAYLOAD(a) > 0) {
                    const auto* s = static_cast<const char*>(RTA_DATA(a));
                    kind = std::string_view(s, strnlen(s, RTA_PAYLOAD(a)));
                }
            }
            each(*t, kind);
        }
    }
}

}  // namespace

DeviceQueues read_device_queues(const std::string& ifname) {
    DeviceQueues out;
    const unsigned index = ::if_nametoindex(ifname.c_str());
    if (index == 0) return out;
    const int ifindex = static_cast<int>(index);
    std::vector<Qdisc> qs;
    const bool read = dump_tc(RTM_GETQDISC, ifindex, 0, [&](const tcmsg& t, std::string_view kind) {
        if (!kind.empty()) qs.push_back({std::string(kind), t.tcm_handle, t.tcm_parent});
    });
    if (!read) return out;
    for (const auto& q : qs) {
        if (q.parent == TC_H_INGRESS || q.handle == 0) continue;
        (void)dump_tc(RTM_GETTFILTER, ifindex, q.handle, [&](const tcmsg&, std::string_view kind) {
            if (!kind.empty()) ++out.filters;
        });
    }
    out.qdiscs = std::move(qs);
    return out;
}

std::string device_of(const std::string& address) {
    std::vector<sockaddr_storage> wanted;
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(address.c_str(), nullptr, &hints, &found) != 0) return {};
    for (const addrinfo* a = found; a; a = a->ai_next) {
        sockaddr_storage s{};
        std::memcpy(&s, a->ai_addr, std::min<std::size_t>(a->ai_addrlen, sizeof s));
        wanted.push_back(s);
    }
    ::freeaddrinfo(found);
    const auto same = [](const sockaddr* x, const sockaddr_storage& y) {
        if (x->sa_family != y.ss_family) return false;
        if (x->sa_family == AF_INET) {
            return reinterpret_cast<const sockaddr_in*>(x)->sin_addr.s_addr ==
                   reinterpret_cast<const sockaddr_in*>(&y)->sin_addr.s_addr;
        }
        if (x->sa_family == AF_INET6) {
            return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(x)->sin6_addr,
                               &reinterpret_cast<const sockaddr_in6*>(&y)->sin6_addr, sizeof(in6_addr)) == 0;
        }
        return false;
    };
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return {};
    std::string name;
    for (const ifaddrs* i = list; i && name.empty(); i = i->ifa_next) {
        if (!i->ifa_addr) continue;
        for (const auto& w : wanted) {
            if (same(i->ifa_addr, w)) {
                name = i->ifa_name;
                break;
            }
        }
    }
    ::freeifaddrs(list);
    return name;
}

NicQueue nic_queue_of(const std::string& address) {
    const std::string dev = device_of(address);
    if (dev.empty()) return NicQueue::unknown;
    const DeviceQueues q = read_device_queues(dev);
    return classify_nic_queue(q.qdiscs, q.filters);
}

}  // namespace hetcast
