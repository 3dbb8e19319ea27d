#include "hetcast/runtime/pieces.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "hetcast/error.hpp"

namespace hetcast {

std::uint64_t piece_count(std::uint64_t size, std::uint64_t piece) { return piece == 0 ? 0 : (size + piece - 1) / piece; }

std::vector<net::Digest> piece_digests(const net::MessageBody& body, std::uint64_t piece) {
    if (piece == 0) throw InputError("a piece must be at least one byte");
    std::vector<net::Digest> out;
    auto reader = body.open();
    std::vector<std::byte> buf(static_cast<std::size_t>(std::min<std::uint64_t>(piece, std::uint64_t{1} << 20)));
    std::optional<net::Sha256> h(std::in_place);
    std::uint64_t in_piece = 0, total = 0;
    while (total < body.size()) {
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), piece - in_piece));
        const std::size_t n = reader->read(std::span(buf).first(want));
        if (n == 0) throw Error("a message ended after " + std::to_string(total) + " of its " + std::to_string(body.size()) + " bytes");
        h->update(std::span<const std::byte>(buf.data(), n));
        in_piece += n;
        total += n;
        if (in_piece == piece || total == body.size()) {
            out.push_back(h->finish());
            h.emplace();
            in_piece = 0;
        }
    }
    return out;
}

PieceTracker::PieceTracker(std::uint64_t size, std::uint64_t piece, std::vector<net::Digest> digests,
                           std::shared_ptr<const int> fd)
    : size_(size), piece_(piece), digests_(std::move(digests)), fd_(std::move(fd)) {
    if (piece_ == 0) throw InputError("a piece must be at least one byte");
    if (digests_.size() != piece_count(size_, piece_)) {
        throw InputError("a message of " + std::to_string(size_) + " bytes in pieces of " + std::to_string(piece_) +
                         " needs " + std::to_string(piece_count(size_, piece_)) + " piece digests, not " +
                         std::to_string(digests_.size()));
    }
    good_.assign(digests_.size(), 0);
    if (!fd_) memory_.resize(digests_.size());
}

void PieceTracker::start_at(std::uint64_t bytes) {
    std::lock_guard lock(mu_);
    if (!fd_ || received_ != 0 || bytes % piece_ != 0 || bytes > size_) {
        throw InputError("a copy resumes at a piece boundary of a file, before anything arrives");
    }
    for (std::uint64_t k = 0; k < bytes / piece_; ++k) good_[k] = 1;
    received_ = bytes;
    advance_locked();
}

std::vector<std::function<void()>> PieceTracker::take_waiters_locked() {
    cv_.notify_all();
    return std::exchange(waiters_, {});
}

void PieceTracker::advance_locked() {
    while (verified_ < size_ && good_[verified_ / piece_]) verified_ = std::min(size_, verified_ + piece_);
}

std::vector<std::uint64_t> PieceTracker::add(std::span<const std::byte> data) {
    std::vector<std::uint64_t> bad;
    std::vector<std::function<void()>> wake;
    {
        std::lock_guard lock(mu_);
        if (received_ + data.size() > size_) throw Error("more than the message's " + std::to_string(size_) + " bytes");
        while (!data.empty()) {
            const std::uint64_t k = received_ / piece_;
            const std::uint64_t end = std::min(size_, (k + 1) * piece_);
            const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(data.size(), end - received_));
            const auto part = data.first(n);
            if (!current_) current_.emplace();
            current_->update(part);
            if (!fd_) {
                auto& m = memory_[k];
                if (!m) m = std::make_shared<std::vector<std::byte>>();
                m->insert(m->end(), part.begin(), part.end());
            }
            received_ += n;
            data = data.subspan(n);
            if (received_ == end) {
                const net::Digest got = current_->finish();
                current_.reset();
                if (net::same_digest(got, digests_[k])) {
                    good_[k] = 1;
                } else {
                    bad.push_back(k);
                    if (!fd_) memory_[k].reset();
                }
            }
        }
        const std::uint64_t before = verified_;
        advance_locked();
        if (verified_ != before) wake = take_waiters_locked();
    }
    for (auto& w : wake) w();
    return bad;
}

bool PieceTracker::matches(std::uint64_t k, std::span<const std::byte> data) const {
    if (k >= digests_.size() || data.size() != std::min(size_, (k + 1) * piece_) - k * piece_) return false;
    net::Sha256 h;
    h.update(data);
    return net::same_digest(h.finish(), digests_[k]);
}

bool PieceTracker::replace(std::uint64_t k, std::span<const std::byte> data) {
    if (!matches(k, data)) return false;
    std::vector<std::function<void()>> wake;
    {
        std::lock_guard lock(mu_);
        if (good_[k]) return true;
        if (!fd_) memory_[k] = std::make_shared<std::vector<std::byte>>(data.begin(), data.end());
        good_[k] = 1;
        advance_locked();
        wake = take_waiters_locked();
    }
    for (auto& w : wake) w();
    return true;
}

void PieceTracker::fail(const std::string& why) {
    std::vector<std::function<void()>> wake;
    {
        std::lock_guard lock(mu_);
        if (failed_ || verified_ == size_) return;
        failed_ = why;
        wake = take_waiters_locked();
    }
    for (auto& w : wake) w();
}

void PieceTracker::throw_if_failed() const {
    std::lock_guard lock(mu_);
    if (failed_) throw Error(*failed_);
}

std::uint64_t PieceTracker::verified() const {
    std::lock_guard lock(mu_);
    return verified_;
}

std::vector<std::uint64_t> PieceTracker::missing() const {
    std::lock_guard lock(mu_);
    std::vector<std::uint64_t> out;
    for (std::uint64_t k = 0; k < good_.size(); ++k) {
        if (!good_[k] && std::min(size_, (k + 1) * piece_) <= received_) out.push_back(k);
    }
    return out;
}

bool PieceTracker::wait_for(std::uint64_t bytes, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    const bool in = cv_.wait_for(lock, timeout, [&] { return verified_ >= std::min(bytes, size_) || failed_; });
    if (verified_ >= std::min(bytes, size_)) return true;
    if (failed_) throw Error(*failed_);
    return in;
}

bool PieceTracker::ready_at(std::uint64_t offset, std::function<void()> wake) {
    std::lock_guard lock(mu_);
    if (offset < verified_ || offset >= size_ || failed_) return true;
    waiters_.push_back(std::move(wake));
    return false;
}

bool PieceTracker::read_at(std::uint64_t offset, std::span<std::byte> out) const {
    {
        std::lock_guard lock(mu_);
        if (offset + out.size() > verified_) {
            if (failed_) throw Error(*failed_);
            return false;
        }
        if (!fd_) {
            std::size_t done = 0;
            while (done < out.size()) {
                const std::uint64_t at = offset + done, k = at / piece_;
                const auto& m = *memory_[k];
                const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size() - done, (k + 1) * piece_ - at));
                std::memcpy(out.data() + done, m.data() + (at - k * piece_), n);
                done += n;
            }
            return true;
        }
    }
    std::size_t done = 0;
    while (done < out.size()) {
        const ssize_t n = ::pread(*fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw Error(std::string("cannot read back a received piece: ") + (n < 0 ? std::strerror(errno) : "short file"));
        done += static_cast<std::size_t>(n);
    }
    return true;
}

std::shared_ptr<const std::vector<std::byte>> PieceTracker::joined() const {
    std::lock_guard lock(mu_);
    if (fd_ || verified_ != size_) throw Error("the message is not complete in memory");
    auto out = std::make_shared<std::vector<std::byte>>();
    out->reserve(size_);
    for (const auto& m : memory_) out->insert(out->end(), m->begin(), m->end());
    return out;
}

/// A reader of the verified prefix; it never reads past it, and says when it has to wait.
class GrowingReader final : public net::MessageBody::Reader {
public:
    explicit GrowingReader(std::shared_ptr<PieceTracker> t) : t_(std::move(t)) {}
    bool ready(std::function<void()> wake) override { return t_->ready_at(pos_, std::move(wake)); }
    std::size_t read(std::span<std::byte> out) override {
        const std::uint64_t avail = t_->verified() - std::min(t_->verified(), pos_);
        if (avail == 0) {
            if (pos_ >= t_->size()) return 0;
            t_->throw_if_failed();
            throw Error("read past what is verified");
        }
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), avail));
        t_->read_at(pos_, out.first(n));
        pos_ += n;
        return n;
    }
    void skip(std::size_t n) override { pos_ += n; }

private:
    std::shared_ptr<PieceTracker> t_;
    std::uint64_t pos_ = 0;
};

namespace {

class GrowingBody final : public net::MessageBody {
public:
    GrowingBody(std::shared_ptr<PieceTracker> t, net::Digest sha) : t_(std::move(t)), sha_(sha) {}
    [[nodiscard]] std::uint64_t size() const override { return t_->size(); }
    [[nodiscard]] net::Digest sha256() const override { return sha_; }
    [[nodiscard]] std::unique_ptr<Reader> open() const override { return std::make_unique<GrowingReader>(t_); }

private:
    std::shared_ptr<PieceTracker> t_;
    net::Digest sha_;
};

}  // namespace

std::shared_ptr<const net::MessageBody> PieceTracker::body(const net::Digest& sha) {
    return std::make_shared<GrowingBody>(shared_from_this(), sha);
}

net::Digest digest_from_hex(const std::string& hex) {
    net::Digest d{};
    if (hex.size() != 2 * d.size()) throw InputError("job: a sha256 must be 64 hex digits");
    for (std::size_t i = 0; i < d.size(); ++i) {
        unsigned v = 0;
        for (int k = 0; k < 2; ++k) {
            const char c = hex[2 * i + k];
            unsigned x = 0;
            if (c >= '0' && c <= '9') x = c - '0';
            else if (c >= 'a' && c <= 'f') x = c - 'a' + 10;
            else throw InputError("job: a sha256 must be 64 hex digits");
            v = v * 16 + x;
        }
        d[i] = static_cast<std::byte>(v);
    }
    return d;
}

}  // namespace hetcast
