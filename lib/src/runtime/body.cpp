#include "hetcast/runtime/body.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hetcast/error.hpp"
#include "hetcast/runtime/files.hpp"

namespace hetcast {
namespace {

class SpanReader final : public net::MessageBody::Reader {
public:
    explicit SpanReader(std::shared_ptr<const std::vector<std::byte>> b) : bytes_(std::move(b)) {}
    std::size_t read(std::span<std::byte> out) override {
        const std::size_t n = std::min(out.size(), bytes_->size() - pos_);
        std::memcpy(out.data(), bytes_->data() + pos_, n);
        pos_ += n;
        return n;
    }

private:
    std::shared_ptr<const std::vector<std::byte>> bytes_;
    std::size_t pos_ = 0;
};

}  // namespace

BufferBody::BufferBody(std::shared_ptr<const std::vector<std::byte>> bytes) : bytes_(std::move(bytes)) {
    net::Sha256 h;
    h.update(*bytes_);
    sha_ = h.finish();
}

BufferBody::BufferBody(std::shared_ptr<const std::vector<std::byte>> bytes, net::Digest sha)
    : bytes_(std::move(bytes)), sha_(sha) {}

std::unique_ptr<net::MessageBody::Reader> BufferBody::open() const { return std::make_unique<SpanReader>(bytes_); }

FileBody::FileBody(std::filesystem::path path) : path_(std::move(path)) {
    std::error_code ec;
    const auto status = std::filesystem::status(path_, ec);
    if (ec || !std::filesystem::exists(status)) throw InputError(path_.string() + ": no such file");
    if (!std::filesystem::is_regular_file(status)) throw InputError(path_.string() + ": not a regular file");
    size_ = std::filesystem::file_size(path_, ec);
    if (ec) throw InputError(path_.string() + ": " + ec.message());
    try {
        sha_ = file_sha256(path_);
    } catch (const Error& e) {
        throw InputError(e.what());
    }
}

std::unique_ptr<net::MessageBody::Reader> FileBody::open() const {
    return std::make_unique<DescriptorReader>(open_for_reading(path_), size_, path_);
}

}  // namespace hetcast
