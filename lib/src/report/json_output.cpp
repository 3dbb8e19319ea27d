#include "hetcast/report/json_output.hpp"

#include <cmath>
#include <utility>

namespace hetcast {
namespace {

using json = nlohmann::json;

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json matrix_json(const Matrix& m) {
    json rows = json::array();
    for (std::size_t i = 0; i < m.size(); ++i) {
        json row = json::array();
        for (std::size_t j = 0; j < m[i].size(); ++j) row.push_back(i == j ? json(nullptr) : number_or_null(m[i][j]));
        rows.push_back(std::move(row));
    }
    return rows;
}

json overheads_json(const std::vector<Overhead>& v) {
    json out = json::array();
    for (const Overhead& o : v) out.push_back({{"fixed", o.fixed}, {"per_byte", o.per_byte}});
    return out;
}

json rates_json(const std::vector<double>& v) {
    json out = json::array();
    for (double x : v) out.push_back(number_or_null(x));
    return out;
}

}  // namespace

json json_document(std::string_view command) {
    return {{"version", json_schema_version}, {"command", std::string(command)}};
}

std::string dump_json(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

json map_json(const Network& net, std::string_view measured_at) {
    json out{{"measured_at", measured_at.empty() ? json(nullptr) : json(std::string(measured_at))},
             {"nodes", net.names()},
             {"latency", matrix_json(net.latency())},
             {"bandwidth", matrix_json(net.bandwidth())},
             {"send_overhead", overheads_json(net.send_overheads())},
             {"recv_overhead", overheads_json(net.recv_overheads())},
             {"subnets", json::array()},
             {"capacity", nullptr}};
    for (const auto& g : net.subnets().value_or(Subnets{})) {
        json names = json::array();
        for (NodeId id : g) names.push_back(net.name(id));
        out["subnets"].push_back(std::move(names));
    }
    if (const auto& c = net.capacities()) {
        out["capacity"] = {{"egress", rates_json(c->egress)},
                           {"ingress", rates_json(c->ingress)},
                           {"disk", rates_json(c->disk)},
                           {"uplink", rates_json(c->uplink)}};
        if (c->queues != Queues::realistic) out["capacity"]["queues"] = c->queues == Queues::fifo ? "fifo" : "fair";
    }
    return out;
}

}  // namespace hetcast
