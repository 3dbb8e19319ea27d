#include "hetcast/net/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "hetcast/error.hpp"

namespace hetcast::net {

Nonce make_nonce() {
    Nonce n;
    if (RAND_bytes(reinterpret_cast<unsigned char*>(n.data()), static_cast<int>(n.size())) != 1) {
        throw Error("cannot draw random bytes for a nonce");
    }
    return n;
}

Digest hmac_sha256(std::string_view key, std::string_view data) {
    Digest out;
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
              reinterpret_cast<const unsigned char*>(data.data()), data.size(),
              reinterpret_cast<unsigned char*>(out.data()), &len) ||
        len != out.size()) {
        throw Error("HMAC-SHA256 failed");
    }
    return out;
}

Digest auth_proof(std::string_view secret, Role role, const Nonce& peer_nonce, const Nonce& own_nonce) {
    std::string msg(role == Role::client ? "hetcast-v1 client" : "hetcast-v1 server");
    msg.append(reinterpret_cast<const char*>(peer_nonce.data()), peer_nonce.size());
    msg.append(reinterpret_cast<const char*>(own_nonce.data()), own_nonce.size());
    return hmac_sha256(secret, msg);
}

bool same_digest(std::span<const std::byte> a, std::span<const std::byte> b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1) {
        EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_));
        throw Error("cannot initialise SHA-256");
    }
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::span<const std::byte> data) {
    if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size()) != 1) {
        throw Error("SHA-256 update failed");
    }
}

Digest Sha256::finish() {
    Digest out;
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), reinterpret_cast<unsigned char*>(out.data()), &len) != 1 ||
        len != out.size()) {
        throw Error("SHA-256 finish failed");
    }
    return out;
}

std::string to_hex(std::span<const std::byte> bytes) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    s.reserve(bytes.size() * 2);
    for (std::byte b : bytes) {
        s.push_back(digits[std::to_integer<unsigned>(b) >> 4]);
        s.push_back(digits[std::to_integer<unsigned>(b) & 15]);
    }
    return s;
}

}  // namespace hetcast::net
