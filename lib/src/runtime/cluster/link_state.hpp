#pragma once
// The emulated NICs and uplinks of a link profile with capacities, shared by every member
// that emulates it: one slot per resource (sim/flow.hpp's layout) holding when it is free,
// in a file each member maps, updated with atomic operations.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "hetcast/model/network.hpp"
#include "hetcast/net/transport.hpp"

namespace hetcast::detail {

class LinkState {
public:
    /// Maps `file` (created when missing; empty: private memory). Throws Error when it cannot.
    LinkState(const Network& profile, const std::filesystem::path& file);
    ~LinkState();
    LinkState(const LinkState&) = delete;
    LinkState& operator=(const LinkState&) = delete;

    /// The shared rates a piece from → to crosses (profile ids), in no particular order.
    [[nodiscard]] std::vector<std::shared_ptr<net::SharedRate>> rates(NodeId from, NodeId to);

private:
    const Network& profile_;
    std::vector<double> capacity_;
    std::atomic<std::int64_t>* slots_ = nullptr;
    std::size_t bytes_ = 0;
    std::vector<std::shared_ptr<net::SharedRate>> by_resource_;
};

}  // namespace hetcast::detail
