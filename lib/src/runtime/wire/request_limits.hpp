#pragma once
// Requests per peer (config key requests_per_peer): how many each peer has running here,
// and on which connection. The peer's Admission holds one; the idle check asks it.
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "hetcast/net/transport.hpp"

namespace hetcast::detail {

class RequestLimits {
public:
    /// Counts a request of peer `who` on connection `conn` until the returned handle goes;
    /// null, and nothing counted, when `who` has `limit` running already (0: no limit).
    /// Every handle must go before this does. Thread safe.
    [[nodiscard]] std::shared_ptr<void> take(const std::string& who, const net::Connection* conn, std::size_t limit);
    /// Whether a request taken on `conn` still runs.
    [[nodiscard]] bool serving(const net::Connection* conn);
    /// How many requests of `who` run.
    [[nodiscard]] std::size_t running(const std::string& who);

private:
    std::mutex mu_;
    std::map<std::string, std::size_t> of_;                ///< by peer name
    std::map<const net::Connection*, std::size_t> on_;     ///< by connection
};

}  // namespace hetcast::detail
