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

asio::awaitable<std::error_code> TcpConnection::write_item(Item& item) {
    if (auto* f = std::get_if<Frame>(&item.what)) {
        std::array<std::byte, header_size> hdr;
        f->header.length = static_cast<std::uint32_t>(f->payload.size());
        encode_header(f->header, hdr);
        // Buffers are built before co_await: GCC 12 cannot keep an initializer_list across one.
        std::vector<asio::const_buffer> bufs{asio::buffer(hdr), asio::buffer(f->payload)};
        const std::error_code ec = co_await write_paced(std::move(bufs), hdr.size() + f->payload.size(), item.queued);
        co_return ec;
    }
    auto& s = std::get<Stream>(item.what);
    // A body that fails between frames ends only its message: the receiver is told with a
    // job_cancel and the connection, which may carry other jobs, stays.
    std::string abandoned;
    const auto abandon = [&](const std::string& why) {
        owner_.log(LogLevel::warn, "cannot read a message to send: " + why);
        abandoned = "the sender cannot go on: " + why;
    };
    std::unique_ptr<MessageBody::Reader> reader;
    try {
        reader = s.body->open();
    } catch (const std::exception& e) {
        abandon(e.what());
    }
    if (!abandoned.empty()) co_return co_await write_abandon(s, abandoned);
    // Each chunk is read in after room for its header, so frame and data go to TLS as one
    // buffer (one record per 16 KiB, not one for the header). No larger than the body: a
    // small file pushed to a hundred members would otherwise zero a chunk per lane.
    const std::size_t chunk = static_cast<std::size_t>(std::clamp<std::uint64_t>(s.body->size(), 1, s.chunk));
    std::vector<std::byte> buf(header_size + chunk);
    std::array<std::byte, header_size> hdr;
    std::uint64_t sent = 0;
    while (true) {
        std::size_t n = 0;
        if (const std::error_code ec = co_await write_queued_frames()) co_return ec;
        if (!co_await await_data(*reader)) co_return asio::error::operation_aborted;
        try {
            n = reader->read(std::span(buf).subspan(header_size, chunk));
        } catch (const std::exception& e) {
            abandon(e.what());
        }
        if (!abandoned.empty()) co_return co_await write_abandon(s, abandoned);
        if (n == 0) break;
        if (closing_) co_return asio::error::operation_aborted;
        sent += n;
        encode_header(FrameHeader{FrameType::data, 0, s.job, s.message, static_cast<std::uint32_t>(n)},
                      std::span(buf).first<header_size>());
        std::vector<asio::const_buffer> bufs{asio::buffer(buf.data(), header_size + n)};
        const std::error_code ec = co_await write_paced(std::move(bufs), header_size + n, item.queued);
        if (ec) co_return ec;
    }
    if (sent != s.body->size()) {
        abandon("the message ended after " + std::to_string(sent) + " of " + std::to_string(s.body->size()) + " bytes");
        co_return co_await write_abandon(s, abandoned);
    }
    const Digest sha = s.body->sha256();
    encode_header(FrameHeader{FrameType::data_end, 0, s.job, s.message, static_cast<std::uint32_t>(sha.size())}, hdr);
    std::vector<asio::const_buffer> bufs{asio::buffer(hdr), asio::buffer(sha)};
    const std::error_code ec = co_await write_paced(std::move(bufs), hdr.size() + sha.size(), item.queued);
    co_return ec;
}

asio::awaitable<std::error_code> TcpConnection::write_queued_frames() {
    while (!closing_) {
        const auto it = std::find_if(queue_.begin(), queue_.end(),
                                     [](const Item& i) { return std::holds_alternative<Frame>(i.what); });
        if (it == queue_.end()) break;
        Item item = std::move(*it);
        queue_.erase(it);
        const std::error_code ec = co_await write_item(item);
        if (item.done) item.done(ec);
        if (ec) co_return ec;
    }
    co_return std::error_code{};
}

asio::awaitable<std::error_code> TcpConnection::write_abandon(const Stream& s, const std::string& why) {
    std::array<std::byte, header_size> hdr;
    encode_header(FrameHeader{FrameType::job_cancel, 0, s.job, s.message, static_cast<std::uint32_t>(why.size())}, hdr);
    std::vector<asio::const_buffer> bufs{asio::buffer(hdr), asio::buffer(why)};
    if (const std::error_code ec = co_await write_socket(std::move(bufs))) co_return ec;
    abandoned_ = true;
    co_return std::make_error_code(std::errc::io_error);
}

asio::awaitable<bool> TcpConnection::await_data(MessageBody::Reader& reader) {
    while (!closed_ && !closing_) {
        // Armed before asking: a wake from another thread is posted here, so it runs only
        // once this coroutine waits, and cannot be lost.
        data_.expires_after(std::chrono::seconds(1));
        const bool now = reader.ready([w = weak_from_this()] {
            if (auto self = w.lock()) asio::post(self->stream_.get_executor(), [self] { self->data_.cancel(); });
        });
        if (now) co_return true;
        std::error_code ignore;
        co_await data_.async_wait(asio::redirect_error(asio::use_awaitable, ignore));
    }
    co_return false;
}

asio::awaitable<void> TcpConnection::write_loop() {
    auto self = shared_from_this();
    while (!closed_) {
        if (queue_.empty()) {
            wake_.expires_at(Clock::time_point::max());
            std::error_code ignore;
            co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ignore));
            continue;
        }
        Item item = std::move(queue_.front());
        queue_.pop_front();
        const std::error_code ec = co_await write_item(item);
        if (item.done) item.done(ec);
        if (ec && !closing_ && !std::exchange(abandoned_, false)) {
            // TCP_USER_TIMEOUT (= stall): the peer acknowledged nothing for that long.
            shutdown(ec == asio::error::timed_out ? stall_reason() + " (" + ec.message() + ")"
                                                  : "write failed: " + ec.message());
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
    sock().close(ec);
    wake_.cancel();
    pace_.cancel();
    data_.cancel();
    stall_.cancel();
    idle_.cancel();
    for (auto& item : queue_) {
        if (item.done) item.done(asio::error::not_connected);
    }
    queue_.clear();
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
