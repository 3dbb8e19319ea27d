// Cut-through relaying at a participant (issue 13 §1): data checked piece by piece as it
// arrives, a piece that fails its check asked for again from the sender, and the sender's
// side of that: reading the piece back from what it holds.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/pieces.hpp"
#include "../wire/frames.hpp"
#include "peer_pieces.hpp"

namespace hetcast::detail {
using net::ConnectionPtr;
using net::Frame;
using net::FrameHeader;
using net::FrameType;

namespace {

/// A piece is asked for again at most this many times before the message fails.
constexpr int max_refetches_per_piece = 3;

void put_index(std::vector<std::byte>& out, std::uint64_t k) {
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<std::byte>(k >> (8 * i)));
}

std::uint64_t get_index(std::span<const std::byte> in) {
    if (in.size() < 8) throw InputError("a piece frame without its index");
    std::uint64_t k = 0;
    for (int i = 0; i < 8; ++i) k = (k << 8) | std::to_integer<std::uint64_t>(in[static_cast<std::size_t>(i)]);
    return k;
}

/// Bytes [offset, offset + n) of a body this node holds (sent on already, so in and checked).
std::vector<std::byte> read_back(const net::MessageBody& body, std::uint64_t offset, std::size_t n) {
    auto reader = body.open();
    std::vector<std::byte> skip(std::size_t{1} << 20), out(n);
    for (std::uint64_t at = 0; at < offset;) {
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(skip.size(), offset - at));
        const std::size_t got = reader->read(std::span(skip).first(want));
        if (got == 0) throw Error("the message ended before the piece asked for");
        at += got;
    }
    for (std::size_t at = 0; at < n;) {
        const std::size_t got = reader->read(std::span(out).subspan(at));
        if (got == 0) throw Error("the message ended inside the piece asked for");
        at += got;
    }
    return out;
}

}  // namespace

Recv& expect(Job& job, const ConnectionPtr& c, MessageId m) {
    const auto it = job.recv.find(m);
    if (it == job.recv.end() || it->second.from != c->peer()) {
        throw InputError("'" + c->peer() + "' sent " + message_label(m) + ", which this node does not expect from it");
    }
    return it->second;
}

void PieceRelay::take(Job& job, Recv& r, const ConnectionPtr& c, MessageId m, std::span<const std::byte> data) {
    if (r.sink) {
        r.sink->write(data);
    } else {
        r.buf_hash->add(data);
    }
    for (std::uint64_t k : r.pieces->add(data)) {
        core_.log(LogLevel::warn, "job " + std::to_string(job.plan.job) + ": piece " + std::to_string(k) + " of " + message_label(m) +
            " from '" + c->peer() + "' failed its SHA-256; asking for it again");
        ask_again(job, r, c, m, k);
    }
}

void PieceRelay::ask_again(Job& job, Recv& r, const ConnectionPtr& c, MessageId m, std::uint64_t k) {
    if (++r.refetches[k] > max_refetches_per_piece) {
        r.error = "piece " + std::to_string(k) + " of " + message_label(m) + " from '" + c->peer() +
                  "' failed its SHA-256 again and again";
        r.pieces->fail(r.error);
        return;
    }
    std::vector<std::byte> payload;
    put_index(payload, k);
    c->send(Frame{FrameHeader{FrameType::piece_request, 0, job.plan.job, m, 0}, std::move(payload)});
}

void PieceRelay::on_request(const ConnectionPtr& c, const Frame& f, const std::shared_ptr<Job>& job) {
    const MessageId m = f.header.message;
    const std::uint64_t k = get_index(f.payload);
    // What cannot be served is said to the asker, which then fails that message; the
    // connection stays (it may carry other jobs).
    const auto refuse = [&](const std::string& why) {
        c->send(make_frame(FrameType::job_cancel, f.header.job, m, "'" + core_.cfg.name + "' cannot send piece " + std::to_string(k) + " again: " + why));
    };
    if (!job) return refuse("the job is over here");
    std::shared_ptr<const net::MessageBody> body;
    {
        std::lock_guard lock(job->mu);
        const bool sends = std::any_of(job->plan.tasks.begin(), job->plan.tasks.end(), [&](const JobTask& t) {
            return t.op == Op::send && t.message == m && t.peer == c->peer();
        });
        if (!sends || job->plan.relay != Relay::cut_through) return refuse("this node does not send that message to '" + c->peer() + "'");
        if (auto it = job->held.find(m); it != job->held.end()) body = it->second;
    }
    const std::uint64_t size = job->plan.messages.at(m).size, piece = job->plan.piece;
    if (!body || k >= piece_count(size, piece)) return refuse("no such piece here");
    // Reading back may take a while (a piece deep in a large file): not on the I/O thread.
    const bool queued = core_.spawn(core_.slow, [this, c, job, body, m, k, piece, size] {
                           try {
                               const auto n = static_cast<std::size_t>(std::min(size, (k + 1) * piece) - k * piece);
                               std::vector<std::byte> payload;
                               payload.reserve(8 + n);
                               put_index(payload, k);
                               const auto bytes = read_back(*body, k * piece, n);
                               payload.insert(payload.end(), bytes.begin(), bytes.end());
                               c->send(Frame{FrameHeader{FrameType::piece_data, 0, job->plan.job, m, 0}, std::move(payload)});
                           } catch (const std::exception& e) {
                               core_.log(LogLevel::warn, "cannot send piece " + std::to_string(k) + " of " + message_label(m) + " again: " + e.what());
                           }
                       });
    if (!queued) refuse("busy");
}

void PieceRelay::on_data(const ConnectionPtr& c, const Frame& f, const std::shared_ptr<Job>& job) {
    if (!job) return c->abort("job " + std::to_string(f.header.job) + " is over here");  // as in on_data
    const std::uint64_t k = get_index(f.payload);
    std::vector<std::byte> payload = f.payload;
    const auto bytes = std::span(payload).subspan(8);
    std::lock_guard lock(job->mu);
    Recv& r = expect(*job, c, f.header.message);
    if (!r.pieces || !r.error.empty() || r.done || job->aborted) return;
    if (core_.cfg.tamper) core_.cfg.tamper(job->plan.job, f.header.message, k * job->plan.piece, bytes);
    if (!r.pieces->matches(k, bytes)) {
        core_.log(LogLevel::warn, "job " + std::to_string(job->plan.job) + ": piece " + std::to_string(k) + " of " +
            message_label(f.header.message) + " came again from '" + c->peer() + "' and failed its SHA-256 again");
        ask_again(*job, r, c, f.header.message, k);
        job->cv.notify_all();
        return;
    }
    try {
        if (r.sink) r.sink->rewrite(k * job->plan.piece, bytes);
        r.pieces->replace(k, bytes);
    } catch (const std::exception& e) {
        r.error = e.what();
        r.pieces->fail(r.error);
    }
    job->cv.notify_all();
}

void PieceRelay::wait_first(Job& job, MessageId m) {
    std::unique_lock lock(job.mu);
    Recv& r = job.recv.at(m);
    const std::uint64_t first = std::min(job.plan.piece, job.plan.messages.at(m).size);
    auto last = std::make_pair(r.got, Clock::now());
    const auto started = Clock::now();
    while (r.pieces->verified() < first && r.error.empty() && !job.aborted) {
        job.cv.wait_for(lock, std::chrono::milliseconds(200));
        if (r.got != last.first) {
            last = {r.got, Clock::now()};
        } else if (const auto stall = receive_stall(job.plan, core_.cfg.stall_timeout);
                   Clock::now() - std::max(last.second, job.heard_from(r.from)) > stall &&
                   (r.got > 0 || Clock::now() - started > 2 * stall)) {
            r.error = message_label(m) + " from '" + r.from + "' stalled at " + std::to_string(r.got) + " bytes";
        }
    }
    if (job.aborted) throw Error(job.abort_reason);
    if (!r.error.empty()) throw Error(r.error);
}

}  // namespace hetcast::detail
