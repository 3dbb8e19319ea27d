#pragma once
/// The `hetcast` command's side of a request to a daemon.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <system_error>

#include <nlohmann/json_fwd.hpp>

#include "hetcast/error.hpp"
#include "hetcast/net/identity.hpp"
#include "hetcast/net/transport.hpp"

namespace hetcast {

/// A daemon could not be reached, did not accept this side's identity, or was lost or went
/// silent during a request. Front ends exit with status 3 (hetcast(1)).
class Unreachable : public Error {
public:
    using Error::Error;
};

class Client {
public:
    /// Connects to the daemon at host:port over TLS, proving `identity` (the operator's, for
    /// commands that start pushes or change the cluster). `expect`: the daemon's name, when
    /// known. Throws hetcast::Error naming the address and why (refused, timed out, an
    /// identity the other side does not trust, not the expected member).
    Client(const std::string& host, std::uint16_t port, const net::Identity& identity,
           std::chrono::milliseconds timeout = std::chrono::seconds(5), const std::string& expect = {});
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    /// Sends a request and waits for its final response (one with "ok"), passing every
    /// {"progress": ...} response to `progress` on the way. Throws hetcast::Unreachable when
    /// the connection is lost or nothing arrives for `idle`; once the daemon sent a
    /// heartbeat ({"progress": {"heartbeat": SECONDS}}, every few seconds of a push or a
    /// probe, however quiet), for six of its periods instead: no wall-clock limit on a
    /// request that keeps beating.
    [[nodiscard]] nlohmann::json call(const nlohmann::json& request,
                                      const std::function<void(const nlohmann::json&)>& progress = {},
                                      std::chrono::milliseconds idle = std::chrono::minutes(5));

    /// The daemon's name: `expect`, else the one its certificate carries.
    [[nodiscard]] const std::string& name() const;
    /// HOST:PORT as connected to.
    [[nodiscard]] const std::string& address() const;

    /// Streams `body` to the daemon as upload `id` (a push of a file on this machine: the
    /// daemon said the id in a progress answer): data frames of at most `chunk` bytes as the
    /// socket takes them, then its SHA-256. Returns at once; `done` runs once it is sent
    /// or has failed. Thread-safe, also while call() waits.
    void upload(std::uint64_t id, std::shared_ptr<const net::MessageBody> body, std::size_t chunk,
                std::function<void(std::error_code)> done = {});

    /// Sends at most `bytes_per_second` on this connection (an upload under --bwlimit).
    void limit_rate(std::uint64_t bytes_per_second);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hetcast
