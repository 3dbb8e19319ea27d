#include "link_state.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "hetcast/error.hpp"
#include "hetcast/sim/flow.hpp"

namespace hetcast::detail {
namespace {

static_assert(std::atomic<std::int64_t>::is_always_lock_free, "shared slots need lock-free 64-bit atomics");

class Slot final : public net::SharedRate {
public:
    Slot(std::atomic<std::int64_t>* at, double rate) : at_(at), rate_(rate) {}
    Clock::time_point book(Clock::time_point earliest, std::size_t bytes) override {
        const auto span = std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(static_cast<double>(bytes) / rate_))
                              .count();
        const auto from = earliest.time_since_epoch().count();
        auto cur = at_->load();
        while (!at_->compare_exchange_weak(cur, std::max(cur, from) + span)) {
        }
        return Clock::time_point(Clock::duration(std::max(cur, from) + span));
    }

private:
    std::atomic<std::int64_t>* at_;
    double rate_;
};

}  // namespace

LinkState::LinkState(const Network& profile, const std::filesystem::path& file)
    : profile_(profile), capacity_(resource_capacities(profile)) {
    bytes_ = std::max<std::size_t>(capacity_.size(), 1) * sizeof(std::int64_t);
    void* mem = MAP_FAILED;
    if (file.empty()) {
        mem = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    } else {
        const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) throw Error("link emulation: cannot open " + file.string() + ": " + std::strerror(errno));
        struct stat st {};
        // Every member asks for the same size; the first one makes the file that long.
        if (::fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) < bytes_ &&
            ::ftruncate(fd, static_cast<off_t>(bytes_)) != 0) {
            const int err = errno;
            ::close(fd);
            throw Error("link emulation: cannot size " + file.string() + ": " + std::strerror(err));
        }
        mem = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ::close(fd);
    }
    if (mem == MAP_FAILED) throw Error(std::string("link emulation: cannot map its state: ") + std::strerror(errno));
    slots_ = static_cast<std::atomic<std::int64_t>*>(mem);
    by_resource_.resize(capacity_.size());
    for (std::size_t r = 0; r < capacity_.size(); ++r) {
        if (std::isfinite(capacity_[r])) by_resource_[r] = std::make_shared<Slot>(slots_ + r, capacity_[r]);
    }
}

LinkState::~LinkState() {
    if (slots_) ::munmap(slots_, bytes_);
}

std::vector<std::shared_ptr<net::SharedRate>> LinkState::rates(NodeId from, NodeId to) {
    std::vector<std::shared_ptr<net::SharedRate>> out;
    for (std::size_t r : flow_path(profile_, from, to).resources) out.push_back(by_resource_[r]);
    return out;
}

}  // namespace hetcast::detail
