#include "streams.hpp"

#include <utility>
#include <vector>

namespace hetcast::detail {

void StreamTable::accept(std::uint64_t stream, StreamHooks hooks) {
    std::lock_guard lock(mu_);
    streams_[stream] = std::make_shared<const StreamHooks>(std::move(hooks));
}

void StreamTable::end(std::uint64_t stream) {
    std::lock_guard lock(mu_);
    if (streams_.erase(stream) == 0 || !ended_set_.insert(stream).second) return;
    ended_.push_back(stream);
    if (ended_.size() > remembered_ends) {
        ended_set_.erase(ended_.front());
        ended_.pop_front();
    }
}

bool StreamTable::route(const net::ConnectionPtr& c, net::Frame& f) {
    std::shared_ptr<const StreamHooks> hooks;
    {
        std::lock_guard lock(mu_);
        const auto it = streams_.find(f.header.job);
        if (it == streams_.end()) return ended_set_.count(f.header.job) > 0;
        hooks = it->second;
    }
    hooks->frame(c, std::move(f));
    return true;
}

void StreamTable::closed(const net::Connection* c, const std::string& why) {
    std::vector<std::shared_ptr<const StreamHooks>> all;
    {
        std::lock_guard lock(mu_);
        for (const auto& [id, h] : streams_) all.push_back(h);
    }
    for (const auto& h : all) h->closed(c, why);
}

}  // namespace hetcast::detail
