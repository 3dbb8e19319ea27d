// Streams that are no job: an operator's upload arrives as data frames of an id the
// service gave it, on the operator's own connection (Service push, runtime/upload.hpp).
// The table of accepted streams is streams.hpp's StreamTable.
#include "peer_impl.hpp"

namespace hetcast {

void Peer::accept_stream(std::uint64_t stream, StreamHooks hooks) { impl_->streams.accept(stream, std::move(hooks)); }

void Peer::end_stream(std::uint64_t stream) { impl_->streams.end(stream); }

}  // namespace hetcast
