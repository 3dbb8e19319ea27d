#pragma once
/// Mutual challenge–response over a shared cluster secret (HMAC-SHA256, OpenSSL libcrypto).
///
///   server → client  hello:   server nonce (32 bytes) ‖ server name
///   client → server  auth:    client proof (32) ‖ client nonce (32) ‖ client name
///   server → client  auth_ok: server proof (32)         — or error, then close
///
/// client proof = HMAC(secret, "hetcast-v1 client" ‖ server nonce ‖ client nonce)
/// server proof = HMAC(secret, "hetcast-v1 server" ‖ client nonce ‖ server nonce)
/// The role labels keep one side's proof from being replayed as the other's.
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace hetcast::net {

using Nonce = std::array<std::byte, 32>;
using Digest = std::array<std::byte, 32>;

enum class Role { client, server };

/// 32 bytes from the system's cryptographic generator. Throws hetcast::Error on failure.
[[nodiscard]] Nonce make_nonce();

/// HMAC-SHA256(key, data).
[[nodiscard]] Digest hmac_sha256(std::string_view key, std::string_view data);

/// The proof the given role sends: HMAC-SHA256 over its label and the two nonces, the
/// peer's nonce first.
[[nodiscard]] Digest auth_proof(std::string_view secret, Role role, const Nonce& peer_nonce, const Nonce& own_nonce);

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
