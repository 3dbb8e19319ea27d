#pragma once
/// The transport interface: framed connections between named peers, each one TLS 1.3 with
/// both ends proving an identity the cluster CA issued (net/identity.hpp).
/// The TCP backend (net/tcp/, Asio) implements it; nothing outside net/tcp includes Asio.
///
/// Threading: the transport runs one I/O thread. Callbacks run on it and must not block.
/// send()/send_stream()/close()/abort() are thread-safe. connect() blocks and must not be called
/// from a callback.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "hetcast/log.hpp"
#include "hetcast/net/digest.hpp"
#include "hetcast/net/frame.hpp"
#include "hetcast/net/identity.hpp"

namespace hetcast::net {

struct Frame {
    FrameHeader header;
    std::vector<std::byte> payload;
    /// When its header was read: about when its first byte came, where the frame's end came
    /// a whole payload later (a 1 MiB chunk at 1/11 of 100 Mbit/s is 0.9 s). Unset when sent.
    std::chrono::steady_clock::time_point began{};
};

/// A message body that can be read from the start any number of times (one reader per
/// send), so a relay streams the same file to several peers without holding it in memory.
class MessageBody {
public:
    class Reader {
    public:
        virtual ~Reader() = default;
        /// Fills `out` from the current position; 0 at the end. Throws hetcast::Error.
        virtual std::size_t read(std::span<std::byte> out) = 0;
        /// Moves the position `n` bytes on (a resumed message starts past what the
        /// receiver holds).
        virtual void skip(std::size_t /*n*/) {}
        /// Whether read() can go on now: a message still arriving is
        /// readable only as far as it is verified. When not, `wake` is called (from any
        /// thread, once) when more is, and the sender waits without blocking its thread.
        [[nodiscard]] virtual bool ready(std::function<void()> /*wake*/) { return true; }
    };
    virtual ~MessageBody() = default;
    [[nodiscard]] virtual std::uint64_t size() const = 0;
    [[nodiscard]] virtual Digest sha256() const = 0;
    [[nodiscard]] virtual std::unique_ptr<Reader> open() const = 0;
};

/// An emulated rate that several connections share — of this process or of several
/// (a NIC, a subnet's uplink): a piece of data books bytes/rate on it, after what was
/// booked before.
class SharedRate {
public:
    using Clock = std::chrono::steady_clock;
    virtual ~SharedRate() = default;
    /// Books `bytes` from `earliest` on (or from when the rate is free, if later); returns
    /// when they have passed.
    virtual Clock::time_point book(Clock::time_point earliest, std::size_t bytes) = 0;
};

/// Emulated link shape of one direction: each piece books the connection itself
/// (`bandwidth` bytes/s, 0: unpaced) and every shared rate it crosses, each from when that
/// one is free, and is delivered `latency` seconds after the last of them has passed it. A
/// connection sends its next piece only then, so a flow held back by a slow uplink books
/// its NIC at the uplink's pace and leaves the rest of the NIC to other flows, as TCP's
/// self-clocking does.
struct LinkShape {
    double latency = 0;
    double bandwidth = 0;
    std::vector<std::shared_ptr<SharedRate>> shared;
};

class Connection {
public:
    virtual ~Connection() = default;
    /// The peer's name, from its certificate.
    [[nodiscard]] virtual const std::string& peer() const = 0;
    /// All its certificate says: name, role, when it was issued.
    [[nodiscard]] virtual const PeerIdentity& identity() const = 0;
    /// Queues a frame. `done` runs on the I/O thread once it is written or has failed.
    virtual void send(Frame f, std::function<void(std::error_code)> done = {}) = 0;
    /// Queues a message: `data` frames of at most `chunk` bytes read from the body as the
    /// socket takes them (never the whole body in memory), then `data_end` with its SHA-256.
    virtual void send_stream(std::uint64_t job, std::uint32_t message, std::shared_ptr<const MessageBody> body,
                             std::size_t chunk, std::function<void(std::error_code)> done = {}) = 0;
    /// Sends an `error` frame with the reason (when non-empty) and closes.
    virtual void close(const std::string& reason = {}) = 0;
    /// Closes at once with a reset (SO_LINGER 0): what is queued and what the kernel still
    /// holds to send are dropped, not delivered. A job's data lane ends so on a cancel.
    virtual void abort(const std::string& why) = 0;
    /// Pacing of what this side sends on this connection.
    virtual void set_shape(LinkShape shape) = 0;
    /// When bytes last arrived on it (steady clock), a frame still arriving included: a
    /// megabyte frame crossing a congested link is progress long before it is whole.
    [[nodiscard]] virtual std::chrono::steady_clock::time_point received_at() const = 0;
    /// Bytes the kernel has received on it so far, read or not (TLS records and frame
    /// headers included); none when it cannot tell. Paired with the time it is asked, it
    /// gives rates that do not depend on when the reader ran. Any thread may ask, also
    /// while the connection closes.
    [[nodiscard]] virtual std::optional<std::uint64_t> kernel_received() { return std::nullopt; }
    /// The TCP congestion control the kernel runs on it (`cubic`, `bbr`); empty when it
    /// cannot tell.
    [[nodiscard]] virtual std::string congestion() { return {}; }
    /// The kernel paces what this side sends at no more than `bytes_per_s` of payload
    /// (SO_MAX_PACING_RATE, raised by the segments' headers); 0 lifts the cap. False when
    /// the kernel refused it.
    virtual bool set_max_pacing(double /*bytes_per_s*/) { return false; }
};
using ConnectionPtr = std::shared_ptr<Connection>;

struct TransportConfig {
    Identity identity;    ///< key, certificate and cluster CA; its name is this peer's
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;  ///< 0: an ephemeral port (see Transport::port())
    std::size_t max_frame = 16u << 20;
    std::chrono::milliseconds timeout{5000};  ///< connect and handshake
    /// A connection with data ready to send that the socket takes none of, and whose peer
    /// acknowledges none of what the socket holds, for this long is closed ("no progress
    /// sending for 10 s"), and so are its queued sends. A slow or congested link that
    /// drains the socket's buffer, however slowly, is progress. Time spent
    /// waiting for a stream's body to grow (a relay waiting for its own upstream) or for
    /// emulated pacing does not count. Also the sockets' TCP_USER_TIMEOUT (with TCP
    /// keepalive: probes after 5 s idle, every 1 s, 5 of them). 0: no limit.
    std::chrono::milliseconds stall{10000};
    /// An authenticated connection on which no byte arrives and none is sent for this long
    /// is closed ("nothing for 300 s"), unless TransportCallbacks::busy says it carries
    /// work. 0: never.
    std::chrono::milliseconds idle{0};
    /// Connections one peer (by name) may have open that it made to this one; one more is
    /// refused at its handshake with the reason. 0: no limit.
    std::size_t connections_per_peer = 0;
    /// The TCP congestion control every socket runs, made and accepted (TCP_CONGESTION;
    /// `bbr`, `cubic`); empty: the system's (net.ipv4.tcp_congestion_control). start()
    /// throws when the kernel refuses it.
    std::string congestion;
};

struct TransportCallbacks {
    std::function<void(const ConnectionPtr&, Frame&&)> on_frame;
    /// A connection closed (or failed its handshake): why, in one line.
    std::function<void(const ConnectionPtr&, const std::string&)> on_close;
    /// An authenticated connection is ready (inbound or outbound).
    std::function<void(const ConnectionPtr&)> on_open;
    /// Whether to admit a peer whose certificate the CA issued: empty, or why not (say, it
    /// was revoked). Runs on the I/O thread for every connection, both ends. None: admit.
    std::function<std::string(const PeerIdentity&)> admit;
    /// Asked too for connections a peer made to this one, after `admit`: whether that name
    /// may connect at all (one the cluster does not know may not). None: admit.
    std::function<std::string(const PeerIdentity&)> admit_inbound;
    /// Whether a connection that has been idle for TransportConfig::idle still carries work
    /// (a job, a request running): then it stays. Runs on the I/O thread. None: not busy.
    std::function<bool(const ConnectionPtr&)> busy;
    LogFn log;
};

class Transport {
public:
    virtual ~Transport() = default;
    /// Binds and starts the I/O thread. Throws hetcast::Error when it cannot bind.
    virtual void start() = 0;
    /// Closes every connection and joins the I/O thread; idempotent.
    virtual void stop() = 0;
    [[nodiscard]] virtual std::uint16_t port() const = 0;
    /// Connects and authenticates both ways. `expect` (when not empty): the name the
    /// peer's certificate must carry. Throws hetcast::Error naming the address and the
    /// reason (refused, timed out, not the expected member, an identity it does not trust,
    /// revoked).
    [[nodiscard]] virtual ConnectionPtr connect(const std::string& host, std::uint16_t port,
                                                const std::string& expect = {}) = 0;
    /// Closes every open connection whose peer `which` picks, with `reason` (a revocation).
    virtual void close_if(std::function<bool(const PeerIdentity&)> which, const std::string& reason) = 0;
};

[[nodiscard]] std::unique_ptr<Transport> make_tcp_transport(TransportConfig config, TransportCallbacks callbacks);

}  // namespace hetcast::net
