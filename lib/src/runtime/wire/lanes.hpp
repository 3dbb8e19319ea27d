#pragma once
// Which connections are data lanes (docs/protocol.md), of which job, and whether this
// member receives on them: a lane that closes concerns its job only, and a control
// connection that closes concerns every job it coordinates. The peer's Connections holds one.
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

#include "hetcast/net/transport.hpp"

namespace hetcast::detail {

struct Lane {
    std::uint64_t job = 0;
    bool in = false;  ///< this member receives on it (else it sends)
};

/// Thread safe; connections are only keys, never looked into.
class LaneTable {
public:
    /// `c` carries `job`'s data (what was noted of it before is replaced).
    void note(const net::Connection* c, std::uint64_t job, bool in);
    /// `c` closed: the lane it was, if it was one.
    [[nodiscard]] std::optional<Lane> closed(const net::Connection* c);
    [[nodiscard]] bool carries(const net::Connection* c) const;
    [[nodiscard]] std::size_t size() const;

private:
    mutable std::mutex mu_;
    std::map<const net::Connection*, Lane> of_;
};

}  // namespace hetcast::detail
