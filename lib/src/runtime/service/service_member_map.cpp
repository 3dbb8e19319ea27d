// The map as the member list changes: restricted to the members that stay, or extended by a
// joiner measured against the subnets or pinged by every member.
#include "service_member_map.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <tuple>

#include "hetcast/error.hpp"
#include "hetcast/map/eco.hpp"
#include "hetcast/runtime/measure.hpp"
#include "hetcast/runtime/membership.hpp"
#include "service_core.hpp"

namespace hetcast::detail {

Network remap(const Network& old, const std::vector<std::string>& names, double tolerance,
              const std::function<std::pair<double, double>(std::size_t, std::size_t)>& fill,
              const std::vector<std::pair<Overhead, Overhead>>& new_overheads) {
    const std::size_t n = names.size();
    Matrix lat(n, std::vector<double>(n, 0)), bw(n, std::vector<double>(n, 1e12));
    std::vector<Overhead> send(n), recv(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto oi = old.find(names[i]);
        if (oi) {
            send[i] = old.send_overheads()[*oi];
            recv[i] = old.recv_overheads()[*oi];
        } else if (i < new_overheads.size()) {
            std::tie(send[i], recv[i]) = new_overheads[i];
        }
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            const auto oj = old.find(names[j]);
            if (oi && oj) {
                lat[i][j] = old.latency()[*oi][*oj];
                bw[i][j] = old.bandwidth()[*oi][*oj];
            } else {
                std::tie(lat[i][j], bw[i][j]) = fill(i, j);
            }
        }
    }
    Network net = Network::parametric(names, lat, bw, send, recv);
    net.set_subnets(eco_partition(eco_edge_costs(net, 0), tolerance));
    return net;
}


Network restricted(const Network& old, const std::vector<Member>& ms, double tolerance) {
    std::vector<std::string> names;
    for (const auto& m : ms) {
        if (old.find(m.name)) names.push_back(m.name);
    }
    return remap(old, names, tolerance, {}, {});
}

std::optional<MeasuredJoin> subnet_join(const ProbeLink& link, const std::optional<Network>& old,
                                        const std::vector<std::string>& names, const std::string& joiner,
                                        const json& req, double tolerance,
                                        const std::function<void(const std::string&)>& warn) {
    if (!old || !joinable(*old, names, joiner)) return std::nullopt;
    // No reading at all: as on any other map.
    ProbeOptions o;
    o.tolerance = tolerance;
    try {
        return measure_join(link, *old, joiner, field<int>(req, "reps", 5), o);
    } catch (const std::exception& e) {
        warn("'" + joiner + "' could not be measured against the subnets (" + e.what() + "): every member pings it");
        return std::nullopt;
    }
}

Network pinged_join(const ProbeLink& link, Peer& peer, const std::optional<Network>& old,
                    const std::vector<std::string>& names, const std::string& joiner, const json& req,
                    const std::string& self, double tolerance) {
    const std::size_t k = names.size() - 1;
    const json ping_req{{"sizes", field<std::vector<std::size_t>>(req, "sizes", {64, 65536, 262144})},
                        {"reps", field<int>(req, "reps", 5)}};
    std::vector<LinkFit> fits(k);
    for (std::size_t i = 0; i < k; ++i) {
        json r = ping_req;
        r["cmd"] = "ping";
        r["target"] = joiner;
        const json a = link.call(names[i], r, std::chrono::minutes(2));
        if (!field<bool>(a, "ok", false)) {
            throw Error("'" + names[i] + "' could not measure '" + joiner + "': " + field<std::string>(a, "error", "?"));
        }
        fits[i] = fit_link(samples_from_json(a.at("samples")));
    }
    std::vector<std::pair<Overhead, Overhead>> overheads(names.size());
    const json h = peer.call(joiner, {{"cmd", "hello"}}, call_timeout);
    const auto so = field<std::vector<double>>(h, "send_overhead", {0, 0});
    const auto ro = field<std::vector<double>>(h, "recv_overhead", {0, 0});
    if (so.size() == 2 && ro.size() == 2) overheads[k] = {{so[0], so[1]}, {ro[0], ro[1]}};
    const Network base = old ? *old : Network::parametric({self}, {{0}}, {{1}}, {{}}, {{}});
    return remap(base, names, tolerance, [&](std::size_t i, std::size_t j) {
        const LinkFit& f = fits[i == k ? j : i];
        return std::pair{f.latency, f.bandwidth};
    }, overheads);
}

}  // namespace hetcast::detail
