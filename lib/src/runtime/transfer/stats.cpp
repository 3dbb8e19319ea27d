#include "hetcast/runtime/stats.hpp"

namespace hetcast {
namespace {

class CountedReader final : public net::MessageBody::Reader {
public:
    CountedReader(std::unique_ptr<Reader> inner, PeerStats& stats, bool relayed)
        : inner_(std::move(inner)), stats_(stats), relayed_(relayed) {}
    std::size_t read(std::span<std::byte> out) override {
        const std::size_t n = inner_->read(out);
        stats_.bytes_sent.fetch_add(n, std::memory_order_relaxed);
        if (relayed_) stats_.bytes_relayed.fetch_add(n, std::memory_order_relaxed);
        return n;
    }
    void skip(std::size_t n) override { inner_->skip(n); }
    bool ready(std::function<void()> wake) override { return inner_->ready(std::move(wake)); }

private:
    std::unique_ptr<Reader> inner_;
    PeerStats& stats_;
    bool relayed_;
};

class CountedBody final : public net::MessageBody {
public:
    CountedBody(std::shared_ptr<const MessageBody> body, PeerStats& stats, bool relayed)
        : body_(std::move(body)), stats_(stats), relayed_(relayed) {}
    [[nodiscard]] std::uint64_t size() const override { return body_->size(); }
    [[nodiscard]] net::Digest sha256() const override { return body_->sha256(); }
    [[nodiscard]] std::unique_ptr<Reader> open() const override {
        return std::make_unique<CountedReader>(body_->open(), stats_, relayed_);
    }

private:
    std::shared_ptr<const MessageBody> body_;
    PeerStats& stats_;
    bool relayed_;
};

}  // namespace

std::shared_ptr<const net::MessageBody> counted(std::shared_ptr<const net::MessageBody> body, PeerStats& stats,
                                                bool relayed) {
    return std::make_shared<CountedBody>(std::move(body), stats, relayed);
}

}  // namespace hetcast
