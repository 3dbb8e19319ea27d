// Streams that are no job: an operator's upload arrives as data frames of an id the
// service gave it, on the operator's own connection (Service push, runtime/upload.hpp).
#include "../peer_impl.hpp"

namespace hetcast {

void Peer::accept_stream(std::uint64_t stream, StreamHooks hooks) {
    std::lock_guard lock(impl_->streams_mu);
    impl_->streams[stream] = std::make_shared<const StreamHooks>(std::move(hooks));
}

void Peer::end_stream(std::uint64_t stream) {
    std::lock_guard lock(impl_->streams_mu);
    impl_->streams.erase(stream);
}

bool Peer::Impl::route_stream(const net::ConnectionPtr& c, net::Frame& f) {
    std::shared_ptr<const StreamHooks> hooks;
    {
        std::lock_guard lock(streams_mu);
        if (streams.empty()) return false;
        const auto it = streams.find(f.header.job);
        if (it == streams.end()) return false;
        hooks = it->second;
    }
    hooks->frame(c, std::move(f));
    return true;
}

void Peer::Impl::streams_closed(const net::Connection* c, const std::string& why) {
    std::vector<std::shared_ptr<const StreamHooks>> all;
    {
        std::lock_guard lock(streams_mu);
        for (const auto& [id, h] : streams) all.push_back(h);
    }
    for (const auto& h : all) h->closed(c, why);
}

}  // namespace hetcast
