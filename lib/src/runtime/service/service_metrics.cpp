// The daemon's Prometheus metrics (config key `metrics: HOST:PORT`): the text exposition
// format, made on each scrape from the peer's counters and the service's state.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>

#include "hetcast/net/text_endpoint.hpp"
#include "service_metrics.hpp"

namespace hetcast {
using namespace detail;

namespace {

std::string label_value(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

void metric(std::string& out, const char* name, const char* type, const char* help, const std::string& value,
            const std::string& labels = {}) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + labels + " " +
           value + "\n";
}

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

}  // namespace

void Metrics::count_push(const json& answer) {
    if (field<bool>(answer, "ok", false)) {
        ++pushes_ok;
        return;
    }
    for (const auto& r : answer.value("reports", json::array())) {
        for (const auto& o : r.value("outcomes", json::array())) {
            if (o.value("error", std::string()).starts_with("cancelled")) {
                ++pushes_cancelled;
                return;
            }
        }
    }
    ++(answer.contains("reports") ? pushes_failed : pushes_refused);
}

std::string Metrics::metrics_text() const {
    const PeerStats& s = core_.peer->stats();
    std::string out;
    metric(out, "hetcast_info", "gauge", "This daemon: its member name and hetcast version.", "1",
           "{name=\"" + label_value(core_.cfg.name) + "\",version=\"" + label_value(version()) + "\"}");
    metric(out, "hetcast_bytes_sent_total", "counter", "Message bytes sent (this member's and relayed).",
           std::to_string(s.bytes_sent.load()));
    metric(out, "hetcast_bytes_relayed_total", "counter", "Of the bytes sent, those of messages another member is the source of.",
           std::to_string(s.bytes_relayed.load()));
    metric(out, "hetcast_bytes_received_total", "counter", "Message bytes received.", std::to_string(s.bytes_received.load()));
    out += "# HELP hetcast_pushes_total Pushes this daemon coordinated, by outcome (refused: before anything moved).\n"
           "# TYPE hetcast_pushes_total counter\n";
    for (const auto& [outcome, n] : {std::pair{"ok", &pushes_ok}, std::pair{"failed", &pushes_failed},
                                     std::pair{"cancelled", &pushes_cancelled}, std::pair{"refused", &pushes_refused}}) {
        out += std::string("hetcast_pushes_total{outcome=\"") + outcome + "\"} " + std::to_string(n->load()) + "\n";
    }
    metric(out, "hetcast_jobs", "gauge", "Jobs this member takes part in now.", std::to_string(core_.peer->jobs().size()));
    metric(out, "hetcast_jobs_coordinated", "gauge", "Pushes this daemon coordinates now.", std::to_string(pushes_.jobs_running()));
    metric(out, "hetcast_members", "gauge", "Members in this daemon's member list.", std::to_string(core_.current_members().size()));
    metric(out, "hetcast_connections_opened_total", "counter", "Authenticated connections opened, both ways.",
           std::to_string(s.connections_opened.load()));
    metric(out, "hetcast_connections_closed_total", "counter", "Connections closed, failed handshakes included.",
           std::to_string(s.connections_closed.load()));
    std::lock_guard lock(core_.mu);
    if (core_.map) {
        metric(out, "hetcast_map_age_seconds", "gauge", "Seconds since the map was measured or last changed (probe, join, leave).",
               number(std::chrono::duration<double>(std::filesystem::file_time_type::clock::now() - core_.map_time).count()));
        metric(out, "hetcast_map_members", "gauge", "Members in the map.", std::to_string(core_.map->size()));
    }
    return out;
}

void Metrics::start_metrics() {
    if (!core_.cfg.metrics) return;
    metrics = std::make_unique<net::TextEndpoint>(core_.cfg.metrics->first, core_.cfg.metrics->second, "/metrics",
                                                  "text/plain; version=0.0.4; charset=utf-8",
                                                  [this] { return metrics_text(); }, core_.log);
    metrics->start();
    core_.say(LogLevel::info, "metrics on http://" + core_.cfg.metrics->first + ":" + std::to_string(metrics->port()) + "/metrics");
}

void Metrics::stop() {
    if (metrics) metrics->stop();
}

}  // namespace hetcast
