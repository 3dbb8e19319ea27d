#pragma once
// Streams that are no job (an operator's upload: runtime/upload.hpp): data frames whose
// job id is a stream the service accepted go to that stream's hooks, not to a job.
// The peer's assembly (Peer::Impl) holds one StreamTable.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
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
    /// A frame of a stream that ended lately is taken and dropped: its sender is an operator
    /// whose request is answered on that same connection, and a reset would lose the answer.
    bool route(const net::ConnectionPtr& c, net::Frame& f);
    /// Tells every stream that `c` closed.
    void closed(const net::Connection* c, const std::string& why);

private:
    std::mutex mu_;
    std::map<std::uint64_t, std::shared_ptr<const StreamHooks>> streams_;
    static constexpr std::size_t remembered_ends = 256;
    std::deque<std::uint64_t> ended_;  // oldest first, at most remembered_ends
    std::set<std::uint64_t> ended_set_;
};

}  // namespace hetcast::detail
