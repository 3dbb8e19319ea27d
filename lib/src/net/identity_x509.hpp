#pragma once
// What a certificate OpenSSL already parsed says about its holder (a TLS peer's), without a
// round trip through PEM: for the TCP backend, which holds the X509 of every handshake.
#include <openssl/x509.h>

#include <string_view>

#include "hetcast/net/identity.hpp"

namespace hetcast::net {

/// As describe_certificate, of `cert`. Throws InputError naming `origin`.
[[nodiscard]] PeerIdentity describe_x509(X509* cert, std::string_view origin);

}  // namespace hetcast::net
