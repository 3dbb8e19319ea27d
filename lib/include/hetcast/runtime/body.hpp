#pragma once
/// Message bodies: what a job disseminates. A file is streamed from disk in chunks; a
/// buffer is shared, never copied per send.
#include <filesystem>
#include <memory>
#include <vector>

#include "hetcast/net/transport.hpp"

namespace hetcast {

/// An in-memory message. The bytes are shared read-only with every send in flight.
class BufferBody final : public net::MessageBody {
public:
    explicit BufferBody(std::shared_ptr<const std::vector<std::byte>> bytes);
    /// When the checksum is already known (a verified received copy).
    BufferBody(std::shared_ptr<const std::vector<std::byte>> bytes, net::Digest sha);
    [[nodiscard]] std::uint64_t size() const override { return bytes_->size(); }
    [[nodiscard]] net::Digest sha256() const override { return sha_; }
    [[nodiscard]] std::unique_ptr<Reader> open() const override;
    [[nodiscard]] const std::shared_ptr<const std::vector<std::byte>>& bytes() const { return bytes_; }

private:
    std::shared_ptr<const std::vector<std::byte>> bytes_;
    net::Digest sha_;
};

/// A file on disk. Size and SHA-256 are taken once, when constructed (one read of the
/// file); every open() reads it again from the start. Throws hetcast::InputError when the
/// file is missing or unreadable.
class FileBody final : public net::MessageBody {
public:
    explicit FileBody(std::filesystem::path path);
    [[nodiscard]] std::uint64_t size() const override { return size_; }
    [[nodiscard]] net::Digest sha256() const override { return sha_; }
    [[nodiscard]] std::unique_ptr<Reader> open() const override;
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
    std::uint64_t size_ = 0;
    net::Digest sha_{};
};

}  // namespace hetcast
