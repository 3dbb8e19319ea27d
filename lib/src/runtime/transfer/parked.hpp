#pragma once
// Pieces kept for a next try: a destination's copy of a cut-through file whose try failed
// because its feeder did. Its verified pieces wait (the temporary file stays) for the next
// try of the same push, which goes on from them; dropped after ParkedStore::keep_for, or
// when no next try can come (the coordinator cancels the push or is lost).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hetcast/net/digest.hpp"
#include "hetcast/runtime/files.hpp"

namespace hetcast::detail {

struct Parked {
    std::unique_ptr<FileSink> sink;  ///< its temporary file goes with it
    std::uint64_t verified = 0;
    net::Digest sha{};
    std::uint64_t size = 0, piece = 0;
    double at = 0;                   ///< when it was parked (steady clock, seconds)
    std::uint64_t job = 0;           ///< the try that left it
    std::string coordinator;         ///< that try's coordinator
    const void* control = nullptr;   ///< the coordinator's connection it came through
};

/// Keyed by final path; at most one copy per path. Thread safe; what a call drops is
/// handed back, so that its temporary files go outside the store's lock.
class ParkedStore {
public:
    static constexpr double keep_for = 60;

    /// Keeps `p` under `path` (what was there is handed back).
    std::optional<Parked> park(const std::string& path, Parked p);
    /// Takes what waits under `path`: it leaves the store whether or not the caller uses it.
    [[nodiscard]] std::optional<Parked> take(const std::string& path);
    /// Those parked more than keep_for before `now`.
    [[nodiscard]] std::vector<Parked> expire(double now);
    /// Those left by try `job` of `coordinator` (it ended the push).
    [[nodiscard]] std::vector<Parked> drop_job(std::uint64_t job, const std::string& coordinator);
    /// Those left by try `job` (its coordinator is lost).
    [[nodiscard]] std::vector<Parked> drop_job(std::uint64_t job);
    /// Those that came through the control connection `control` (it closed).
    [[nodiscard]] std::vector<Parked> drop_control(const void* control);
    [[nodiscard]] std::vector<Parked> clear();
    [[nodiscard]] std::size_t size() const;

private:
    template <class Pred>
    std::vector<Parked> drop_if(Pred pred);

    mutable std::mutex mu_;
    std::map<std::string, Parked> by_path_;
};

}  // namespace hetcast::detail
