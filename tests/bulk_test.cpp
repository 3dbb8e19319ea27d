// Goodput measurement's bookkeeping (lib/src/runtime/cluster/bulk.hpp, internal): the
// receiver's window on hand-made arrival times, and which connections carry bulk transfers.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "../lib/src/runtime/cluster/bulk.hpp"
#include "hetcast/error.hpp"
#include "hetcast/net/frame.hpp"

using hetcast::Goodput;
using hetcast::detail::BulkTransfers;
using hetcast::detail::GoodputWindow;

namespace {

/// A connection that only records whether it was closed.
class FakeConnection : public hetcast::net::Connection {
public:
    explicit FakeConnection(std::string peer) : peer_(std::move(peer)) {}
    const std::string& peer() const override { return peer_; }
    const hetcast::net::PeerIdentity& identity() const override { return id_; }
    void send(hetcast::net::Frame, std::function<void(std::error_code)>) override {}
    void send_stream(std::uint64_t, std::uint32_t, std::shared_ptr<const hetcast::net::MessageBody>, std::size_t,
                     std::function<void(std::error_code)>) override {}
    void close(const std::string&) override { ++closed; }
    void abort(const std::string&) override { ++closed; }
    void set_shape(hetcast::net::LinkShape) override {}
    std::chrono::steady_clock::time_point received_at() const override { return {}; }
    std::optional<std::uint64_t> kernel_received() override { return kernel ? std::optional(kernel()) : std::nullopt; }
    int closed = 0;
    std::function<std::uint64_t()> kernel;  ///< the kernel's count, when it tells one

private:
    std::string peer_;
    hetcast::net::PeerIdentity id_;
};

}  // namespace

TEST_CASE("goodput window: the rate is taken between the arrivals at the edges of the window after the warm-up") {
    GoodputWindow w(1.0, 0.2);
    // 1000 bytes every 0.1 s from t = 10: the warm-up ends at 10.2, the window at 11.
    for (int i = 0; i <= 10; ++i) CHECK_FALSE(w.arrive(10 + 0.1 * i, 1000, false));
    CHECK(w.arrive(11.15, 1000, false));  // past the window: not counted
    const Goodput g = w.result();
    CHECK(g.bytes == 11000);
    // From the last arrival inside the warm-up (10.2, 3000 bytes) to the last one (11.0, 11000).
    CHECK(g.seconds == doctest::Approx(0.8));
    CHECK(g.rate == doctest::Approx(8000 / 0.8));
    CHECK(g.arrivals.size() == 11);
    CHECK(g.arrivals.back().second == 11000);
}

TEST_CASE("goodput window: a sender that runs out ends the window, and one frame tells no rate") {
    GoodputWindow w(5.0, 1.0);
    CHECK_FALSE(w.arrive(0.0, 500, false));
    CHECK_FALSE(w.arrive(0.5, 500, false));  // both inside the warm-up: no far edge
    CHECK(w.arrive(0.6, 0, true));
    const Goodput g = w.result();
    // No edge after the warm-up: everything since the first byte.
    CHECK(g.bytes == 1000);
    CHECK(g.seconds == doctest::Approx(0.5));
    CHECK(g.rate == doctest::Approx(2000));

    GoodputWindow one(1.0, 0.1);
    CHECK_FALSE(one.arrive(3.0, 4096, false));
    CHECK(one.arrive(3.0, 0, true));
    CHECK(one.result().rate == 0);
}

TEST_CASE("goodput window: with the kernel's counts, a reader that runs late and catches up measures the link, not itself") {
    // The kernel receives 1 MB/s; the reader falls behind by up to 200 kB at random in the
    // warm-up and through the window, then catches up: by its own counts it would read the
    // link up to 25% high (or low), by the kernel's it reads the link.
    std::mt19937 rng(7);
    int app_off = 0;
    for (int trial = 0; trial < 200; ++trial) {
        const double rate = 1e6;
        GoodputWindow w(1.0, 0.2), app(1.0, 0.2);
        std::uniform_real_distribution<double> lag_at(0, 2e5), step(0.001, 0.03);
        std::uint64_t read = 0;
        double t = 0;
        bool over = false;
        while (!over) {
            const auto kernel = static_cast<std::uint64_t>(rate * t);
            // What the reader has read: the kernel's count less its lag (lag 0 late in the window).
            const double lag = t > 0.9 ? 0 : lag_at(rng);
            const auto upto = static_cast<std::uint64_t>(std::max<double>(read, static_cast<double>(kernel) - lag));
            const std::size_t frame = std::max<std::uint64_t>(upto - read, 1);
            read += frame;
            over = w.arrive(t, frame, false, std::max(kernel, read));
            app.arrive(t, frame, false);
            t += step(rng);
        }
        const Goodput g = w.result();
        CHECK(g.rate == doctest::Approx(rate).epsilon(0.002));
        if (std::abs(app.result().rate / rate - 1) > 0.05) ++app_off;
        CHECK(g.arrivals.front().first == 0.0);
        for (std::size_t k = 1; k < g.arrivals.size(); ++k) CHECK(g.arrivals[k].second >= g.arrivals[k - 1].second);
    }
    CHECK(app_off > 20);  // the reader's own counts are off by more than 5% in many trials
}

TEST_CASE("goodput window: a count the kernel did not give is left out, not mixed with those it gave") {
    GoodputWindow w(1.0, 0.0);
    CHECK_FALSE(w.arrive(0.0, 100, false, std::uint64_t{5000}));
    CHECK_FALSE(w.arrive(0.5, 100, false, std::nullopt));
    CHECK_FALSE(w.arrive(0.6, 100, false, std::uint64_t{6000}));
    CHECK(w.arrive(1.5, 100, false, std::uint64_t{9000}));
    const Goodput g = w.result();
    REQUIRE(g.arrivals.size() == 2);
    CHECK(g.arrivals[1].second - g.arrivals[0].second == 1000);
    CHECK(g.rate == doctest::Approx(1000 / 0.6));
    CHECK(g.bytes == 1100);  // the kernel's count at the window's last arrival
}

TEST_CASE("goodput window: sampled kernel counts start and end the window on time, not at the frames around it") {
    // A flow of 32 KiB frames at a random rate, the kernel's count looked at every 1-8 ms:
    // the window starts at the first byte the kernel had and ends at the first look past
    // it; frames alone would start it a frame late and end it at the next frame.
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> rate_of(1e5, 1e7), gap(0.001, 0.008);
    for (int trial = 0; trial < 200; ++trial) {
        const double rate = rate_of(rng), first = 0.02, seconds = 0.3;
        const std::uint64_t base = 4000, frame = 32 << 10;
        const auto kernel_at = [&](double t) { return base + static_cast<std::uint64_t>(std::max(0.0, t - first) * rate); };
        GoodputWindow w(seconds, 0.05, base), frames(seconds, 0.05);
        double next_frame = first + frame / rate, t = 0, over_at = -1;
        while (over_at < 0) {
            t += gap(rng);
            while (next_frame <= t && over_at < 0) {
                if (w.arrive(next_frame, frame, false, kernel_at(next_frame))) over_at = next_frame;
                frames.arrive(next_frame, frame, false);
                next_frame += frame / rate;
            }
            if (over_at < 0 && w.sample(t, kernel_at(t))) over_at = t;
        }
        const Goodput g = w.result();
        REQUIRE(g.arrivals.size() >= 2);
        CHECK(g.arrivals.front().first > first);
        CHECK(g.arrivals.front().first < first + 0.0081);
        CHECK(over_at - g.arrivals.front().first > seconds - 0.001);  // points within 1 ms are kept as one
        CHECK(over_at - g.arrivals.front().first < seconds + 0.0081);
        CHECK(g.arrivals.back().first > first + seconds - 0.0081);
        CHECK(g.rate == doctest::Approx(rate).epsilon(0.02));
        for (std::size_t k = 1; k < g.arrivals.size(); ++k) {
            CHECK(g.arrivals[k].first > g.arrivals[k - 1].first);
            CHECK(g.arrivals[k].second >= g.arrivals[k - 1].second);
        }
        // The frames' own window starts a whole frame after the first byte.
        CHECK(frames.result().arrivals.front().first == doctest::Approx(first + frame / rate));
    }
}

TEST_CASE("goodput window: arrivals within a millisecond are kept as one, the latest") {
    GoodputWindow w(1.0, 0.0);
    CHECK_FALSE(w.arrive(1.0, 100, false));
    CHECK_FALSE(w.arrive(1.0004, 100, false));
    CHECK_FALSE(w.arrive(1.002, 100, false));
    CHECK(w.arrive(2.5, 100, false));
    const Goodput g = w.result();
    REQUIRE(g.arrivals.size() == 2);
    CHECK(g.arrivals[0] == std::pair{1.0004, std::uint64_t{200}});
    CHECK(g.arrivals[1] == std::pair{1.002, std::uint64_t{300}});
}

TEST_CASE("bulk transfers: a dialled connection measures once, then is closed, and unknown data is refused") {
    BulkTransfers b;
    auto c = std::make_shared<FakeConnection>("m1");
    const std::uint64_t id = b.dialled(c, 100.0);
    CHECK(b.busy_or_locked(c.get()));
    CHECK_THROWS_AS(b.on_data(c, hetcast::net::bulk_data, 10, 100.1), hetcast::InputError);  // before measure
    hetcast::net::ConnectionPtr taken;
    std::future<Goodput> got = b.measure(id, 1.0, 0.0, taken);
    CHECK(taken == c);
    CHECK_THROWS_AS((void)b.measure(id, 1.0, 0.0, taken), hetcast::Error);  // taken already
    b.on_data(c, hetcast::net::bulk_data, 1000, 200.0);
    b.on_data(c, hetcast::net::bulk_data, 1000, 200.5);
    CHECK(got.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
    b.on_data(c, hetcast::net::bulk_end, 0, 200.6);
    REQUIRE(got.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
    CHECK(got.get().rate == doctest::Approx(2000));
    CHECK(c->closed == 1);
    b.on_data(c, hetcast::net::bulk_data, 1000, 200.7);  // in flight when the window closed
    CHECK(b.forget(c.get()));
    CHECK_FALSE(b.busy_or_locked(c.get()));
    auto stranger = std::make_shared<FakeConnection>("m2");
    CHECK_THROWS_AS(b.on_data(stranger, hetcast::net::bulk_data, 10, 1.0), hetcast::InputError);
}

TEST_CASE("bulk transfers: a connection closed mid-window fails its measurement, and stale dialled ones are closed") {
    BulkTransfers b;
    auto c = std::make_shared<FakeConnection>("m1");
    hetcast::net::ConnectionPtr taken;
    std::future<Goodput> got = b.measure(b.dialled(c, 0.0), 1.0, 0.0, taken);
    b.on_data(c, hetcast::net::bulk_data, 1000, 1.0);
    CHECK(b.forget(c.get()));
    CHECK_THROWS_AS(got.get(), hetcast::Error);

    auto old = std::make_shared<FakeConnection>("m2"), fresh = std::make_shared<FakeConnection>("m3");
    const std::uint64_t old_id = b.dialled(old, 0.0), fresh_id = b.dialled(fresh, 50.0);
    b.close_stale(70.0, 60.0);
    CHECK(old->closed == 1);
    CHECK(fresh->closed == 0);
    CHECK_THROWS_AS((void)b.measure(old_id, 1.0, 0.0, taken), hetcast::Error);
    CHECK_NOTHROW((void)b.measure(fresh_id, 1.0, 0.0, taken));

    auto out = std::make_shared<FakeConnection>("m4");
    CHECK_FALSE(b.still_sending(out.get()));
    b.sending(out.get());
    CHECK(b.still_sending(out.get()));
    CHECK(b.busy_or_locked(out.get()));
    CHECK(b.forget(out.get()));
    CHECK_FALSE(b.still_sending(out.get()));
    CHECK_FALSE(b.forget(out.get()));
}

TEST_CASE("bulk transfers: a connection whose kernel tells its count is measured from samples, with no frame read") {
    // The kernel receives 2 MB/s from a moment after the measurement is asked; no frame
    // reaches the reader (a flow whose frames are larger than what its window carries).
    BulkTransfers b;
    auto c = std::make_shared<FakeConnection>("m1");
    const auto asked = std::chrono::steady_clock::now();
    c->kernel = [asked] {
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count() - 0.05;
        return std::uint64_t{777} + static_cast<std::uint64_t>(std::max(0.0, t) * 2e6);
    };
    hetcast::net::ConnectionPtr taken;
    std::future<Goodput> got = b.measure(b.dialled(c, 0.0), 0.3, 0.05, taken);
    REQUIRE(got.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    const Goodput g = got.get();
    CHECK(g.rate == doctest::Approx(2e6).epsilon(0.25));
    REQUIRE(g.arrivals.size() >= 2);
    CHECK(g.arrivals.back().first - g.arrivals.front().first <= 0.3);
    CHECK(g.arrivals.front().second < 200000);  // counted from the measurement's base, not from 0
}

TEST_CASE("bulk transfers: a window whose flow starves ends at its deadline with what arrived, not at the next frame") {
    BulkTransfers b;
    // Two frames, then nothing: before, the window waited for a frame past its end.
    auto c = std::make_shared<FakeConnection>("m1");
    hetcast::net::ConnectionPtr taken;
    std::future<Goodput> got = b.measure(b.dialled(c, 0.0), 0.05, 0.0, taken);
    b.on_data(c, hetcast::net::bulk_data, 1000, 1.0);
    b.on_data(c, hetcast::net::bulk_data, 1000, 1.01);
    REQUIRE(got.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    const Goodput g = got.get();
    CHECK(g.bytes == 2000);
    CHECK(g.rate == doctest::Approx(1000 / 0.01));
    CHECK(c->closed == 0);  // the waiter closes it
    b.on_data(c, hetcast::net::bulk_data, 1000, 1.5);  // arrives after the deadline: ignored

    // Nothing at all: too little to measure.
    auto silent = std::make_shared<FakeConnection>("m2");
    std::future<Goodput> none = b.measure(b.dialled(silent, 0.0), 0.05, 0.0, taken);
    REQUIRE(none.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    CHECK_THROWS_WITH_AS(none.get(), "'m2' sent too little to measure", hetcast::Error);
}
