#include "hetcast/model/loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

#include "hetcast/error.hpp"
#include "hetcast/model/units.hpp"
#include "capacity_pairs.hpp"
#include "yaml_document.hpp"

namespace hetcast {
namespace {

constexpr std::size_t max_text_bytes = std::size_t{64} << 20;
/// Keeps the N×N matrices of a parsed network (16 bytes a pair) within about 1 GB.
constexpr std::size_t max_nodes = 8192;

enum class Bound { non_negative, positive };

using detail::has_control;
using Entry = detail::YamlEntry;
using Entries = detail::YamlEntries;

std::optional<double> to_double(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    if (s == ".inf" || s == "+.inf") return std::numeric_limits<double>::infinity();
    if (s == "-.inf") return -std::numeric_limits<double>::infinity();
    if (s == ".nan") return std::numeric_limits<double>::quiet_NaN();
    std::string_view v = s;
    if (!v.empty() && v.front() == '+') v.remove_prefix(1);
    double out = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc{} || end != v.data() + v.size() || v.empty()) return std::nullopt;
    return out;
}

std::string quoted(const std::string& s) { return detail::quoted_text(s); }

std::string bound_text(Bound b) {
    return b == Bound::positive ? "positive and finite" : "non-negative and finite";
}

std::string index_text(std::size_t i) { return "[" + std::to_string(i) + "]"; }

std::string too_many_nodes() { return "more than " + std::to_string(max_nodes) + " nodes"; }

/// The node names of a file and their ids, before the Network is built (a network whose
/// matrices follow from its capacities needs its subnets and capacities first).
class NodeNames {
public:
    explicit NodeNames(const std::vector<std::string>& names) : names_(names) {
        for (std::size_t i = 0; i < names_.size(); ++i) ids_.emplace(names_[i], static_cast<NodeId>(i));
    }
    [[nodiscard]] std::size_t size() const { return names_.size(); }
    [[nodiscard]] const std::string& name(NodeId id) const { return names_[id]; }
    [[nodiscard]] std::optional<NodeId> find(std::string_view name) const {
        const auto it = ids_.find(name);
        return it == ids_.end() ? std::nullopt : std::optional<NodeId>(it->second);
    }

private:
    const std::vector<std::string>& names_;
    std::unordered_map<std::string_view, NodeId> ids_;
};

class Reader : public detail::YamlReader {
public:
    using YamlReader::YamlReader;

    double number(const YAML::Node& n, const std::string& what, Bound bound) const {
        if (!n.IsScalar()) fail(n.Mark(), what + ": expected a number");
        const auto v = to_double(n.Scalar());
        if (!v) fail(n.Mark(), what + ": expected a number, got " + quoted(n.Scalar()));
        if (!std::isfinite(*v) || *v < 0 || (bound == Bound::positive && *v == 0)) {
            fail(n.Mark(), what + " must be " + bound_text(bound) + ", got " + quoted(n.Scalar()));
        }
        return *v;
    }

    std::size_t positive_count(const YAML::Node& n, const std::string& what) const {
        std::size_t v = 0;
        const std::string s = n.IsScalar() ? n.Scalar() : "";
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || v == 0) {
            fail(n.Mark(), what + ": expected a positive whole number");
        }
        return v;
    }

    void expect_count(const YAML::Node& seq, std::size_t want, const std::string& what,
                      const std::string& unit) const {
        if (seq.size() == want) return;
        const YAML::Mark at = seq.size() > want ? seq[want].Mark() : seq.Mark();
        fail(at, what + ": expected " + std::to_string(want) + " " + unit + ", got " +
                     std::to_string(seq.size()));
    }

    std::vector<std::string> names(const YAML::Node& n) const {
        sequence(n, "nodes");
        if (n.size() == 0) fail(n.Mark(), "nodes: a network needs at least one node");
        if (n.size() > max_nodes) fail(n.Mark(), "nodes: " + too_many_nodes());
        std::vector<std::string> out;
        std::unordered_set<std::string> seen;
        for (const auto& e : n) {
            if (!e.IsScalar() || e.Scalar().empty()) fail(e.Mark(), "nodes: expected a non-empty node name");
            if (has_control(e.Scalar())) fail(e.Mark(), "nodes: control characters in a node name");
            if (!seen.insert(e.Scalar()).second) {
                fail(e.Mark(), "nodes: duplicate node name " + quoted(e.Scalar()));
            }
            out.push_back(e.Scalar());
        }
        return out;
    }

    /// `as_rate`: entries may carry a rate unit ("200Mbit"; bandwidths).
    Matrix matrix(const YAML::Node& n, std::size_t size, const std::string& what, Bound bound, bool as_rate = false) const {
        Matrix m(size, std::vector<double>(size, 0.0));
        const auto entry = [&](const YAML::Node& e, const std::string& where) {
            if (as_rate && e.IsScalar() && !to_double(e.Scalar())) return rate(e, where);
            return number(e, where, bound);
        };
        if (n.IsScalar()) {
            const double v = entry(n, what);
            for (std::size_t i = 0; i < size; ++i) {
                for (std::size_t j = 0; j < size; ++j) m[i][j] = i == j ? 0.0 : v;
            }
            return m;
        }
        if (!n.IsSequence()) fail(n.Mark(), what + ": expected a number or a list of rows");
        expect_count(n, size, what, "rows (one per node)");
        std::size_t i = 0;
        for (const auto& row : n) {
            const std::string row_what = what + " row " + std::to_string(i);
            sequence(row, row_what);
            expect_count(row, size, row_what, "entries (one per node)");
            std::size_t j = 0;
            for (const auto& cell : row) {
                if (i != j) m[i][j] = entry(cell, what + index_text(i) + index_text(j));
                ++j;
            }
            ++i;
        }
        return m;
    }

    Overhead overhead(const YAML::Node& n, const std::string& what) const {
        if (n.IsScalar()) return {number(n, what, Bound::non_negative), 0.0};
        if (!n.IsMap()) fail(n.Mark(), what + ": expected a number or {fixed: s, per_byte: s}");
        const Entries e = entries(n, what, {"fixed", "per_byte"});
        Overhead o;
        for (const auto& [key, entry] : e) {
            double& field = key == "fixed" ? o.fixed : o.per_byte;
            field = number(entry.value, what + "." + key, Bound::non_negative);
        }
        return o;
    }

    std::vector<Overhead> overheads(const Entries& top, const std::string& key, std::size_t size) const {
        const auto it = top.find(key);
        if (it == top.end()) return std::vector<Overhead>(size);
        const YAML::Node& n = it->second.value;
        if (!n.IsSequence()) return std::vector<Overhead>(size, overhead(n, key));
        expect_count(n, size, key, "entries (one per node)");
        std::vector<Overhead> out;
        for (std::size_t i = 0; i < size; ++i) out.push_back(overhead(n[i], key + index_text(i)));
        return out;
    }

    NodeId node_named(const NodeNames& net, const YAML::Node& n, const std::string& what) const {
        if (!n.IsScalar()) fail(n.Mark(), what + ": expected a node name");
        if (auto id = net.find(n.Scalar())) return *id;
        fail(n.Mark(), what + ": unknown node " + quoted(n.Scalar()));
    }

    Subnets subnets(const NodeNames& net, const YAML::Node& n) const {
        sequence(n, "subnets");
        Subnets out;
        std::vector<bool> placed(net.size(), false);
        for (const auto& group : n) {
            sequence(group, "subnets");
            if (group.size() == 0) fail(group.Mark(), "subnets: a subnet is empty");
            out.emplace_back();
            for (const auto& member : group) {
                const NodeId id = node_named(net, member, "subnets");
                if (placed[id]) {
                    fail(member.Mark(), "subnets: node " + quoted(net.name(id)) + " is in two subnets");
                }
                placed[id] = true;
                out.back().push_back(id);
            }
        }
        for (NodeId id = 0; id < net.size(); ++id) {
            if (!placed[id]) fail(n.Mark(), "subnets: node " + quoted(net.name(id)) + " is in no subnet");
        }
        return out;
    }

    void local_broadcast(Network& net, const NodeNames& names, const YAML::Node& n) const {
        std::vector<double> t(net.size(), 0.0);
        if (n.IsSequence()) {
            expect_count(n, net.size(), "local_broadcast", "entries (one per node)");
            for (std::size_t i = 0; i < net.size(); ++i) {
                t[i] = number(n[i], "local_broadcast" + index_text(i), Bound::non_negative);
            }
        } else if (n.IsMap()) {
            std::vector<bool> given(net.size(), false);
            for (auto it = n.begin(); it != n.end(); ++it) {
                const NodeId id = node_named(names, it->first, "local_broadcast");
                if (given[id]) {
                    fail(it->first.Mark(), "local_broadcast: node " + quoted(net.name(id)) + " given twice");
                }
                given[id] = true;
                t[id] = number(it->second, "local_broadcast." + net.name(id), Bound::non_negative);
            }
            for (NodeId id = 0; id < net.size(); ++id) {
                if (!given[id]) fail(n.Mark(), "local_broadcast: no entry for node " + quoted(net.name(id)));
            }
        } else {
            fail(n.Mark(), "local_broadcast: expected one number per node or a map {name: seconds}");
        }
        located(n.Mark(), [&] { net.set_local_broadcast(std::move(t)); });
    }

    /// A rate: bytes/s as a number, a string with a unit ("200Mbit"), or .inf (unconstrained).
    double rate(const YAML::Node& n, const std::string& what) const {
        if (!n.IsScalar()) fail(n.Mark(), what + ": expected a rate (bytes/s, or like 200Mbit)");
        if (const auto v = to_double(n.Scalar()); v && std::isinf(*v) && *v > 0) return *v;
        try {
            return parse_rate(n.Scalar());
        } catch (const InputError& e) {
            fail(n.Mark(), what + ": " + e.what());
        }
    }

    /// One rate for all, a list with one per item, or (per node) a map {name: rate} that
    /// changes the named nodes of `base`.
    std::vector<double> rates(const NodeNames& net, const YAML::Node& n, std::size_t count, const std::string& what,
                              bool per_node, std::vector<double> base = {}) const {
        if (n.IsScalar()) return std::vector<double>(count, rate(n, what));
        if (n.IsSequence()) {
            expect_count(n, count, what, per_node ? "rates (one per node)" : "rates (one per subnet)");
            std::vector<double> out;
            for (std::size_t i = 0; i < count; ++i) out.push_back(rate(n[i], what + index_text(i)));
            return out;
        }
        if (!per_node || !n.IsMap()) fail(n.Mark(), what + ": expected a rate or a list of rates");
        std::vector<double> out = base.size() == count ? std::move(base)
                                                       : std::vector<double>(count, std::numeric_limits<double>::infinity());
        std::vector<bool> given(count, false);
        for (auto it = n.begin(); it != n.end(); ++it) {
            const NodeId id = node_named(net, it->first, what);
            if (given[id]) fail(it->first.Mark(), what + ": node " + quoted(net.name(id)) + " given twice");
            given[id] = true;
            out[id] = rate(it->second, what + "." + net.name(id));
        }
        return out;
    }

    Capacities capacity(const NodeNames& net, const std::optional<Subnets>& subnets, bool parametric,
                        const YAML::Node& n) const {
        const Entries e = entries(n, "capacity", {"egress", "ingress", "nic", "disk", "uplink", "queues"});
        if (!parametric) fail(n.Mark(), "capacity: only the parametric form (latency, bandwidth) has capacities");
        const double inf = std::numeric_limits<double>::infinity();
        Capacities c{std::vector<double>(net.size(), inf), std::vector<double>(net.size(), inf),
                     std::vector<double>(net.size(), inf), {}};
        // `nic` gives both directions; `egress` and `ingress` then change some or all nodes.
        if (auto it = e.find("nic"); it != e.end()) {
            c.egress = c.ingress = rates(net, it->second.value, net.size(), "capacity.nic", true);
        }
        if (auto it = e.find("egress"); it != e.end()) {
            c.egress = rates(net, it->second.value, net.size(), "capacity.egress", true, c.egress);
        }
        if (auto it = e.find("ingress"); it != e.end()) {
            c.ingress = rates(net, it->second.value, net.size(), "capacity.ingress", true, c.ingress);
        }
        if (auto it = e.find("disk"); it != e.end()) c.disk = rates(net, it->second.value, net.size(), "capacity.disk", true);
        if (auto it = e.find("uplink"); it != e.end()) {
            if (!subnets) fail(it->second.key.Mark(), "capacity.uplink: needs 'subnets' (one uplink per subnet)");
            c.uplink = rates(net, it->second.value, subnets->size(), "capacity.uplink", false);
        }
        if (auto it = e.find("queues"); it != e.end()) {
            const std::string q = it->second.value.IsScalar() ? it->second.value.Scalar() : "";
            if (q == "realistic") c.queues = Queues::realistic;
            else if (q == "fifo") c.queues = Queues::fifo;
            else if (q == "fair") c.queues = Queues::fair;
            else fail(it->second.value.Mark(), "capacity.queues: expected realistic, fifo or fair, got " + quoted(q));
        }
        return c;
    }

    /// Without a `bandwidth`, a pair's is the least of what it crosses alone (what a probe
    /// measures): i's NIC out, j's NIC in and disk, and both uplinks across subnets.
    Matrix derived_bandwidth(const NodeNames& net, const std::vector<std::size_t>& subnet_of, const Capacities& c,
                             const YAML::Node& at) const {
        const std::size_t n = net.size();
        Matrix m(n, std::vector<double>(n, 0.0));
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < n; ++j) {
                if (i == j) continue;
                const double b = detail::capacity_pair_rate(c, subnet_of, i, j);
                if (!std::isfinite(b)) {
                    fail(at.Mark(), "capacity: with no 'bandwidth', every pair needs a finite capacity; " +
                                        quoted(net.name(static_cast<NodeId>(i))) + " -> " +
                                        quoted(net.name(static_cast<NodeId>(j))) + " has none (give capacity.nic)");
                }
                m[i][j] = b;
            }
        }
        return m;
    }

    Network clusters(const Entry& c) const {
        const Entries e = entries(c.value, "clusters", {"sizes", "local", "global"});
        const auto sizes_it = e.find("sizes");
        const auto global_it = e.find("global");
        if (sizes_it == e.end()) fail(c.value.Mark(), "clusters: missing 'sizes'");
        if (global_it == e.end()) fail(c.value.Mark(), "clusters: missing 'global'");
        const YAML::Node& s = sequence(sizes_it->second.value, "clusters.sizes");
        if (s.size() == 0) fail(s.Mark(), "clusters.sizes: expected at least one cluster");
        std::vector<std::size_t> sizes;
        std::size_t total = 0;
        for (const auto& n : s) {
            sizes.push_back(positive_count(n, "clusters.sizes"));
            total += std::min(sizes.back(), max_nodes + 1);
            if (total > max_nodes) fail(n.Mark(), "clusters.sizes: " + too_many_nodes());
        }
        const auto local_it = e.find("local");
        const double local = local_it == e.end()
                                 ? 1.0
                                 : number(local_it->second.value, "clusters.local", Bound::non_negative);
        const double global = number(global_it->second.value, "clusters.global", Bound::non_negative);
        return located(c.value.Mark(), [&] { return Network::clusters(sizes, local, global); });
    }

    void forbid(const Entries& top, const std::string& form,
                std::initializer_list<std::string_view> keys) const {
        for (auto k : keys) {
            if (auto it = top.find(k); it != top.end()) {
                fail(it->second.key.Mark(),
                     "'" + form + "' cannot be combined with '" + std::string(k) + "'");
            }
        }
    }

    const Entry& required(const Entries& top, const YAML::Node& root, const std::string& key,
                          const std::string& hint = "") const {
        const auto it = top.find(key);
        if (it == top.end()) fail(root.Mark(), "missing '" + key + "'" + hint);
        return it->second;
    }

    /// The latency matrix: a number, N rows, or {subnet: s, across: s} with `subnets`.
    Matrix latency(const YAML::Node& n, std::size_t size, const std::vector<std::size_t>* subnet_of) const {
        if (!n.IsMap()) return matrix(n, size, "latency", Bound::non_negative);
        if (!subnet_of) fail(n.Mark(), "latency: {subnet: s, across: s} needs 'subnets'");
        const Entries e = entries(n, "latency", {"subnet", "across"}, true);
        double within = 0, across = 0;
        for (const auto& [key, entry] : e) {
            (key == "subnet" ? within : across) = number(entry.value, "latency." + key, Bound::non_negative);
        }
        if (e.size() != 2) fail(n.Mark(), "latency: expected both 'subnet' and 'across'");
        Matrix m(size, std::vector<double>(size, 0.0));
        for (std::size_t i = 0; i < size; ++i) {
            for (std::size_t j = 0; j < size; ++j) {
                if (i != j) m[i][j] = (*subnet_of)[i] == (*subnet_of)[j] ? within : across;
            }
        }
        return m;
    }

    /// The cost or parametric form; `subnets` and `caps` as the file gives them (a parametric
    /// file with capacities may leave out `bandwidth`).
    Network form(const Entries& top, const YAML::Node& root, const std::vector<std::string>& nodes,
                 const NodeNames& names, const std::optional<Subnets>& subnets,
                 const std::optional<Capacities>& caps) const {
        const auto n = nodes.size();
        if (auto it = top.find("cost"); it != top.end()) {
            forbid(top, "cost", {"latency", "bandwidth", "send_overhead", "recv_overhead"});
            const Matrix cost = matrix(it->second.value, n, "cost", Bound::non_negative);
            return located(it->second.value.Mark(), [&] { return Network::from_costs(nodes, cost); });
        }
        const bool parametric = top.contains("latency") || top.contains("bandwidth");
        const Entry& lat = required(top, root, parametric ? "latency" : "cost",
                                    parametric ? "" : " (or 'latency' and 'bandwidth', or 'clusters')");
        std::vector<std::size_t> subnet_of;
        if (subnets) {
            subnet_of.resize(n);
            for (std::size_t k = 0; k < subnets->size(); ++k) {
                for (NodeId id : (*subnets)[k]) subnet_of[id] = k;
            }
        }
        Matrix latency_m = latency(lat.value, n, subnets ? &subnet_of : nullptr);
        Matrix bandwidth;
        if (caps && !top.contains("bandwidth")) {
            bandwidth = derived_bandwidth(names, subnet_of, *caps, top.find("capacity")->second.key);
        } else {
            const Entry& bw = required(top, root, "bandwidth", caps ? "" : " (or 'capacity' to derive it)");
            bandwidth = matrix(bw.value, n, "bandwidth", Bound::positive, true);
        }
        auto send = overheads(top, "send_overhead", n);
        auto recv = overheads(top, "recv_overhead", n);
        return located(root.Mark(), [&] {
            return Network::parametric(nodes, std::move(latency_m), std::move(bandwidth), std::move(send),
                                       std::move(recv));
        });
    }

    void free_text(const Entries& top, const std::string& key) const {
        const auto it = top.find(key);
        if (it == top.end() || it->second.value.IsScalar() || it->second.value.IsNull()) return;
        fail(it->second.value.Mark(), key + ": expected text");
    }

    Network network(const YAML::Node& root) const {
        if (!root.IsMap()) fail(root.Mark(), "expected a mapping (nodes: ..., cost: ...)");
        const Entries top = entries(root, "",
                                    {"name", "description", "measured_at", "nodes", "cost", "latency",
                                     "bandwidth", "send_overhead", "recv_overhead", "clusters", "subnets",
                                     "local_broadcast", "degrees", "capacity"});
        for (const char* key : {"name", "description", "measured_at"}) free_text(top, key);
        const auto clusters_it = top.find("clusters");
        std::optional<Network> net;
        std::vector<std::string> nodes;
        if (clusters_it != top.end()) {
            forbid(top, "clusters", {"nodes", "cost", "latency", "bandwidth", "send_overhead", "recv_overhead"});
            net = clusters(clusters_it->second);
            nodes = net->names();
        } else {
            nodes = names(required(top, root, "nodes").value);
        }
        const NodeNames names(nodes);
        std::optional<Subnets> subnet_map;
        const auto subnets_it = top.find("subnets");
        if (subnets_it != top.end()) subnet_map = subnets(names, subnets_it->second.value);
        std::optional<Capacities> caps;
        const auto capacity_it = top.find("capacity");
        if (capacity_it != top.end()) {
            const bool parametric = !net && !top.contains("cost");
            caps = capacity(names, subnet_map, parametric, capacity_it->second.value);
        }
        if (!net) net = form(top, root, nodes, names, subnet_map, caps);
        if (subnet_map) located(subnets_it->second.value.Mark(), [&] { net->set_subnets(std::move(*subnet_map)); });
        if (auto it = top.find("local_broadcast"); it != top.end()) local_broadcast(*net, names, it->second.value);
        if (auto it = top.find("degrees"); it != top.end()) {
            const YAML::Node& n = sequence(it->second.value, "degrees");
            std::vector<std::size_t> d;
            for (std::size_t i = 0; i < n.size(); ++i) d.push_back(positive_count(n[i], "degrees" + index_text(i)));
            located(n.Mark(), [&] { net->set_degrees(std::move(d)); });
        }
        if (caps) located(capacity_it->second.value.Mark(), [&] { net->set_capacities(std::move(*caps)); });
        return std::move(*net);
    }
};

std::string read_text(const std::filesystem::path& file, const std::string& origin) {
    return detail::read_text_file(file, origin, max_text_bytes, "64 MiB");
}

}  // namespace

Network parse_network(std::string_view yaml_text, std::string_view origin) {
    const Reader reader(origin);
    return reader.document(yaml_text, max_text_bytes, "64 MiB", "network file",
                           [&](const YAML::Node& root) { return reader.network(root); });
}

Network load_network(const std::filesystem::path& file) {
    const std::string origin = file.string();
    return parse_network(read_text(file, origin), origin);
}

}  // namespace hetcast
