// Khuller, Kim, Wan, "Broadcasting on Networks of Workstations": LCF (§3) with the footnote's
// interruption, LCF Multicast (§4), bounded degree (§5.1–5.2), bounded size matching
// (§5.3–5.4) and Interleaved LCF (§6.2), planned in rounds over the subnet map.
//
// All four run one event-driven engine. A node is free at integer round times; when free it
// gets one transfer or, with nothing to do, drops out for good (so no node ever waits and the
// simulated timeline on a cluster-model network is the planned one).
#include "hetcast/sched/lcf.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <queue>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/map/eco.hpp"

namespace hetcast {

Subnets subnet_map(const Network& net, double tolerance, double m) {
    if (const auto& s = net.subnets()) return *s;
    return eco_partition(eco_edge_costs(net, m), tolerance);
}

std::size_t lcf_global_rounds(const Network& net, const Subnets& clusters, double m) {
    constexpr std::size_t cap = std::size_t{1} << 20;
    std::vector<double> intra;
    std::vector<double> inter;
    for (std::size_t c = 0; c < clusters.size(); ++c) {
        const auto& here = clusters[c];
        const auto& next = clusters[(c + 1) % clusters.size()];
        for (std::size_t a = 0; a < here.size(); ++a) {
            if (here.size() > 1) intra.push_back(net.time(here[a], here[(a + 1) % here.size()], m));
            if (clusters.size() > 1 && !next.empty()) inter.push_back(net.time(here[a], next[a % next.size()], m));
        }
    }
    if (intra.empty() || inter.empty()) return 1;
    const auto median = [](std::vector<double>& v) {
        const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
        std::nth_element(v.begin(), mid, v.end());
        return *mid;
    };
    const double local = median(intra);
    const double global = median(inter);
    if (!(local > 0)) return global > 0 ? cap : 1;
    const double ratio = std::ceil(global / local - 1e-9);
    if (!(ratio > 1)) return 1;
    return ratio >= static_cast<double>(cap) ? cap : static_cast<std::size_t>(ratio);
}

namespace {

using Time = std::int64_t;
constexpr std::size_t never = std::numeric_limits<std::size_t>::max();

enum class Rule { lcf, interleaved };

struct Variant {
    const char* name;
    Rule rule = Rule::lcf;
    std::size_t degree = 0;                 // d_i of every cluster; 0: unbounded
    std::vector<std::size_t> degrees = {};  // d_i per cluster in subnet-map order, when given
    std::size_t matching = 0;               // B; 0: unbounded
};

struct Cluster {
    std::vector<NodeId> members;  // the root, then destinations, then the rest; served in order
    std::size_t degree = 0;       // d_i; 0: unbounded
    std::size_t size1 = 0;        // members LCF works with (n_i, or min(n_i, d_i))
    std::size_t need = 0;         // members[0, need) are the root and the destinations
    std::size_t next = 0;         // members[0, next) hold the message or are being sent it
    std::size_t inflight = 0;     // inter-cluster transfers into or out of it now
    bool reached = false;
};

struct Event {
    Time t = 0;
    bool release = false;  // a global transfer between clusters a and b completes
    bool arrival = false;  // node a receives the message (else: node a is free again)
    std::uint32_t a = 0;
    std::uint32_t b = 0;
    bool operator>(const Event& o) const { return t > o.t; }
};

class Engine {
public:
    Engine(const Network& net, const PlanRequest& req, Variant v)
        : v_(v), sched_(v.name, net.size(), {Message{req.root, req.size, req.dests}}),
          cluster_of_(net.size(), 0), pos_(net.size(), 0), want_global_(net.size(), 0) {
        const Subnets subnets = subnet_map(net, req.options.tolerance, req.size);
        if (!v.degrees.empty() && v.degrees.size() != subnets.size()) {
            throw InputError(std::string(v.name) + ": " + std::to_string(v.degrees.size()) + " degrees given for " +
                             std::to_string(subnets.size()) + " clusters (one per cluster, in subnet-map order)");
        }
        std::vector<char> wanted(net.size(), 0);
        wanted[req.root] = 1;
        for (NodeId d : req.dests) wanted[d] = 1;
        std::vector<char> seen(net.size(), 0);
        std::size_t covered = 0;
        for (std::size_t k = 0; k < subnets.size(); ++k) {
            const auto& s = subnets[k];
            Cluster c;
            c.members = s;
            c.degree = v.degrees.empty() ? v.degree : v.degrees[k];
            for (NodeId x : s) {
                if (x >= net.size() || seen[x]) throw Error("lcf: the subnet map does not partition the nodes");
                seen[x] = 1;
                ++covered;
            }
            std::stable_sort(c.members.begin(), c.members.end(), [&](NodeId a, NodeId b) {
                return std::pair(a != req.root, !wanted[a]) < std::pair(b != req.root, !wanted[b]);
            });
            c.need = static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [&](NodeId x) { return wanted[x]; }));
            c.size1 = c.degree ? std::min(s.size(), c.degree) : s.size();
            if (c.members.empty()) continue;
            const auto idx = static_cast<std::uint32_t>(cl_.size());
            for (std::size_t p = 0; p < c.members.size(); ++p) {
                cluster_of_[c.members[p]] = idx;
                pos_[c.members[p]] = p;
            }
            cl_.push_back(std::move(c));
        }
        if (covered != net.size()) throw Error("lcf: the subnet map does not partition the nodes");

        const std::uint32_t home = cluster_of_[req.root];
        cl_[home].reached = true;
        cl_[home].next = 1;
        for (std::uint32_t c = 0; c < cl_.size(); ++c) {
            if (c == home) continue;
            pre_.push_back(c);
            if (cl_[c].need > 0) post_.push_back(c);
        }
        const auto order = [this](auto key) {
            return [this, key](std::uint32_t a, std::uint32_t b) {
                const auto ka = key(cl_[a]);
                const auto kb = key(cl_[b]);
                return ka != kb ? ka > kb : a < b;
            };
        };
        std::sort(pre_.begin(), pre_.end(), order([](const Cluster& c) { return std::pair(c.size1, c.need); }));
        std::sort(post_.begin(), post_.end(),
                  order([](const Cluster& c) { return std::pair(std::min(c.size1, c.need), c.need); }));
        pre_left_ = pre_.size();
        post_left_ = post_.size();

        // The switch to phases 2 and 3 of LCF Multicast (§4) and bounded matching (§5.3):
        // LCF(m) stops once m nodes hold the message. A broadcast is LCF(N) (§4).
        const bool broadcast = req.dests.size() + 1 == net.size();
        const std::size_t k1 = broadcast ? pre_.size() : post_.size();
        switch_at_ = broadcast ? never : k1;
        if (v.matching && k1 > v.matching) switch_at_ = v.matching;
        if (v.rule == Rule::interleaved) switch_at_ = broadcast ? never : 0;

        c_ = static_cast<Time>(lcf_global_rounds(net, subnets, req.size));
        global_busy_ = req.model == ExecModel::postal ? 1 : c_;
    }

    Schedule run() {
        events_.push(Event{0, false, false, sched_.messages[0].source, 0});
        std::vector<NodeId> free;
        while (!events_.empty()) {
            const Time t = events_.top().t;
            free.clear();
            while (!events_.empty() && events_.top().t == t) {
                const Event e = events_.top();
                events_.pop();
                if (e.release) {
                    --cl_[e.a].inflight;
                    --cl_[e.b].inflight;
                    --inflight_;
                    continue;
                }
                if (e.arrival) ++holders_;
                free.push_back(e.a);
            }
            if (holders_ >= switch_at_) switched_ = true;
            if (!free.empty()) decide(t, free);
        }
        return std::move(sched_);
    }

private:
    // LCF's view of a cluster's size: all its members (or the first d_i) in phase 1, the root
    // and destinations among those after the switch.
    [[nodiscard]] std::size_t lcf_size(const Cluster& c) const {
        return switched_ ? std::min(c.size1, c.need) : c.size1;
    }
    [[nodiscard]] std::size_t targets_left() const { return switched_ ? post_left_ : pre_left_; }
    [[nodiscard]] bool may_send_global(NodeId x) const {
        const Cluster& c = cl_[cluster_of_[x]];
        return pos_[x] < c.size1 && targets_left() > 0 && (!c.degree || c.inflight < c.degree) &&
               (!v_.matching || inflight_ < v_.matching);
    }

    void decide(Time t, std::vector<NodeId>& free) {
        std::sort(free.begin(), free.end(), [this](NodeId a, NodeId b) {
            return std::pair(cluster_of_[a], pos_[a]) < std::pair(cluster_of_[b], pos_[b]);
        });
        if (v_.rule == Rule::interleaved) {
            for (NodeId x : free) interleave(t, x);
            return;
        }
        std::vector<char> busy(free.size(), 0);
        const std::size_t u = targets_left();
        if (u > 0) {
            // Before the switch: the footnote of §3, all remaining clusters at once or none.
            // After it: phase 2 of §4 and §5.3, global transfers before local ones.
            const auto picks = pick_senders(free, u);
            if (switched_ || picks.size() == u) {
                for (std::size_t k : picks) {
                    send_global(t, free[k]);
                    busy[k] = 1;
                }
            }
        }
        for (std::size_t k = 0; k < free.size(); ++k) {
            if (busy[k]) continue;
            const NodeId x = free[k];
            const Cluster& c = cl_[cluster_of_[x]];
            if (send_local(t, x, lcf_size(c))) continue;
            if (may_send_global(x)) {
                send_global(t, x);
                continue;
            }
            send_local(t, x, c.need);
        }
    }

    // §6.2: a holder alternates local and global steps, skipping one with nothing to do.
    void interleave(Time t, NodeId x) {
        const std::size_t limit = lcf_size(cl_[cluster_of_[x]]);
        if (want_global_[x] && may_send_global(x)) {
            send_global(t, x);
            want_global_[x] = 0;
        } else if (send_local(t, x, limit)) {
            want_global_[x] = 1;
        } else if (may_send_global(x)) {
            send_global(t, x);
            want_global_[x] = 0;
        }
    }

    // Up to `limit` free nodes (indices into `free`) that may send globally now within the
    // degree and matching limits, taking first those whose clusters need them least: the
    // fewest members left to serve per free holder.
    std::vector<std::size_t> pick_senders(const std::vector<NodeId>& free, std::size_t limit) {
        std::vector<std::size_t> order;
        std::vector<std::size_t> free_in(cl_.size(), 0);
        for (std::size_t k = 0; k < free.size(); ++k) {
            const NodeId x = free[k];
            if (pos_[x] >= cl_[cluster_of_[x]].size1) continue;
            order.push_back(k);
            ++free_in[cluster_of_[x]];
        }
        const auto left = [this](std::uint32_t c) {
            const std::size_t s = lcf_size(cl_[c]);
            return cl_[c].next < s ? s - cl_[c].next : 0;
        };
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            const std::uint32_t ca = cluster_of_[free[a]];
            const std::uint32_t cb = cluster_of_[free[b]];
            return std::uint64_t{left(ca)} * free_in[cb] < std::uint64_t{left(cb)} * free_in[ca];
        });
        std::vector<std::size_t> picks;
        std::vector<std::size_t> taken(cl_.size(), 0);
        for (std::size_t k : order) {
            if (picks.size() == limit) break;
            if (v_.matching && inflight_ + picks.size() >= v_.matching) break;
            const std::uint32_t c = cluster_of_[free[k]];
            if (cl_[c].degree && cl_[c].inflight + taken[c] >= cl_[c].degree) continue;
            ++taken[c];
            picks.push_back(k);
        }
        std::sort(picks.begin(), picks.end());
        return picks;
    }

    bool send_local(Time t, NodeId x, std::size_t limit) {
        Cluster& c = cl_[cluster_of_[x]];
        if (c.next >= limit) return false;
        const NodeId y = c.members[c.next++];
        sched_.add_transfer(0, x, y);
        events_.push(Event{t + 1, false, false, x, 0});
        events_.push(Event{t + 1, false, true, y, 0});
        return true;
    }

    // To the largest cluster not reached yet, through its first member.
    void send_global(Time t, NodeId x) {
        auto& list = switched_ ? post_ : pre_;
        auto& cursor = switched_ ? post_cursor_ : pre_cursor_;
        while (cl_[list[cursor]].reached) ++cursor;
        const std::uint32_t target = list[cursor];
        Cluster& to = cl_[target];
        to.reached = true;
        to.next = 1;
        --pre_left_;
        if (to.need > 0) --post_left_;
        const std::uint32_t from = cluster_of_[x];
        ++cl_[from].inflight;
        ++to.inflight;
        ++inflight_;
        sched_.add_transfer(0, x, to.members[0]);
        events_.push(Event{t + global_busy_, false, false, x, 0});
        events_.push(Event{t + c_, false, true, to.members[0], 0});
        events_.push(Event{t + c_, true, false, from, target});
    }

    Variant v_;
    Schedule sched_;
    std::vector<Cluster> cl_;
    std::vector<std::uint32_t> cluster_of_;
    std::vector<std::size_t> pos_;
    std::vector<char> want_global_;
    std::vector<std::uint32_t> pre_;   // every other cluster, largest first
    std::vector<std::uint32_t> post_;  // the other clusters holding destinations, largest first
    std::size_t pre_cursor_ = 0;
    std::size_t post_cursor_ = 0;
    std::size_t pre_left_ = 0;
    std::size_t post_left_ = 0;
    std::size_t switch_at_ = never;
    bool switched_ = false;
    std::size_t holders_ = 1;
    std::size_t inflight_ = 0;
    Time c_ = 1;
    Time global_busy_ = 1;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
};

}  // namespace

Schedule plan_lcf(const Network& net, const PlanRequest& req) {
    return Engine(net, req, {"lcf"}).run();
}

Schedule plan_lcf_degree(const Network& net, const PlanRequest& req) {
    // --degree N1,N2,... first, then the file's degrees, then one --degree N (default 2) for all.
    const auto& given = !req.options.degrees.empty() || req.options.degree_given ? req.options.degrees : net.degrees();
    if (given.empty() ? req.options.degree == 0 : std::find(given.begin(), given.end(), 0) != given.end()) {
        throw InputError("lcf-degree: the degree must be at least 1");
    }
    return Engine(net, req, {"lcf-degree", Rule::lcf, req.options.degree, given, 0}).run();
}

Schedule plan_lcf_matching(const Network& net, const PlanRequest& req) {
    if (req.options.matching == 0) throw InputError("lcf-matching: the matching size must be at least 1");
    return Engine(net, req, {"lcf-matching", Rule::lcf, 0, {}, req.options.matching}).run();
}

Schedule plan_lcf_interleaved(const Network& net, const PlanRequest& req) {
    return Engine(net, req, {"lcf-interleaved", Rule::interleaved}).run();
}

}  // namespace hetcast
