#pragma once
// The daemon's Prometheus metrics (config key `metrics: HOST:PORT`): pushes counted by
// outcome and the endpoint that serves them with the peer's counters. Methods in
// service_metrics.cpp.
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "hetcast/net/text_endpoint.hpp"
#include "service_core.hpp"
#include "service_pushes.hpp"

namespace hetcast::detail {

class Metrics {
public:
    /// The core and the pushes outlive this (Service::Impl holds them all).
    Metrics(ServiceCore& core, const Pushes& pushes) : core_(core), pushes_(pushes) {}

    /// Counts a push's final answer (or, without reports, a refusal) by its outcome.
    void count_push(const nlohmann::json& answer);
    /// Counts a push refused before it had an answer.
    void count_refused() { ++pushes_refused; }
    /// Starts the endpoint when `metrics:` is set. Throws hetcast::Error when it cannot bind.
    void start_metrics();
    void stop();

private:
    std::string metrics_text() const;

    ServiceCore& core_;
    const Pushes& pushes_;
    std::atomic<std::uint64_t> pushes_ok{0}, pushes_failed{0}, pushes_cancelled{0}, pushes_refused{0};
    std::unique_ptr<net::TextEndpoint> metrics;
};

}  // namespace hetcast::detail
