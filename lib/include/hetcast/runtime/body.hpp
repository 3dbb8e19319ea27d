#pragma once
/// Message bodies: what a job disseminates. A file is streamed from disk in chunks; a
/// buffer is shared, never copied per send.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
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
    /// Opens `path` once (every reader shares that descriptor); with `serve_roots`, the
    /// opened file must lie under one of them (files.hpp served()). Throws InputError.
    explicit FileBody(std::filesystem::path path, const std::vector<std::filesystem::path>* serve_roots = nullptr);
    [[nodiscard]] std::uint64_t size() const override { return size_; }
    [[nodiscard]] net::Digest sha256() const override { return sha_; }
    [[nodiscard]] std::unique_ptr<Reader> open() const override;
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }
    /// The file's permission bits (rwx of owner, group, others).
    [[nodiscard]] unsigned mode() const { return mode_; }
    /// The file's modification time when opened, nanoseconds since the epoch.
    [[nodiscard]] std::int64_t mtime() const { return mtime_; }

private:
    std::filesystem::path path_;
    std::shared_ptr<const int> fd_;
    std::uint64_t size_ = 0;
    unsigned mode_ = 0644;
    std::int64_t mtime_ = 0;
    net::Digest sha_{};
};

/// A generated test payload ("gen:SIZE:SEED"): SIZE bytes that are a pure function of
/// (seed, offset), made as they are read, never held whole. The stream is splitmix64
/// seeded with `seed`, each output word little-endian: word k (bytes 8k..8k+7) is
/// mix(seed + (k + 1) * 0x9E3779B97F4A7C15). The SHA-256 is computed on the first
/// sha256() call (one pass over the bytes, thread-safe) and kept.
class GeneratedBody final : public net::MessageBody {
public:
    GeneratedBody(std::uint64_t size, std::uint64_t seed) : size_(size), seed_(seed) {}
    [[nodiscard]] std::uint64_t size() const override { return size_; }
    [[nodiscard]] net::Digest sha256() const override;
    [[nodiscard]] std::unique_ptr<Reader> open() const override;
    [[nodiscard]] std::uint64_t seed() const { return seed_; }
    /// The bytes [offset, offset + out.size()) of the stream of `seed` (unbounded).
    static void generate(std::uint64_t seed, std::uint64_t offset, std::span<std::byte> out);

private:
    std::uint64_t size_;
    std::uint64_t seed_;
    mutable std::once_flag sha_once_;
    mutable net::Digest sha_{};
};

/// A GeneratedBody of `size` bytes from `seed`.
[[nodiscard]] std::shared_ptr<const net::MessageBody> make_generated_body(std::uint64_t size, std::uint64_t seed);

/// `inner`, whose copies land with permission bits `mode` (a file that arrives from elsewhere:
/// an operator's upload).
[[nodiscard]] std::shared_ptr<const net::MessageBody> with_mode(std::shared_ptr<const net::MessageBody> inner,
                                                                unsigned mode);

/// The permission bits a copy of `body` lands with: a file's own (or with_mode()'s), else 0644.
[[nodiscard]] unsigned mode_of(const net::MessageBody& body);

/// The bytes of `body` from `offset` on, for a receiver that resumes with the rest; its
/// checksum is still the whole message's (what data_end carries). Readers wait for the
/// inner body as it does (a relay's growing copy) and read past the prefix on the way.
[[nodiscard]] std::shared_ptr<const net::MessageBody> suffix_of(std::shared_ptr<const net::MessageBody> body,
                                                                std::uint64_t offset);

}  // namespace hetcast
