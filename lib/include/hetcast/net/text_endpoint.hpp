#pragma once
/// A plain-HTTP endpoint that answers `GET PATH` with a text the caller makes on each
/// request (hetcastd's Prometheus metrics). HTTP/1.0-style: one request per connection,
/// at most 8 KiB of request head, 5 s to send it; no TLS (bind it to a local address).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "hetcast/log.hpp"

namespace hetcast::net {

class TextEndpoint {
public:
    /// `text` runs on the endpoint's thread, once per request; `content_type` goes with it.
    TextEndpoint(std::string host, std::uint16_t port, std::string path, std::string content_type,
                 std::function<std::string()> text, LogFn log = {});
    ~TextEndpoint();
    TextEndpoint(const TextEndpoint&) = delete;
    TextEndpoint& operator=(const TextEndpoint&) = delete;

    /// Binds and serves from a thread of its own. Throws hetcast::Error when it cannot bind.
    void start();
    /// Closes the listener and open connections, joins the thread; idempotent.
    void stop();
    /// The bound port (the one asked for, or the kernel's for 0), after start().
    [[nodiscard]] std::uint16_t port() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hetcast::net
