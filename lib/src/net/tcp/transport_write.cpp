// A TCP connection's send queue: frames and streams in order (frames may go out between a
// stream's chunks), pacing for link emulation, the stall deadline, closing.
#include "connection.hpp"

#include <algorithm>

namespace hetcast::net::tcp_detail {

asio::awaitable<std::error_code> TcpConnection::write_paced(std::vector<asio::const_buffer> buffers,
                                                            std::size_t bytes, Clock::time_point queued) {
    if (shape_.bandwidth > 0 || !shape_.shared.empty()) {
        const auto dep = std::max(queued, next_free_);
        auto end = shape_.bandwidth > 0
                       ? dep + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(static_cast<double>(bytes) / shape_.bandwidth))
                       : dep;
        for (const auto& r : shape_.shared) end = std::max(end, r->book(dep, bytes));
        next_free_ = end;
        pace_.expires_at(end + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(shape_.latency)));
        std::error_code ignore;
        co_await pace_.async_wait(asio::redirect_error(asio::use_awaitable, ignore));
    }
    const std::error_code ec = co_await write_socket(std::move(buffers));
    co_return ec;
}

asio::awaitable<std::error_code> TcpConnection::write_frame(Item& item) {
    auto& f = std::get<Frame>(item.what);
    std::array<std::byte, header_size> hdr;
    f.header.length = static_cast<std::uint32_t>(f.payload.size());
    encode_header(f.header, hdr);
    // Buffers are built before co_await: GCC 12 cannot keep an initializer_list across one.
    std::vector<asio::const_buffer> bufs{asio::buffer(hdr), asio::buffer(f.payload)};
    const std::error_code ec = co_await write_paced(std::move(bufs), hdr.size() + f.payload.size(), item.queued);
    co_return ec;
}

bool TcpConnection::open_stream(Sending& out) {
    auto& s = std::get<Stream>(out.item.what);
    try {
        out.reader = s.body->open();
    } catch (const std::exception& e) {
        owner_.log(LogLevel::warn, "cannot read a message to send: " + std::string(e.what()));
        out.abandoned = "the sender cannot go on: " + std::string(e.what());
        return false;
    }
    // Each chunk is read in after room for its header, so frame and data go to TLS as one
    // buffer (one record per 16 KiB, not one for the header). No larger than the body: a
    // small file pushed to a hundred members would otherwise zero a chunk per lane.
    out.chunk = static_cast<std::size_t>(std::clamp<std::uint64_t>(s.body->size(), 1, s.chunk));
    out.buf.resize(header_size + out.chunk);
    out.woken = std::make_shared<std::atomic<bool>>(false);
    return true;
}

bool TcpConnection::can_go(Sending& s) {
    if (!s.abandoned.empty()) return true;
    if (s.waiting && !s.woken->exchange(false)) return false;
    // Armed before asking: a wake from another thread is posted here, so it runs only once
    // the writer waits, and cannot be lost.
    s.waiting = !s.reader->ready([w = weak_from_this(), woken = s.woken] {
        woken->store(true);
        if (auto self = w.lock()) asio::post(self->stream_.get_executor(), [self] { self->data_.cancel(); });
    });
    return !s.waiting;
}

asio::awaitable<std::pair<std::error_code, bool>> TcpConnection::write_chunk(Sending& out) {
    auto& s = std::get<Stream>(out.item.what);
    // A body that fails between frames ends only its message: the receiver is told with a
    // job_cancel and the connection, which may carry other jobs, stays.
    if (out.abandoned.empty()) {
        std::size_t n = 0;
        try {
            n = out.reader->read(std::span(out.buf).subspan(header_size, out.chunk));
        } catch (const std::exception& e) {
            owner_.log(LogLevel::warn, "cannot read a message to send: " + std::string(e.what()));
            out.abandoned = "the sender cannot go on: " + std::string(e.what());
        }
        if (out.abandoned.empty() && n > 0) {
            out.sent += n;
            encode_header(FrameHeader{FrameType::data, 0, s.job, s.message, static_cast<std::uint32_t>(n)},
                          std::span(out.buf).first<header_size>());
            std::vector<asio::const_buffer> bufs{asio::buffer(out.buf.data(), header_size + n)};
            const std::error_code ec = co_await write_paced(std::move(bufs), header_size + n, out.item.queued);
            co_return std::make_pair(ec, false);
        }
        if (out.abandoned.empty() && out.sent != s.body->size()) {
            out.abandoned = "the message ended after " + std::to_string(out.sent) + " of " + std::to_string(s.body->size()) + " bytes";
            owner_.log(LogLevel::warn, "cannot read a message to send: " + out.abandoned);
            out.abandoned = "the sender cannot go on: " + out.abandoned;
        }
    }
    if (!out.abandoned.empty()) co_return std::make_pair(co_await write_abandon(s, out.abandoned), true);
    const Digest sha = s.body->sha256();
    std::array<std::byte, header_size> hdr;
    encode_header(FrameHeader{FrameType::data_end, 0, s.job, s.message, static_cast<std::uint32_t>(sha.size())}, hdr);
    std::vector<asio::const_buffer> bufs{asio::buffer(hdr), asio::buffer(sha)};
    const std::error_code ec = co_await write_paced(std::move(bufs), hdr.size() + sha.size(), out.item.queued);
    co_return std::make_pair(ec, true);
}

asio::awaitable<std::error_code> TcpConnection::write_abandon(const Stream& s, const std::string& why) {
    std::array<std::byte, header_size> hdr;
    encode_header(FrameHeader{FrameType::job_cancel, 0, s.job, s.message, static_cast<std::uint32_t>(why.size())}, hdr);
    std::vector<asio::const_buffer> bufs{asio::buffer(hdr), asio::buffer(why)};
    if (const std::error_code ec = co_await write_socket(std::move(bufs))) co_return ec;
    abandoned_ = true;
    co_return std::make_error_code(std::errc::io_error);
}

// Frames first, between any stream's chunks: a request, a ping or a cancel must not wait for
// a whole message to cross a slow link. Streams go in the order they were queued, one chunk
// at a time from the first that can go on: while a relayed message waits for bytes its
// sender has not yet received, the next ones take the lane (docs/protocol.md, "Lanes").
asio::awaitable<void> TcpConnection::write_loop() {
    auto self = shared_from_this();
    constexpr std::size_t most_open = 8;  // streams under way at once on one connection
    const auto fail = [&](const std::string& why) {
        for (auto& o : sending_) {
            if (o.item.done) o.item.done(asio::error::not_connected);
        }
        sending_.clear();
        shutdown(why);
    };
    while (!closed_) {
        if (closing_) {
            // close(): the error frame goes out after the chunk being written.
            for (auto& o : sending_) {
                if (o.item.done) o.item.done(asio::error::operation_aborted);
            }
            sending_.clear();
        }
        const auto frame = std::find_if(queue_.begin(), queue_.end(),
                                        [](const Item& i) { return std::holds_alternative<Frame>(i.what); });
        if (frame != queue_.end()) {
            Item item = std::move(*frame);
            queue_.erase(frame);
            const std::error_code ec = co_await write_frame(item);
            if (item.done) item.done(ec);
            if (ec && !closing_) {
                // TCP_USER_TIMEOUT (= stall): the peer acknowledged nothing for that long.
                fail(ec == asio::error::timed_out ? stall_reason() + " (" + ec.message() + ")" : "write failed: " + ec.message());
                co_return;
            }
            continue;
        }
        auto go = std::find_if(sending_.begin(), sending_.end(), [&](Sending& o) { return can_go(o); });
        if (go == sending_.end() && sending_.size() < most_open && !queue_.empty()) {
            Sending next;
            next.item = std::move(queue_.front());
            queue_.pop_front();
            (void)open_stream(next);  // one that cannot be read is abandoned in its turn
            sending_.push_back(std::move(next));
            continue;
        }
        if (go == sending_.end()) {
            // Woken by new work, a body that grew, or close(); a second at most.
            asio::steady_timer& t = sending_.empty() ? wake_ : data_;
            if (sending_.empty()) {
                t.expires_at(Clock::time_point::max());
            } else {
                t.expires_after(std::chrono::seconds(1));
            }
            std::error_code ignore;
            co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ignore));
            continue;
        }
        const auto [ec, ended] = co_await write_chunk(*go);
        if (closed_) {
            sending_.clear();  // shutdown() has told them; their buffers were in use until now
            co_return;
        }
        if (ended || ec) {
            Sending done = std::move(*go);
            sending_.erase(go);
            if (done.item.done) done.item.done(ec);
        }
        if (ec && !closing_ && !std::exchange(abandoned_, false)) {
            fail(ec == asio::error::timed_out ? stall_reason() + " (" + ec.message() + ")" : "write failed: " + ec.message());
            co_return;
        }
    }
}

void TcpConnection::shutdown(const std::string& why, bool reset) {
    if (closed_) return;
    closed_ = true;
    std::error_code ec;
    if (reset) {
        sock().set_option(asio::socket_base::linger(true, 0), ec);
    } else {
        sock().shutdown(tcp::socket::shutdown_both, ec);
    }
    close_socket(ec);
    wake_.cancel();
    pace_.cancel();
    data_.cancel();
    stall_.cancel();
    idle_.cancel();
    for (auto& item : queue_) {
        if (item.done) item.done(asio::error::not_connected);
    }
    queue_.clear();
    // Streams under way are told here, but stay until the writer, which may be writing from
    // one of them, has seen the close.
    for (auto& o : sending_) {
        if (auto done = std::exchange(o.item.done, nullptr)) done(asio::error::not_connected);
    }
    owner_.closed(shared_from_this(), why);
}

void TcpConnection::abort(const std::string& why) {
    asio::post(stream_.get_executor(), [self = shared_from_this(), why] { self->shutdown(why, true); });
}

void TcpConnection::close(const std::string& reason) {
    asio::post(stream_.get_executor(), [self = shared_from_this(), reason] {
        if (self->closed_ || self->closing_) return;
        if (reason.empty()) {
            self->shutdown("closed");
            return;
        }
        // The error frame goes out after the item being written (a stream stops at its next
        // chunk); what is still queued is dropped.
        self->closing_ = true;
        for (auto& item : self->queue_) {
            if (item.done) item.done(asio::error::operation_aborted);
        }
        self->queue_.clear();
        Frame f{FrameHeader{FrameType::error, 0, 0, 0, 0}, {}};
        const auto b = bytes_of(reason);
        f.payload.assign(b.begin(), b.end());
        self->queue_.push_back(Item{std::move(f), [self, reason](std::error_code) { self->shutdown(reason); },
                                    Clock::time_point{}});
        self->shape_ = {};
        self->pace_.cancel();
        self->wake_.cancel();
        self->data_.cancel();
    });
}

}  // namespace hetcast::net::tcp_detail
