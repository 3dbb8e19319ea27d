#pragma once
// Streams that are no job (an operator's upload: runtime/upload.hpp): data frames whose
// job id is a stream the service accepted go to that stream's hooks, not to a job.
// The peer's assembly (Peer::Impl) holds one StreamTable.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "hetcast/net/frame.hpp"
#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/wire.hpp"

namespace hetcast::detail {

/// Thread safe. Hooks run on the caller's thread, outside the table's lock.
class StreamTable {
public:
    void accept(std::uint64_t stream, StreamHooks hooks);
    void end(std::uint64_t stream);
    /// Whether `f` (data or data_end) belongs to an accepted stream; then it went to its hooks.
    bool route(const net::ConnectionPtr& c, net::Frame& f);
    /// Tells every stream that `c` closed.
    void closed(const net::Connection* c, const std::string& why);

private:
    std::mutex mu_;
    std::map<std::uint64_t, std::shared_ptr<const StreamHooks>> streams_;
};

}  // namespace hetcast::detail
