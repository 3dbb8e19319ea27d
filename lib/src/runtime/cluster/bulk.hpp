#pragma once
// Bulk transfers for goodput measurements (the probe, docs/protocol.md "Probing"): the
// receiver's window over what arrives, and which connections carry bulk transfers, each
// way. The peer's Bulk (peer/peer_goodput.hpp) holds one, dials and pumps.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hetcast/net/transport.hpp"
#include "hetcast/runtime/measure.hpp"

namespace hetcast::detail {

/// A receiver's window over one bulk transfer: the rate is taken between the arrivals at
/// its edges, from `warmup` after the first byte to `seconds` after it. Times are seconds
/// on one steady clock. Not thread safe (BulkTransfers locks it).
class GoodputWindow {
public:
    /// `kernel_base`: the kernel's count on the connection when the measurement was asked
    /// (Connection::kernel_received); every byte after it is the transfer's.
    GoodputWindow(double seconds, double warmup, std::optional<std::uint64_t> kernel_base = std::nullopt)
        : seconds_(seconds), warmup_(warmup), kernel_base_(kernel_base) {}

    /// `bytes` were read at `now`; `end`: the sender says it ran out. True when the window
    /// is over: these bytes are not counted, and result() holds the measurement.
    /// `kernel`: what the kernel had received on the connection at `now`
    /// (Connection::kernel_received). With it, the arrivals and the rate count what the
    /// kernel received by each time, not what the reader had read: a reader that runs late
    /// on a busy machine, then catches up, no longer moves bytes into the window (short
    /// windows read shaped links up to 28% high with two CPU hogs beside the daemons).
    bool arrive(double now, std::size_t bytes, bool end, std::optional<std::uint64_t> kernel = std::nullopt);
    /// The kernel's count at `now`, looked at between frames (BulkTransfers does every few
    /// milliseconds). Needs a base. The window then starts when the kernel had the first
    /// byte and ends `seconds` later, not at whole frames around those times: a 32 KiB
    /// frame takes a quarter of a second to a flow that has 1 Mbit/s of a shared uplink,
    /// and a window waited for one at each end. True when the window is over.
    bool sample(double now, std::uint64_t kernel);
    /// What was measured: rate 0 when too little arrived to tell. Takes the arrivals.
    [[nodiscard]] Goodput result();

private:
    /// The transfer had `count` bytes by `now`; true when that is past the window.
    bool count(double now, std::uint64_t count);
    double seconds_, warmup_;
    bool started_ = false;
    double start_ = 0;  ///< when the first data arrived
    std::uint64_t bytes_ = 0;  ///< read in frames
    std::uint64_t counted_ = 0;  ///< the latest count inside the window
    std::optional<std::uint64_t> kernel_base_;  ///< the kernel's count that arrivals are counted from
    double last_ = 0;   ///< when the latest data arrived
    std::optional<std::pair<double, std::uint64_t>> from_, to_;
    std::vector<std::pair<double, std::uint64_t>> arrivals_;
};

/// The connections that carry bulk transfers: those this peer dialled to receive one
/// (waiting for their measurement, then measuring) and those it sends one on. Thread safe.
class BulkTransfers {
public:
    BulkTransfers() = default;
    BulkTransfers(const BulkTransfers&) = delete;
    BulkTransfers& operator=(const BulkTransfers&) = delete;
    ~BulkTransfers();

    /// A connection dialled by this peer to receive a bulk transfer; from now on its
    /// closing concerns no job. Returns the id measure() takes.
    std::uint64_t dialled(const net::ConnectionPtr& c, double now);
    /// Closes and forgets dialled connections no measurement took within `stale` seconds.
    void close_stale(double now, double stale);
    /// Takes dialled connection `id` for a window: `c` is set to it, and the future holds
    /// the measurement once the window is over, or at the latest `seconds` + late_for(seconds)
    /// from now with what arrived by then (a flow starved by the others then holds up no
    /// measurement until its next frame; too little is a failure as ever). Throws Error
    /// when no such connection waits.
    std::future<Goodput> measure(std::uint64_t id, double seconds, double warmup, net::ConnectionPtr& c);
    /// Data of a bulk transfer this peer receives on `c` (flags: net::bulk_data or
    /// bulk_end), read at `now` when the kernel had received `kernel` on it
    /// (GoodputWindow::arrive). When the window is over the measurement is set and `c` closed. Throws
    /// InputError for data nobody asked for.
    void on_data(const net::ConnectionPtr& c, std::uint16_t flags, std::size_t bytes, double now,
                 std::optional<std::uint64_t> kernel = std::nullopt);

    /// This peer sends a bulk transfer on `c`.
    void sending(const net::Connection* c);
    /// Whether `c` still is one this peer sends on (the receiver has not closed it).
    [[nodiscard]] bool still_sending(const net::Connection* c);
    /// Whether `c` carried a bulk transfer (its closing then concerns no job); forgets it.
    /// A measurement still waiting fails.
    bool forget(const net::Connection* c);
    /// Whether `c` carries a bulk transfer either way. Never waits: true when the state is
    /// locked by another thread (the caller, the idle check, looks again later).
    [[nodiscard]] bool busy_or_locked(const net::Connection* c);
    /// How late after it was asked a window may start and still be whole.
    [[nodiscard]] static double late_for(double seconds) { return seconds + 0.1; }

private:
    using Clock = std::chrono::steady_clock;
    struct In {
        std::optional<GoodputWindow> window;  ///< set when a measurement takes it
        net::ConnectionPtr connection;        ///< whose kernel count is sampled, when it tells one
        std::string peer;
        Clock::time_point deadline;           ///< the window is over then, whatever arrived
        bool done = false;
        std::shared_ptr<std::promise<Goodput>> result = std::make_shared<std::promise<Goodput>>();
    };
    /// Sets the measurement from what arrived (mu_ held).
    static void finish(In& b);
    /// Samples the kernel's counts of the windows under way and ends those that are over
    /// or whose deadline passed; runs while the object lives.
    void watch();
    std::mutex mu_;
    std::condition_variable changed_;
    bool stopping_ = false;
    std::thread watcher_;  ///< started by the first measure()
    std::map<const net::Connection*, In> in_;   ///< connections this peer receives bulk transfers on
    std::set<const net::Connection*> out_;      ///< connections it sends them on
    /// Dialled connections waiting for their measurement, and when they were dialled.
    std::map<std::uint64_t, std::pair<net::ConnectionPtr, double>> ready_;
    std::uint64_t seq_ = 0;
};

}  // namespace hetcast::detail
