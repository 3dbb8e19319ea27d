#pragma once
/// What members say to each other, as the API sees it: who a member is and where it
/// listens, how large a frame may be, and the hooks of a stream that is no job.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "hetcast/net/frame.hpp"
#include "hetcast/net/transport.hpp"

namespace hetcast {

/// The largest data frame any member sends: every member accepts frames this large, so
/// members configured with different chunk sizes still talk.
inline constexpr std::size_t max_chunk = std::size_t{8} << 20;
/// The largest frame payload a member accepts: a data chunk, or a job plan (tree.hpp).
inline constexpr std::size_t max_frame_payload = max_chunk + 4096;

/// Where a member listens.
struct Member {
    std::string name;
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;
};

/// Where the data and data_end frames of a stream that is no job go (Peer::accept_stream).
struct StreamHooks {
    std::function<void(const net::ConnectionPtr&, net::Frame&&)> frame;
    std::function<void(const net::Connection*, const std::string& why)> closed;
};

}  // namespace hetcast
