#pragma once
// The jobs this member coordinates, by id (each try of a push is a job of its own), and
// the pushes cancelled by id (Peer::cancel) so that no next try of them starts. The
// peer's Tries (peer/peer_tries.hpp) holds one.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "job_state.hpp"

namespace hetcast::detail {

/// Thread safe; never takes a Coord's lock.
class CoordTable {
public:
    /// Registers try `id` of push `k->push`; returns why that push was cancelled, if it was.
    [[nodiscard]] std::optional<std::string> add(std::uint64_t id, const std::shared_ptr<Coord>& k);
    void remove(std::uint64_t id);
    [[nodiscard]] std::shared_ptr<Coord> find(std::uint64_t id) const;
    [[nodiscard]] std::vector<std::pair<std::uint64_t, std::shared_ptr<Coord>>> all() const;
    /// The running tries that `job` names (a try's id, or the push's first id). When there
    /// are some, the push counts as cancelled for `why` until forget_cancel.
    [[nodiscard]] std::vector<std::shared_ptr<Coord>> cancel(std::uint64_t job, const std::string& why);
    [[nodiscard]] bool cancelled(std::uint64_t push) const;
    /// The push ended: a cancel of its id no longer concerns it.
    void forget_cancel(std::uint64_t push);

private:
    mutable std::mutex mu_;
    std::map<std::uint64_t, std::shared_ptr<Coord>> by_id_;
    std::map<std::uint64_t, std::string> cancelled_;  ///< by push
};

}  // namespace hetcast::detail
