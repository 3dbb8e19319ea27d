#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capacity_pairs.hpp"
#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"

namespace hetcast {
namespace {

/// (inside a subnet, across) when every latency is one of the two (without subnets: one value).
std::optional<std::pair<double, double>> latency_by_subnet(const Network& net, const std::vector<std::size_t>& subnet_of) {
    std::optional<double> within, across;
    const Matrix& l = net.latency();
    for (std::size_t i = 0; i < net.size(); ++i) {
        for (std::size_t j = 0; j < net.size(); ++j) {
            if (i == j) continue;
            auto& v = subnet_of[i] == subnet_of[j] ? within : across;
            if (!v) v = l[i][j];
            if (*v != l[i][j]) return std::nullopt;
        }
    }
    if (!within && !across) return std::nullopt;
    return std::pair{within.value_or(*across), across.value_or(*within)};
}

/// Every pair bandwidth is the rate its capacities give it alone.
bool bandwidth_from_capacities(const Network& net, const std::vector<std::size_t>& subnet_of) {
    const auto& c = net.capacities();
    if (!c) return false;
    for (std::size_t i = 0; i < net.size(); ++i) {
        for (std::size_t j = 0; j < net.size(); ++j) {
            if (i != j && detail::capacity_pair_rate(*c, subnet_of, i, j) != net.bandwidth()[i][j]) return false;
        }
    }
    return true;
}

}  // namespace

std::string format_network(const Network& net, std::string_view measured_at) {
    if (net.is_cost_matrix()) throw InputError("only parametric networks are written");
    YAML::Emitter out;
    out.SetDoublePrecision(17);
    out << YAML::BeginMap;
    if (!measured_at.empty()) out << YAML::Key << "measured_at" << YAML::Value << std::string(measured_at);
    out << YAML::Key << "nodes" << YAML::Value << YAML::Flow << net.names();
    const auto matrix = [&](const char* key, const Matrix& m) {
        out << YAML::Key << key << YAML::Value << YAML::BeginSeq;
        for (const auto& row : m) out << YAML::Flow << row;
        out << YAML::EndSeq;
    };
    // A site of thousands of hosts stays small: latencies that only depend on whether two
    // hosts share a subnet, and pair bandwidths that follow from the capacities, are not
    // written as N x N matrices (parse_network gives back the same network).
    const auto subnet_of = net.subnet_of();
    if (const auto split = latency_by_subnet(net, subnet_of); !split) {
        matrix("latency", net.latency());
    } else if (split->first == split->second || !net.subnets()) {
        out << YAML::Key << "latency" << YAML::Value << split->first;
    } else {
        out << YAML::Key << "latency" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "subnet"
            << YAML::Value << split->first << YAML::Key << "across" << YAML::Value << split->second << YAML::EndMap;
    }
    if (!bandwidth_from_capacities(net, subnet_of)) matrix("bandwidth", net.bandwidth());
    const auto overheads = [&](const char* key, const std::vector<Overhead>& v) {
        if (std::all_of(v.begin(), v.end(), [](const Overhead& o) { return o.fixed == 0 && o.per_byte == 0; })) return;
        out << YAML::Key << key << YAML::Value << YAML::BeginSeq;
        for (const auto& o : v) {
            out << YAML::Flow << YAML::BeginMap << YAML::Key << "fixed" << YAML::Value << o.fixed << YAML::Key
                << "per_byte" << YAML::Value << o.per_byte << YAML::EndMap;
        }
        out << YAML::EndSeq;
    };
    overheads("send_overhead", net.send_overheads());
    overheads("recv_overhead", net.recv_overheads());
    if (net.subnets()) {
        out << YAML::Key << "subnets" << YAML::Value << YAML::BeginSeq;
        for (const auto& group : *net.subnets()) {
            std::vector<std::string> names;
            for (NodeId n : group) names.push_back(net.name(n));
            out << YAML::Flow << names;
        }
        out << YAML::EndSeq;
    }
    if (const auto& c = net.capacities()) {
        out << YAML::Key << "capacity" << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "egress" << YAML::Value << YAML::Flow << c->egress;
        out << YAML::Key << "ingress" << YAML::Value << YAML::Flow << c->ingress;
        if (std::any_of(c->disk.begin(), c->disk.end(), [](double d) { return std::isfinite(d); })) {
            out << YAML::Key << "disk" << YAML::Value << YAML::Flow << c->disk;
        }
        if (!c->uplink.empty()) out << YAML::Key << "uplink" << YAML::Value << YAML::Flow << c->uplink;
        if (c->queues != Queues::realistic) {
            out << YAML::Key << "queues" << YAML::Value << (c->queues == Queues::fifo ? "fifo" : "fair");
        }
        out << YAML::EndMap;
    }
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

}  // namespace hetcast
