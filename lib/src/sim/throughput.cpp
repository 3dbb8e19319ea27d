#include "hetcast/sim/throughput.hpp"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "hetcast/error.hpp"
#include "hetcast/sim/flow.hpp"

namespace hetcast {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

/// The destinations without repeats and without the root; throws on an unknown node.
std::vector<NodeId> clean_dests(const Network& net, NodeId root, const std::vector<NodeId>& dests) {
    if (root >= net.size()) throw InputError("throughput: root " + std::to_string(root) + " is not a node");
    std::vector<NodeId> d;
    for (NodeId k : dests) {
        if (k >= net.size()) throw InputError("throughput: destination " + std::to_string(k) + " is not a node");
        if (k != root) d.push_back(k);
    }
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    return d;
}

std::vector<NodeId> participants(const Network& net, NodeId root, const std::vector<NodeId>& dests,
                                 const ThroughputOptions& opt) {
    std::vector<NodeId> p;
    if (opt.relays) {
        for (NodeId i = 0; i < net.size(); ++i) p.push_back(i);
    } else {
        p = dests;
        p.push_back(root);
        std::sort(p.begin(), p.end());
    }
    return p;
}

double pair_cap(const Network& net, NodeId i, NodeId j) {
    return net.bandwidth().empty() ? inf : net.bandwidth()[i][j];
}

/// GLPK keeps an environment per thread until glp_free_env(). A daemon plans on
/// short-lived request threads, so every solve frees it when its problem is gone
/// (LeakSanitizer found ~5-30 KB left per thread). Declare it before the problem.
struct GlpkEnv {
    GlpkEnv() = default;
    GlpkEnv(const GlpkEnv&) = delete;
    GlpkEnv& operator=(const GlpkEnv&) = delete;
    ~GlpkEnv() { glp_free_env(); }
};

struct LpDeleter {
    void operator()(glp_prob* lp) const { glp_delete_prob(lp); }
};

}  // namespace

double throughput_cut_bound(const Network& net, NodeId root, const std::vector<NodeId>& dests,
                            const ThroughputOptions& opt) {
    const auto d = clean_dests(net, root, dests);
    if (d.empty()) return inf;
    const auto p = participants(net, root, d, opt);
    double bound = inf;
    double out = 0;
    for (NodeId j : p) {
        if (j != root) out += pair_cap(net, root, j);
    }
    bound = std::min(bound, out);
    for (NodeId k : d) {
        double in = 0;
        for (NodeId i : p) {
            if (i != k) in += pair_cap(net, i, k);
        }
        bound = std::min(bound, in);
    }
    if (const auto& c = net.capacities()) {
        bound = std::min(bound, c->egress[root]);
        const auto sub = net.subnet_of();
        bool leaves = false;
        for (NodeId k : d) {
            bound = std::min({bound, c->ingress[k], c->disk[k]});
            if (sub[k] != sub[root]) {
                leaves = true;
                if (!c->uplink.empty()) bound = std::min(bound, c->uplink[sub[k]]);
            }
        }
        if (leaves && !c->uplink.empty()) bound = std::min(bound, c->uplink[sub[root]]);
    }
    return bound;
}

namespace {

/// The pairs among the participants and what each crosses.
struct Pairs {
    std::vector<std::size_t> from, to;  ///< participant indices
    std::vector<FlowPath> path;
};

Pairs make_pairs(const Network& net, const std::vector<NodeId>& p) {
    Pairs e;
    const auto sub = net.subnet_of();
    for (std::size_t a = 0; a < p.size(); ++a) {
        for (std::size_t b = 0; b < p.size(); ++b) {
            if (a == b) continue;
            e.from.push_back(a);
            e.to.push_back(b);
            e.path.push_back(flow_path(net, sub, p[a], p[b]));
        }
    }
    return e;
}

/// Column 1 is T, columns 2.. the n of each pair; the rows are the shared resources (finite
/// ones only). Rates are in units of `scale`.
void add_rate_part(glp_prob* q, const Pairs& e, const std::vector<double>& caps, double scale, double t_max) {
    glp_set_obj_dir(q, GLP_MAX);
    glp_add_cols(q, static_cast<int>(1 + e.path.size()));
    glp_set_col_bnds(q, 1, GLP_DB, 0, t_max);
    glp_set_obj_coef(q, 1, 1);
    for (std::size_t i = 0; i < e.path.size(); ++i) {
        const double c = e.path[i].cap / scale;
        if (std::isfinite(c)) {
            glp_set_col_bnds(q, static_cast<int>(2 + i), GLP_DB, 0, c);
        } else {
            glp_set_col_bnds(q, static_cast<int>(2 + i), GLP_LO, 0, 0);
        }
    }
    std::vector<std::vector<int>> users(caps.size());
    for (std::size_t i = 0; i < e.path.size(); ++i) {
        for (std::size_t r : e.path[i].resources) users[r].push_back(static_cast<int>(2 + i));
    }
    for (std::size_t r = 0; r < caps.size(); ++r) {
        if (!std::isfinite(caps[r]) || users[r].empty()) continue;
        const int row = glp_add_rows(q, 1);
        glp_set_row_bnds(q, row, GLP_UP, 0, caps[r] / scale);
        std::vector<int> ind{0};
        ind.insert(ind.end(), users[r].begin(), users[r].end());
        const std::vector<double> one(ind.size(), 1.0);
        glp_set_mat_row(q, row, static_cast<int>(users[r].size()), ind.data(), one.data());
    }
}

void solve(glp_prob* q, int method, bool presolve) {
    glp_term_out(GLP_OFF);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.meth = method;
    parm.presolve = presolve ? GLP_ON : GLP_OFF;
    const int rc = glp_simplex(q, &parm);
    if (rc != 0 || glp_get_status(q) != GLP_OPT) {
        throw Error("throughput: GLPK's simplex failed (code " + std::to_string(rc) + ", status " +
                    std::to_string(glp_get_status(q)) + ")");
    }
}

/// Beaumont et al.'s LP as written: x^k_ij for every destination and pair.
double solve_flows(glp_prob* q, const Pairs& e, std::size_t np, std::size_t root, const std::vector<std::size_t>& dest) {
    const int pairs = static_cast<int>(e.path.size());
    for (std::size_t k : dest) {
        // Conservation at every participant v: out − in = T at the root, −T at k, 0 elsewhere.
        const int first = glp_add_rows(q, static_cast<int>(np));
        std::vector<std::vector<std::pair<int, double>>> rows(np);
        rows[root].emplace_back(1, -1);
        rows[k].emplace_back(1, 1);
        for (int i = 0; i < pairs; ++i) {
            // No flow into the root nor out of k: it would never help.
            if (e.to[i] == root || e.from[i] == k) continue;
            const int col = glp_add_cols(q, 1);
            glp_set_col_bnds(q, col, GLP_LO, 0, 0);
            rows[e.from[i]].emplace_back(col, 1);
            rows[e.to[i]].emplace_back(col, -1);
            const int couple = glp_add_rows(q, 1);  // x^k_ij − n_ij ≤ 0
            glp_set_row_bnds(q, couple, GLP_UP, 0, 0);
            const int ind[] = {0, col, 2 + i};
            const double val[] = {0, 1, -1};
            glp_set_mat_row(q, couple, 2, ind, val);
        }
        for (std::size_t v = 0; v < np; ++v) {
            std::vector<int> ind{0};
            std::vector<double> val{0};
            for (const auto& [c, a] : rows[v]) {
                ind.push_back(c);
                val.push_back(a);
            }
            glp_set_row_bnds(q, first + static_cast<int>(v), GLP_FX, 0, 0);
            glp_set_mat_row(q, first + static_cast<int>(v), static_cast<int>(rows[v].size()), ind.data(), val.data());
        }
    }
    solve(q, GLP_PRIMAL, true);
    return glp_get_obj_val(q);
}

/// Max flow from s to t over a dense capacity matrix (Dinic); `side` gets the source side of
/// a minimum cut.
double max_flow(std::vector<std::vector<double>> res, std::size_t s, std::size_t t, std::vector<char>& side) {
    const std::size_t n = res.size();
    constexpr double eps = 1e-12;
    double total = 0;
    std::vector<int> level(n);
    std::vector<std::size_t> next(n);
    const auto bfs = [&] {
        std::fill(level.begin(), level.end(), -1);
        std::vector<std::size_t> queue{s};
        level[s] = 0;
        for (std::size_t h = 0; h < queue.size(); ++h) {
            const std::size_t u = queue[h];
            for (std::size_t v = 0; v < n; ++v) {
                if (level[v] < 0 && res[u][v] > eps) {
                    level[v] = level[u] + 1;
                    queue.push_back(v);
                }
            }
        }
        return level[t] >= 0;
    };
    const auto dfs = [&](auto& self, std::size_t u, double pushed) -> double {
        if (u == t) return pushed;
        for (std::size_t& v = next[u]; v < n; ++v) {
            if (level[v] != level[u] + 1 || res[u][v] <= eps) continue;
            const double got = self(self, v, std::min(pushed, res[u][v]));
            if (got > 0) {
                res[u][v] -= got;
                res[v][u] += got;
                return got;
            }
        }
        return 0;
    };
    while (bfs()) {
        std::fill(next.begin(), next.end(), 0);
        while (const double f = dfs(dfs, s, std::numeric_limits<double>::infinity())) total += f;
    }
    side.assign(n, 0);
    for (std::size_t v = 0; v < n; ++v) side[v] = level[v] >= 0;
    return total;
}

/// The same LP with each destination's flow replaced by the cuts it must cross (max-flow
/// min-cut: a flow of value T from the root to k exists iff every cut separating them
/// carries T), added as they are violated; the dual simplex re-optimises from the last basis.
double solve_cuts(glp_prob* q, const Pairs& e, std::size_t np, std::size_t root, const std::vector<std::size_t>& dest,
                  std::size_t max_rounds) {
    const int pairs = static_cast<int>(e.path.size());
    std::vector<std::vector<int>> col(np, std::vector<int>(np, 0));
    for (int i = 0; i < pairs; ++i) col[e.from[i]][e.to[i]] = 2 + i;
    std::vector<std::vector<char>> seen;
    const auto add_cut = [&](const std::vector<char>& side) {
        if (std::find(seen.begin(), seen.end(), side) != seen.end()) return false;
        seen.push_back(side);
        std::vector<int> ind{0, 1};
        std::vector<double> val{0, 1};
        for (std::size_t a = 0; a < np; ++a) {
            for (std::size_t b = 0; b < np; ++b) {
                if (side[a] && !side[b]) {
                    ind.push_back(col[a][b]);
                    val.push_back(-1);
                }
            }
        }
        const int row = glp_add_rows(q, 1);  // T − Σ n over the cut ≤ 0
        glp_set_row_bnds(q, row, GLP_UP, 0, 0);
        glp_set_mat_row(q, row, static_cast<int>(ind.size() - 1), ind.data(), val.data());
        return true;
    };
    // The root's own cut and each destination's: all it takes in.
    std::vector<char> side(np, 0);
    side[root] = 1;
    add_cut(side);
    for (std::size_t k : dest) {
        side.assign(np, 1);
        side[k] = 0;
        add_cut(side);
    }
    solve(q, GLP_PRIMAL, false);
    std::vector<std::vector<double>> cap(np, std::vector<double>(np, 0));
    for (std::size_t round = 0;; ++round) {
        const double t = glp_get_obj_val(q);
        if (round == max_rounds) return t;
        for (int i = 0; i < pairs; ++i) cap[e.from[i]][e.to[i]] = std::max(0.0, glp_get_col_prim(q, 2 + i));
        bool added = false;
        for (std::size_t k : dest) {
            if (max_flow(cap, root, k, side) < t * (1 - 1e-9)) added = add_cut(side) || added;
        }
        // Every relaxation bounds T* from above, so stopping on a repeated cut is still safe.
        if (!added) return t;
        solve(q, GLP_DUALP, false);
    }
}

}  // namespace

double steady_state_throughput(const Network& net, NodeId root, const std::vector<NodeId>& dests,
                               const ThroughputOptions& opt) {
    const auto d = clean_dests(net, root, dests);
    if (d.empty()) return inf;
    const auto p = participants(net, root, d, opt);
    const std::size_t np = p.size();
    const std::size_t pairs = np * (np - 1);
    // Per destination: no flow into the root nor out of the destination.
    const std::size_t vars = 1 + pairs + (opt.explicit_flows ? d.size() * (pairs - 2 * (np - 1) + 1) : 0);
    if (vars > opt.max_variables) return throughput_cut_bound(net, root, d, opt);

    const std::vector<double> caps = resource_capacities(net);
    const Pairs e = make_pairs(net, p);
    double scale = 0;  // the largest finite rate: the LP is solved in units of it
    for (const auto& f : e.path) {
        if (std::isfinite(f.cap)) scale = std::max(scale, f.cap);
    }
    for (double c : caps) {
        if (std::isfinite(c)) scale = std::max(scale, c);
    }
    if (scale == 0) return inf;
    const double cut = throughput_cut_bound(net, root, d, opt);
    // T needs a finite bound for the simplex to end in an optimum: the cut bound when there is
    // one, else a rate so far above every finite one that reaching it means "unbounded".
    constexpr double huge = 1e9;
    const double t_max = std::isfinite(cut) ? cut / scale : huge;

    const GlpkEnv env;
    std::unique_ptr<glp_prob, LpDeleter> lp(glp_create_prob());
    add_rate_part(lp.get(), e, caps, scale, t_max);
    const auto index = [&](NodeId v) {
        return static_cast<std::size_t>(std::lower_bound(p.begin(), p.end(), v) - p.begin());
    };
    std::vector<std::size_t> dest;
    for (NodeId k : d) dest.push_back(index(k));
    const double t = opt.explicit_flows ? solve_flows(lp.get(), e, np, index(root), dest)
                                        : solve_cuts(lp.get(), e, np, index(root), dest, opt.max_cut_rounds);
    if (!std::isfinite(cut) && t >= huge * (1 - 1e-9)) return inf;
    return std::min(t * scale, cut);
}

double tree_throughput(const Network& net, const Schedule& s) {
    if (s.messages.size() != 1) throw InputError("tree_throughput: the schedule has " +
                                                 std::to_string(s.messages.size()) + " messages, not one");
    const Message& msg = s.messages[0];
    const std::size_t n = net.size();
    if (s.tasks.size() != n || msg.source >= n) throw InputError("tree_throughput: the schedule is for another network");
    constexpr NodeId none = std::numeric_limits<NodeId>::max();
    std::vector<NodeId> parent(n, none);
    std::vector<std::vector<NodeId>> children(n);
    for (NodeId i = 0; i < n; ++i) {
        for (const Task& t : s.tasks[i]) {
            if (t.op != Op::send) continue;
            if (t.peer >= n || t.peer == msg.source || parent[t.peer] != none) {
                throw InputError("tree_throughput: node " + std::to_string(t.peer) + " receives twice or is the root");
            }
            parent[t.peer] = i;
            children[i].push_back(t.peer);
        }
    }
    // Breadth first from the source: every node must be reached.
    std::vector<NodeId> order{msg.source};
    std::vector<char> reached(n, 0);
    reached[msg.source] = 1;
    for (std::size_t q = 0; q < order.size(); ++q) {
        for (NodeId c : children[order[q]]) {
            reached[c] = 1;
            order.push_back(c);
        }
    }
    for (NodeId i = 0; i < n; ++i) {
        if (parent[i] != none && !reached[i]) {
            throw InputError("tree_throughput: node " + std::to_string(i) + " is not reached from the source");
        }
    }
    for (NodeId k : msg.dests) {
        if (k >= n || !reached[k]) throw InputError("tree_throughput: destination " + std::to_string(k) + " is not reached");
    }
    std::vector<TreeEdge> edges;
    for (std::size_t q = 1; q < order.size(); ++q) edges.emplace_back(parent[order[q]], order[q]);
    return tree_throughput(net, edges);
}

double tree_throughput(const Network& net, const std::vector<TreeEdge>& edges) {
    const auto caps = resource_capacities(net);
    std::vector<std::size_t> users(caps.size(), 0);
    const auto sub = net.subnet_of();
    double t = inf;
    for (const auto& [u, v] : edges) {
        const FlowPath p = flow_path(net, sub, u, v);
        t = std::min(t, p.cap);
        for (std::size_t r : p.resources) ++users[r];
    }
    for (std::size_t r = 0; r < caps.size(); ++r) {
        if (users[r] > 0) t = std::min(t, caps[r] / static_cast<double>(users[r]));
    }
    return t;
}

}  // namespace hetcast
