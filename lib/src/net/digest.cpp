#include "hetcast/net/digest.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "hetcast/error.hpp"

namespace hetcast::net {

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
