#include "hetcast/sched/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "hetcast/error.hpp"
#include "hetcast/sim/flow.hpp"
#include "hetcast/sim/lottery.hpp"
#include "hetcast/sim/lower_bound.hpp"
#include "hetcast/sim/simulate.hpp"

namespace hetcast {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

/// How far above the target an edge's share must be before a shallower parent wins over a
/// roomier one (see grow_tree).
constexpr double headroom = 1.2;

/// A piece's digest in a job plan: 64 hex digits, quotes and a comma (JSON).
constexpr double plan_bytes_per_piece = 67;
/// What a relay spends on a piece before it goes on, beyond its bytes on the wire: a fixed
/// part (a frame read, a wake-up of the sending side, a digest finished) and a per-byte one
/// (SHA-256, written to the file and read back), measured here (docs/model.md,
/// "Cut-through").
constexpr double piece_hop_seconds = 50e-6;
constexpr double piece_hop_rate = 200e6;

/// -1, 0 or 1 as a is below, about equal to or above b (rates built from different sums).
int compare(double a, double b) {
    if (a == b) return 0;
    const double tol = 1e-9 * std::max(std::abs(a), std::abs(b));
    if (std::isfinite(tol) && std::abs(a - b) <= tol) return 0;
    return a < b ? -1 : 1;
}

/// The most any tree can carry: what the capacities force on every push
/// (capacity_lower_bound() per byte), and for each destination its fastest incoming pair.
double throughput_bound(const Network& net, const PlanRequest& req) {
    const double per_byte = capacity_lower_bound(net, req.root, req.dests, 1.0);
    double bound = per_byte > 0 ? 1 / per_byte : inf;
    const auto ranks = req.ranked();
    const auto& bw = net.bandwidth();
    for (NodeId v : req.dests) {
        double in = 0;
        for (NodeId u : ranks) {
            if (u != v) in = std::max(in, bw.empty() ? inf : bw[u][v]);
        }
        bound = std::min(bound, in);
    }
    return bound;
}

/// Which of several equally good attachments the greedy takes first.
enum class Pick {
    tightest,  ///< the participant with the least room left: the hard ones near the root
    roomiest,  ///< the participant with the most room
};

/// The greedy of Beaumont, Marchal & Robert, "Broadcast Trees for Heterogeneous Platforms"
/// (IPDPS 2005): grow a spanning tree from the root, each step attaching the participant
/// whose best edge keeps the tree's steady-state throughput highest. The paper is not at hand
/// here; this follows its best single-tree heuristic as we know it, with the one-port bound
/// of each node replaced by the shared resources of flow_path(): an edge's room is the least
/// of capacity / (edges crossing it + 1) over what it crosses, and of its pair bandwidth.
/// Throughput is counted only up to `target` (no tree carries more than the bound), so that
/// among trees that reach it the shallower ones win: fewer hops, less pipeline start-up.
/// A slow sender is never a parent while a roomier one exists; a subnet's uplink is crossed
/// again only while its share stays above the target.
/// `ranks`: the participants, the tree's root first; `users` counts the edges already
/// crossing each resource (of trees grown before), and this tree's are added.
std::vector<TreeEdge> grow_tree(const Network& net, const std::vector<NodeId>& ranks, double target, Pick pick,
                                std::vector<std::size_t>& users, double spare_up_to = headroom) {
    const std::size_t p = ranks.size();
    const auto caps = resource_capacities(net);
    const auto sub = net.subnet_of();
    std::vector<FlowPath> paths(p * p);
    for (std::size_t a = 0; a < p; ++a) {
        for (std::size_t b = 0; b < p; ++b) {
            if (a != b) paths[a * p + b] = flow_path(net, sub, ranks[a], ranks[b]);
        }
    }
    std::vector<char> in(p, 0);
    std::vector<std::size_t> depth(p, 0), members{0};
    in[0] = 1;
    double throughput = inf;
    std::vector<TreeEdge> edges;
    while (members.size() < p) {
        struct Choice {
            std::size_t u = 0, v = 0, depth = 0;
            double capped = -1, room = 0;
        };
        // True when a is the better attachment; `tight` turns the room preference around.
        // Before room, the better sender first: the first host into a subnet is the one that
        // can pass it on, and a slow sender comes last, as a leaf.
        const auto better = [&](const Choice& a, const Choice& b, bool tight) {
            if (const int c = compare(a.capped, b.capped)) return c > 0;
            if (a.depth != b.depth) return a.depth < b.depth;
            if (const int c = compare(caps[ranks[a.v]], caps[ranks[b.v]])) return c > 0;
            if (const int c = compare(a.room, b.room)) return tight ? c < 0 : c > 0;
            return false;
        };
        Choice best;
        for (std::size_t v = 1; v < p; ++v) {
            if (in[v]) continue;
            Choice here;
            for (std::size_t u : members) {
                const FlowPath& path = paths[u * p + v];
                double room = path.cap;
                for (std::size_t r : path.resources) {
                    room = std::min(room, caps[r] / static_cast<double>(users[r] + 1));
                }
                const Choice c{u, v, depth[u] + 1, std::min({throughput, room, target}), room};
                // Of v's parents, one with room up to the headroom beats a shallower one: an
                // edge with barely the target's share is bottlenecked twice over when the
                // target is set elsewhere on its path (an uplink), and TCP then gets ~12% less
                // than the fair share (measured on netlab slow-sender).
                const int spare = compare(std::min(room, target * spare_up_to), std::min(here.room, target * spare_up_to));
                if (here.capped < 0 || (compare(c.capped, here.capped) == 0 && spare != 0 ? spare > 0 : better(c, here, false))) {
                    here = c;
                }
            }
            if (best.capped < 0 || better(here, best, pick == Pick::tightest)) best = here;
        }
        for (std::size_t r : paths[best.u * p + best.v].resources) ++users[r];
        throughput = std::min(throughput, best.room);
        in[best.v] = 1;
        depth[best.v] = best.depth;
        members.push_back(best.v);
        edges.emplace_back(ranks[best.u], ranks[best.v]);
    }
    return edges;
}

std::vector<TreeEdge> grow_tree(const Network& net, const PlanRequest& req, double target, Pick pick,
                                double spare_up_to = headroom) {
    std::vector<std::size_t> users(resource_capacities(net).size(), 0);
    return grow_tree(net, req.ranked(), target, pick, users, spare_up_to);
}

/// grow_tree() among the root and one entry host per other subnet (its widest NIC), then
/// inside each subnet from its entry, each counting the edges grown before: O(s³ + n·k²)
/// for s subnets of k hosts instead of O(n³).
std::vector<TreeEdge> grow_by_subnet(const Network& net, const PlanRequest& req, double target, Pick pick) {
    const auto ranks = req.ranked();
    const auto sub = net.subnet_of();
    const auto& c = net.capacities();
    const auto nic = [&](NodeId v) { return c ? std::min(c->egress[v], c->ingress[v]) : inf; };
    std::vector<std::vector<NodeId>> groups(net.subnets()->size());
    for (NodeId v : ranks) groups[sub[v]].push_back(v);
    std::vector<NodeId> top{req.root};
    for (auto& g : groups) {
        if (g.empty()) continue;
        if (sub[g.front()] == sub[req.root]) {
            std::swap(*std::find(g.begin(), g.end(), req.root), g.front());
            std::stable_sort(g.begin() + 1, g.end(), [&](NodeId a, NodeId b) { return nic(a) > nic(b); });
            continue;
        }
        std::stable_sort(g.begin(), g.end(), [&](NodeId a, NodeId b) { return nic(a) > nic(b); });
        top.push_back(g.front());
    }
    std::vector<std::size_t> users(resource_capacities(net).size(), 0);
    std::vector<TreeEdge> edges = grow_tree(net, top, target, pick, users);
    for (const auto& g : groups) {
        if (g.size() < 2) continue;
        auto inner = grow_tree(net, g, target, pick, users);
        edges.insert(edges.end(), inner.begin(), inner.end());
    }
    return edges;
}

/// Edges reordered so that every parent is attached before its children.
std::vector<TreeEdge> parents_first(const Network& net, NodeId root, const std::vector<TreeEdge>& edges) {
    std::vector<char> placed(net.size(), 0);
    placed[root] = 1;
    std::vector<TreeEdge> out;
    while (out.size() < edges.size()) {
        for (const auto& [u, v] : edges) {
            if (placed[u] && !placed[v]) {
                placed[v] = 1;
                out.emplace_back(u, v);
            }
        }
    }
    return out;
}

/// The same tree with a sender's children outside its subnet moved under one of its
/// children inside it (the one with the fewest children, then the widest NIC out), where it
/// has both: the source (`every` false), or every such sender. The source has the whole
/// message from the start, so its flows inside the subnet fill its NIC (a relay's, when its
/// children together outrun what feeds it), and a flow that an uplink holds back meets that
/// full NIC too. On a fair NIC (fq_codel) it keeps its share; on a FIFO one it gets far less
/// (netlab random --seed 1, all-FIFO: a1 sent to seven hosts of its subnet and across a
/// 20 Mbit/s uplink, which then carried 10.6 Mbit/s). Edges come back with every parent
/// attached before its children.
std::vector<TreeEdge> senders_apart(const Network& net, NodeId root, const std::vector<TreeEdge>& edges, bool every) {
    const auto sub = net.subnet_of();
    const auto caps = resource_capacities(net);
    std::vector<std::size_t> kids(net.size(), 0);
    for (const auto& [u, v] : edges) ++kids[u];
    std::vector<std::optional<NodeId>> relay(net.size());
    std::vector<char> far(net.size(), 0);
    for (const auto& [u, v] : edges) {
        if (u != root && !every) continue;
        auto& r = relay[u];
        if (sub[v] != sub[u]) {
            far[u] = 1;
        } else if (!r || kids[v] < kids[*r] || (kids[v] == kids[*r] && caps[v] > caps[*r])) {
            r = v;
        }
    }
    std::vector<TreeEdge> moved;
    bool any = false;
    for (const auto& [u, v] : edges) {
        const bool move = far[u] && relay[u] && sub[v] != sub[u];
        any = any || move;
        moved.emplace_back(move ? *relay[u] : u, v);
    }
    return any ? parents_first(net, root, moved) : edges;
}

/// The same tree entering each subnet once: every flow into a subnet after the first one
/// into it (in attach order) comes from that first one's receiver instead. Flows through an
/// uplink whose bottlenecks differ (one held by a slow host beyond it, one not) share a FIFO
/// uplink unevenly (docs/model.md, "Sharing on FIFO links"): on netlab random --seed 4,
/// pipeline sent two flows into b across its 55 Mbit/s uplink, one to a 25 Mbit/s host,
/// predicted 1.21x the bound where a tree entering b once reaches it.
std::vector<TreeEdge> one_way_in(const Network& net, NodeId root, const std::vector<TreeEdge>& edges) {
    const auto sub = net.subnet_of();
    std::vector<std::optional<NodeId>> entry(net.subnets() ? net.subnets()->size() : 0);
    std::vector<TreeEdge> moved;
    bool any = false;
    for (const auto& [u, v] : edges) {
        if (sub[u] == sub[v]) {
            moved.emplace_back(u, v);
            continue;
        }
        auto& e = entry[sub[v]];
        const bool move = e.has_value();
        if (!e) e = v;
        any = any || move;
        moved.emplace_back(move ? *e : u, v);
    }
    return any ? parents_first(net, root, moved) : edges;
}

std::vector<TreeEdge> rank_chain(const PlanRequest& req) {
    const auto ranks = req.ranked();
    std::vector<TreeEdge> edges;
    for (std::size_t r = 1; r < ranks.size(); ++r) edges.emplace_back(ranks[r - 1], ranks[r]);
    return edges;
}

/// Task lists of a tree given as edges in attach order (every parent attached before its
/// children): a relay receives, then sends to its children, the deepest subtree first so the
/// longest pipeline starts first; equal heights in attach order.
Schedule tree_schedule(std::string algo, const Network& net, const PlanRequest& req,
                       const std::vector<TreeEdge>& edges) {
    const std::size_t n = net.size();
    std::vector<std::vector<NodeId>> children(n);
    for (const auto& [u, v] : edges) children[u].push_back(v);
    std::vector<std::size_t> height(n, 0);
    for (auto e = edges.rbegin(); e != edges.rend(); ++e) {
        height[e->first] = std::max(height[e->first], height[e->second] + 1);
    }
    Schedule s(std::move(algo), n, {Message{req.root, req.size, req.dests}});
    std::vector<NodeId> queue{req.root};
    for (std::size_t i = 0; i < queue.size(); ++i) {
        auto& kids = children[queue[i]];
        std::stable_sort(kids.begin(), kids.end(), [&](NodeId a, NodeId b) { return height[a] > height[b]; });
        for (NodeId c : kids) {
            s.add_transfer(0, queue[i], c);
            queue.push_back(c);
        }
    }
    return cuts_through(net, req) ? with_cut_through(net, req, std::move(s)) : s;
}

/// Hops on the longest relay path of any message: the source's children are one hop deep.
std::size_t relay_depth(const Schedule& s) {
    std::size_t deepest = 0;
    for (MessageId m = 0; m < s.messages.size(); ++m) {
        std::vector<std::optional<NodeId>> feeder(s.tasks.size());
        for (NodeId v = 0; v < s.tasks.size(); ++v) {
            for (const Task& t : s.tasks[v]) {
                if (t.op == Op::recv && t.message == m) feeder[v] = t.peer;
            }
        }
        for (NodeId v = 0; v < s.tasks.size(); ++v) {
            std::size_t d = 0;
            for (auto u = feeder[v]; u && d <= s.tasks.size(); u = feeder[*u]) ++d;
            deepest = std::max(deepest, d);
        }
    }
    return deepest;
}

}  // namespace

bool cuts_through(const Network& net, const PlanRequest& req) {
    return req.model == ExecModel::nonblocking && !net.is_cost_matrix() &&
           req.size > static_cast<double>(min_planned_piece) && piece_for(req.size) > 0;
}

double piece_overhead(const Network& net, const Schedule& s) {
    if (s.relay != Relay::cut_through || s.piece == 0 || s.messages.empty()) return 0;
    const auto piece = static_cast<double>(s.piece);
    double digests = 0;
    for (const Message& m : s.messages) digests += std::ceil(m.size / piece);
    std::size_t participants = 0;
    for (const auto& list : s.tasks) participants += !list.empty();
    const double coordinator_out = resource_capacities(net).at(s.messages.front().source);
    const double plan = std::isfinite(coordinator_out) && participants > 1
                            ? digests * plan_bytes_per_piece * static_cast<double>(participants - 1) / coordinator_out
                            : 0;
    return plan + static_cast<double>(relay_depth(s)) * (piece_hop_seconds + piece / piece_hop_rate);
}

double weighed_completion(const Network& net, const Schedule& s, ExecModel model,
                          const std::vector<BackgroundFlow>& beside) {
    return simulate_beside(net, s, model, beside).completion + piece_overhead(net, s);
}

double lottery_weighed_completion(const Network& net, const Schedule& s, ExecModel model,
                                  const std::vector<BackgroundFlow>& beside) {
    return lottery_completion(net, s, simulate_beside(net, s, model, beside)) + piece_overhead(net, s);
}

std::vector<std::uint64_t> piece_candidates(double size) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t p = min_planned_piece; p <= max_cut_through_piece; p *= 2) {
        if (size > static_cast<double>(p) * static_cast<double>(max_pieces)) continue;
        out.push_back(p);
        if (static_cast<double>(p) >= size) break;
    }
    return out;
}

PieceChoice choose_piece(const Network& net, const Schedule& s) {
    double largest = 0;
    for (const Message& m : s.messages) largest = std::max(largest, m.size);
    std::vector<PieceChoice> weighed;
    for (const std::uint64_t p : piece_candidates(largest)) {
        Schedule c = s;
        c.relay = Relay::cut_through;
        c.piece = p;
        weighed.push_back({p, weighed_completion(net, c, ExecModel::nonblocking)});
    }
    if (weighed.empty()) throw InputError("a message of this size has too many pieces to cut through");
    double least = inf;
    for (const auto& w : weighed) least = std::min(least, w.weighed);
    PieceChoice best;
    for (const auto& w : weighed) {
        if (w.weighed <= least * (1 + piece_tie)) best = w;  // ascending: the largest near-tie
    }
    return best;
}

Schedule with_cut_through(const Network& net, const PlanRequest& req, Schedule s) {
    if (req.options.piece != 0) return with_cut_through(std::move(s), req.options.piece);
    const std::uint64_t piece = choose_piece(net, s).piece;
    return with_cut_through(std::move(s), piece);
}

Schedule with_cut_through(Schedule s, std::uint64_t piece) {
    if (piece == 0) {
        double largest = 0;
        for (const Message& m : s.messages) largest = std::max(largest, m.size);
        piece = piece_for(largest);
    }
    if (piece == 0) throw InputError("a message of this size has too many pieces to cut through");
    s.relay = Relay::cut_through;
    s.piece = piece;
    return s;
}

namespace {

/// The mean time at which a timeline's transfers complete.
double mean_delivery(const Timeline& tl) {
    double sum = 0;
    for (const Transfer& t : tl.transfers) sum += t.complete;
    return tl.transfers.empty() ? 0 : sum / static_cast<double>(tl.transfers.size());
}

}  // namespace

Schedule plan_pipeline(const Network& net, const PlanRequest& req) {
    const auto& c = net.capacities();
    const bool fifo_hosts = c && c->queues == Queues::fifo;  // host NICs queue in FIFOs
    if (req.dests.size() + 1 > pipeline_flat_max && net.subnets() && net.subnets()->size() > 1) {
        // Trees per subnet, weighed by their steady-state throughput and depth (the start-up
        // of a piece per hop) rather than simulated; only the one kept is.
        const double piece = static_cast<double>(req.options.piece ? req.options.piece : piece_for(req.size));
        std::optional<std::vector<TreeEdge>> best;
        double best_time = inf;
        const auto weigh = [&](std::vector<TreeEdge> e) {
            const double t = tree_throughput(net, e);
            std::vector<std::size_t> depth(net.size(), 0);
            std::size_t deepest = 0;
            for (const auto& [u, v] : e) deepest = std::max(deepest, depth[v] = depth[u] + 1);
            const double time = (req.size + static_cast<double>(deepest) * piece) / t;
            if (!best || time < best_time) {
                best_time = time;
                best = std::move(e);
            }
        };
        const double target = throughput_bound(net, req);
        // Weighed without the flow model, which alone sees what FIFO NICs cost a source
        // that sends both ways (senders_apart()): where they are FIFO, that tree is not one.
        for (const Pick pick : {Pick::tightest, Pick::roomiest}) {
            auto e = grow_by_subnet(net, req, target, pick);
            weigh(fifo_hosts ? senders_apart(net, req.root, e, false) : std::move(e));
        }
        weigh(rank_chain(req));
        return tree_schedule("pipeline", net, req, *best);
    }
    // A few greedy trees — both room preferences, aimed at the bound and then at what the
    // first try reached (which lets more of the tree stay shallow), and at multiples of the
    // bound (fewer children per sender, every relay a feed well above its own rate) — and
    // the rank chain, as a floor. Each greedy tree also with the source, and with every
    // sender, apart (senders_apart()), which win where host NICs are FIFO queues
    // (Capacities::queues); there the trees are weighed with the FIFOs' lottery.
    std::vector<std::vector<TreeEdge>> trees;
    const auto add = [&](std::vector<TreeEdge> e) {
        if (std::find(trees.begin(), trees.end(), e) == trees.end()) trees.push_back(std::move(e));
    };
    const double bound = throughput_bound(net, req);
    for (const Pick pick : {Pick::tightest, Pick::roomiest}) {
        double target = bound;
        for (int round = 0; round < 2; ++round) {
            auto e = grow_tree(net, req, target, pick);
            const double reached = tree_throughput(net, e);
            add(senders_apart(net, req.root, e, false));
            add(senders_apart(net, req.root, e, true));
            add(one_way_in(net, req.root, e));
            add(std::move(e));
            if (compare(reached, target) >= 0) break;
            target = reached;
        }
        // Without the headroom: a relay fed at the bound feeds as many children as its NIC
        // has room for at the bound, so subnets get trees instead of chains. On hosts-96 (12
        // per subnet, 20 Mbit/s NICs, the bound 10) the chains cost a piece per hop on 19 hops.
        {
            auto e = grow_tree(net, req, bound, pick, 1.0);
            add(one_way_in(net, req.root, e));
            add(std::move(e));
        }
        for (const double slack : {2.5, 4.0}) {
            auto e = grow_tree(net, req, bound * slack, pick);
            add(senders_apart(net, req.root, e, true));
            add(one_way_in(net, req.root, e));
            add(std::move(e));
        }
    }
    add(rank_chain(req));
    struct Weighed {
        Schedule s;
        double time, mean;
    };
    std::vector<Weighed> weighed;
    double least = inf;
    for (const auto& e : trees) {
        Schedule s = tree_schedule("pipeline", net, req, e);
        const Timeline tl = simulate_beside(net, s, req.model, {});
        const double t = (fifo_hosts ? lottery_completion(net, s, tl) : tl.completion) + piece_overhead(net, s);
        least = std::min(least, t);
        weighed.push_back({std::move(s), t, mean_delivery(tl)});
    }
    // Among near-ties, the tree whose copies land earliest on average: where a bottleneck
    // host holds every tree to the same completion, a tree grown tight to it runs each flow
    // at the edge of its share, and any unfairness in how TCP shares a NIC is lost time
    // (seed 14 of issue 23: 1.12-1.21x the bound), while one with slack loses nothing.
    std::size_t pick = 0;
    for (std::size_t k = 0; k < weighed.size(); ++k) {
        if (weighed[k].time > least * (1 + tree_tie)) continue;
        if (weighed[pick].time > least * (1 + tree_tie) || weighed[k].mean < weighed[pick].mean * (1 - 1e-9)) pick = k;
    }
    return std::move(weighed[pick].s);
}

Schedule plan_chain(const Network& net, const PlanRequest& req) {
    return tree_schedule("chain", net, req, rank_chain(req));
}

}  // namespace hetcast
