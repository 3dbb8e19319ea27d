#include "hetcast/model/network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

#include "hetcast/error.hpp"

namespace hetcast {
namespace {

void check_square(const Matrix& m, std::size_t n, std::string_view what) {
    if (m.size() != n) {
        throw InputError(std::string(what) + ": expected " + std::to_string(n) + " rows, got " +
                         std::to_string(m.size()));
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (m[i].size() != n) {
            throw InputError(std::string(what) + ": row " + std::to_string(i) + " has " +
                             std::to_string(m[i].size()) + " entries, expected " + std::to_string(n));
        }
    }
}

void check_entries(const Matrix& m, std::string_view what, bool positive) {
    for (std::size_t i = 0; i < m.size(); ++i) {
        for (std::size_t j = 0; j < m.size(); ++j) {
            if (i == j) continue;
            const double v = m[i][j];
            if (!std::isfinite(v) || v < 0 || (positive && v == 0)) {
                throw InputError(std::string(what) + "[" + std::to_string(i) + "][" + std::to_string(j) +
                                 "] must be " + (positive ? "positive" : "non-negative") +
                                 " and finite");
            }
        }
    }
}

void check_overheads(const std::vector<Overhead>& o, std::size_t n, std::string_view what) {
    if (o.size() != n) throw InputError(std::string(what) + ": expected one entry per node");
    for (const auto& x : o) {
        if (!std::isfinite(x.fixed) || !std::isfinite(x.per_byte) || x.fixed < 0 || x.per_byte < 0) {
            throw InputError(std::string(what) + ": overheads must be non-negative and finite");
        }
    }
}

}  // namespace

void Network::set_names(std::vector<std::string> names) {
    if (names.empty()) throw InputError("a network needs at least one node");
    std::unordered_set<std::string> seen;
    for (const auto& n : names) {
        if (n.empty()) throw InputError("node names must not be empty");
        if (!seen.insert(n).second) throw InputError("duplicate node name '" + n + "'");
    }
    names_ = std::move(names);
}

Network Network::from_costs(std::vector<std::string> names, Matrix cost) {
    Network net;
    net.set_names(std::move(names));
    check_square(cost, net.size(), "cost");
    check_entries(cost, "cost", false);
    for (std::size_t i = 0; i < cost.size(); ++i) cost[i][i] = 0;
    net.cost_ = std::move(cost);
    return net;
}

Network Network::parametric(std::vector<std::string> names, Matrix latency, Matrix bandwidth,
                            std::vector<Overhead> send, std::vector<Overhead> recv) {
    Network net;
    net.set_names(std::move(names));
    const auto n = net.size();
    check_square(latency, n, "latency");
    check_square(bandwidth, n, "bandwidth");
    check_entries(latency, "latency", false);
    check_entries(bandwidth, "bandwidth", true);
    check_overheads(send, n, "send_overhead");
    check_overheads(recv, n, "recv_overhead");
    for (std::size_t i = 0; i < n; ++i) {
        latency[i][i] = 0;
        bandwidth[i][i] = 0;
    }
    net.latency_ = std::move(latency);
    net.bandwidth_ = std::move(bandwidth);
    net.send_ = std::move(send);
    net.recv_ = std::move(recv);
    return net;
}

Network Network::clusters(const std::vector<std::size_t>& sizes, double local, double global) {
    if (sizes.empty()) throw InputError("clusters: sizes must not be empty");
    if (!std::isfinite(local) || !std::isfinite(global) || local < 0 || global < 0) {
        throw InputError("clusters: local and global must be non-negative and finite");
    }
    std::vector<std::string> names;
    std::vector<std::size_t> cluster_of;
    Subnets subnets;
    for (std::size_t c = 0; c < sizes.size(); ++c) {
        if (sizes[c] == 0) throw InputError("clusters: cluster " + std::to_string(c) + " is empty");
        subnets.emplace_back();
        for (std::size_t j = 0; j < sizes[c]; ++j) {
            subnets.back().push_back(static_cast<NodeId>(names.size()));
            names.push_back("c" + std::to_string(c) + "n" + std::to_string(j));
            cluster_of.push_back(c);
        }
    }
    const auto n = names.size();
    Matrix cost(n, std::vector<double>(n, 0.0));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i != j) cost[i][j] = cluster_of[i] == cluster_of[j] ? local : global;
        }
    }
    Network net = from_costs(std::move(names), std::move(cost));
    net.subnets_ = std::move(subnets);
    return net;
}

std::optional<NodeId> Network::find(std::string_view name) const {
    const auto it = std::find(names_.begin(), names_.end(), name);
    if (it == names_.end()) return std::nullopt;
    return static_cast<NodeId>(it - names_.begin());
}

NodeId Network::id(std::string_view name) const {
    if (auto n = find(name)) return *n;
    throw InputError("unknown node '" + std::string(name) + "'");
}

double Network::send_busy(NodeId i, NodeId j, double m) const {
    if (is_cost_matrix()) return cost_[i][j];
    return send_[i].at(m);
}

double Network::wire(NodeId i, NodeId j, double m) const {
    if (is_cost_matrix()) return 0.0;
    return latency_[i][j] + m / bandwidth_[i][j];
}

double Network::recv_busy(NodeId j, double m) const {
    if (is_cost_matrix()) return 0.0;
    return recv_[j].at(m);
}

Matrix Network::cost_matrix(double m) const {
    const auto n = size();
    Matrix c(n, std::vector<double>(n, 0.0));
    for (NodeId i = 0; i < n; ++i) {
        for (NodeId j = 0; j < n; ++j) {
            if (i != j) c[i][j] = time(i, j, m);
        }
    }
    return c;
}

void Network::set_subnets(Subnets s) {
    std::vector<int> seen(size(), 0);
    for (const auto& sub : s) {
        if (sub.empty()) throw InputError("subnets: a subnet is empty");
        for (NodeId n : sub) {
            if (n >= size()) throw InputError("subnets: node id out of range");
            if (seen[n]++) throw InputError("subnets: node '" + names_[n] + "' is in two subnets");
        }
    }
    for (NodeId n = 0; n < size(); ++n) {
        if (!seen[n]) throw InputError("subnets: node '" + names_[n] + "' is in no subnet");
    }
    if (capacities_ && !capacities_->uplink.empty() && (!subnets_ || *subnets_ != s)) capacities_->uplink.clear();
    subnets_ = std::move(s);
}

void Network::set_capacities(Capacities c) {
    if (is_cost_matrix()) throw InputError("capacity: only parametric networks have capacities");
    const auto check = [](const std::vector<double>& v, std::size_t want, const std::string& what,
                          const std::string& per) {
        if (v.size() != want) {
            throw InputError("capacity." + what + ": expected " + std::to_string(want) + " rates (one per " + per +
                             "), got " + std::to_string(v.size()));
        }
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (!(v[i] > 0)) throw InputError("capacity." + what + "[" + std::to_string(i) + "] must be positive");
        }
    };
    check(c.egress, size(), "egress", "node");
    check(c.ingress, size(), "ingress", "node");
    check(c.disk, size(), "disk", "node");
    if (!c.uplink.empty()) {
        if (!subnets_) throw InputError("capacity.uplink: the network has no subnets to give uplinks to");
        check(c.uplink, subnets_->size(), "uplink", "subnet");
    }
    capacities_ = std::move(c);
}

std::vector<std::size_t> Network::subnet_of() const {
    std::vector<std::size_t> out(size(), 0);
    if (!subnets_) return out;
    for (std::size_t k = 0; k < subnets_->size(); ++k) {
        for (NodeId n : (*subnets_)[k]) out[n] = k;
    }
    return out;
}

Network Network::with_rate_limit(double rate) const {
    if (is_cost_matrix()) throw InputError("a rate limit needs a network with rates, not a cost matrix");
    if (!std::isfinite(rate) || rate <= 0) throw InputError("a rate limit must be positive and finite");
    Network out = *this;
    for (auto& row : out.bandwidth_) {
        for (double& b : row) b = std::min(b, rate);
    }
    Capacities c = capacities_.value_or(Capacities{});
    if (!capacities_) {
        const double inf = std::numeric_limits<double>::infinity();
        c.egress.assign(size(), inf);
        c.ingress.assign(size(), inf);
        c.disk.assign(size(), inf);
    }
    for (double& e : c.egress) e = std::min(e, rate);
    out.capacities_ = std::move(c);
    out.local_broadcast_.clear();
    return out;
}

void Network::set_local_broadcast(std::vector<double> t) {
    if (t.size() != size()) throw InputError("local_broadcast: expected one entry per node");
    for (double v : t) {
        if (!std::isfinite(v) || v < 0) throw InputError("local_broadcast: must be non-negative and finite");
    }
    local_broadcast_ = std::move(t);
}

void Network::set_degrees(std::vector<std::size_t> d) {
    if (!subnets_) throw InputError("degrees: the network has no subnets to give degrees to");
    if (d.size() != subnets_->size()) {
        throw InputError("degrees: " + std::to_string(d.size()) + " given for " + std::to_string(subnets_->size()) +
                         " subnets");
    }
    if (std::find(d.begin(), d.end(), 0) != d.end()) throw InputError("degrees: each must be at least 1");
    degrees_ = std::move(d);
}

}  // namespace hetcast
