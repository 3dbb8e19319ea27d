#pragma once
/// The daemon's logic: a Peer plus the requests a `hetcast` command or another daemon
/// makes of it (status, probe, push, map). `daemon/` only parses flags, starts a
/// Service and waits for a signal.
///
/// Requests and responses are JSON in `request` / `response` frames (docs/protocol.md):
/// {"cmd": "status" | "probe" | "push" | "map" | "ping" | "set_map" | "hello", ...}.
/// A long request (push, probe) answers with any number of {"progress": {...}} responses,
/// then one final response with "ok" (and "error" when false).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hetcast/log.hpp"
#include "hetcast/runtime/config.hpp"

namespace hetcast {

namespace detail {
struct Requests;
}

class Service {
public:
    /// Reads the identity, the cluster file, the link profile and the stored map. Throws
    /// InputError for bad configuration (before anything binds). `log` gets every line the
    /// service and its peer write, at every level (none: silent); the caller filters.
    explicit Service(DaemonConfig config, LogFn log = {});
    ~Service();
    Service(const Service&) = delete;
    Service& operator=(const Service&) = delete;

    /// Binds and serves. Throws hetcast::Error when it cannot bind.
    void start();
    void stop();
    [[nodiscard]] std::uint16_t port() const;
    /// SIGHUP: takes from `next` what can change while serving, the member list (the
    /// cluster file re-read, conf/README.md says which list wins); says each change in a
    /// line, and each other key that differs as one that takes a restart. The log level is
    /// the caller's. Throws InputError for a bad cluster file, changing nothing.
    [[nodiscard]] std::vector<std::string> reload(const DaemonConfig& next);

private:
    friend struct detail::Requests;  // the request table's handlers (lib/src/runtime/service)
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// hetcast's version, as daemons report it.
[[nodiscard]] const char* version();

}  // namespace hetcast
