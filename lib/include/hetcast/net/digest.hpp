#pragma once
/// SHA-256 of messages and pieces, and comparing digests (OpenSSL libcrypto).
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace hetcast::net {

using Digest = std::array<std::byte, 32>;

/// Constant-time comparison of two digests.
[[nodiscard]] bool same_digest(std::span<const std::byte> a, std::span<const std::byte> b);

/// Streaming SHA-256, for message checksums.
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(std::span<const std::byte> data);
    [[nodiscard]] Digest finish();

private:
    void* ctx_;  // EVP_MD_CTX*, kept opaque so no OpenSSL header leaks into ours
};

[[nodiscard]] std::string to_hex(std::span<const std::byte> bytes);

}  // namespace hetcast::net
