#pragma once
/// Who is who on a hetcast cluster: a small certificate authority of the cluster's own,
/// and identities it issues (docs/security.md).
///
/// An identity is a private key, a certificate naming its holder, and the cluster CA's
/// certificate, kept together in one PEM file (mode 0600). The certificate's subject says
/// the holder's name (CN) and role (OU): a `member` (a daemon or an embedded node, which
/// takes part in the jobs it is planned into) or an `operator` (who starts pushes and
/// changes the cluster). Keys are Ed25519; all of it is OpenSSL's libcrypto.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hetcast::net {

enum class Role { member, operator_ };

[[nodiscard]] const char* to_string(Role r);

/// PEM texts: what a TLS endpoint needs to prove itself and to check its peers.
struct Identity {
    std::string key_pem;   ///< the holder's private key
    std::string cert_pem;  ///< the holder's certificate, issued by the CA
    /// The cluster CA's certificate: the only one trusted. During a CA rotation, the old
    /// and the new CA's, one after the other (at most max_trusted_cas).
    std::string ca_pem;
};
inline constexpr std::size_t max_trusted_cas = 4;

/// What a certificate says about its holder.
struct PeerIdentity {
    std::string name;
    Role role = Role::member;
    std::int64_t issued = 0;  ///< notBefore, seconds since the epoch
    std::string serial;       ///< hex
    std::int64_t expires = 0;  ///< notAfter, seconds since the epoch
};

/// The cluster's certificate authority: its key signs identities. It stays with the
/// operator (`hetcast keys init`) and never goes to a member.
class ClusterCa {
public:
    /// A new CA: an Ed25519 key and a self-signed certificate, valid for `days`.
    [[nodiscard]] static ClusterCa create(std::string_view cluster, int days = 3650);
    /// From a CA file's text (key and certificate). `origin` names it in errors.
    /// Throws InputError when it holds no CA key and certificate that belong together.
    [[nodiscard]] static ClusterCa parse(std::string_view pem, std::string_view origin);

    /// A new identity for `name` in `role`, valid from `back` seconds ago (clocks a little
    /// behind) for `days` days. Throws InputError for a name that is empty, longer than 64
    /// bytes, or has bytes outside printable ASCII, or days < 1.
    [[nodiscard]] Identity issue(std::string_view name, Role role, int days = default_days, long back = 60) const;
    static constexpr int default_days = 825;

    /// Key and certificate, PEM, for the CA file.
    [[nodiscard]] std::string pem() const { return key_pem_ + cert_pem_; }
    [[nodiscard]] const std::string& cert_pem() const { return cert_pem_; }

private:
    ClusterCa(std::string key, std::string cert) : key_pem_(std::move(key)), cert_pem_(std::move(cert)) {}
    std::string key_pem_;
    std::string cert_pem_;
};

/// The CA certificates in a CA file or an identity file's text (PEM): for another CA to
/// trust during a rotation. Throws InputError when there is none.
[[nodiscard]] std::string ca_certificates(std::string_view pem, std::string_view origin);

/// The text of an identity file: key, own certificate, CA certificate.
[[nodiscard]] std::string identity_pem(const Identity& id);

/// Reads an identity file's text. Checks that the key and certificate belong together and
/// that the certificate was issued by the CA in the file (one of them, during a rotation). Throws InputError("origin: what").
[[nodiscard]] Identity parse_identity(std::string_view pem, std::string_view origin);

/// What an identity's own certificate says. Throws InputError for one hetcast did not issue.
[[nodiscard]] PeerIdentity describe(const Identity& id);

/// What a certificate (PEM) says about its holder. Throws InputError.
[[nodiscard]] PeerIdentity describe_certificate(std::string_view cert_pem);

/// A revoked identity: every certificate naming `name` issued (notBefore) at or before
/// `since` is refused. One issued later (a member that joins again) is not.
struct Revocation {
    std::string name;
    std::int64_t since = 0;  ///< seconds since the epoch
    /// The operator's signed `leave` order it comes from (runtime/order.hpp, JSON text), so
    /// that every member can check it was the operator who revoked.
    std::string order;
    friend bool operator==(const Revocation& a, const Revocation& b) { return a.name == b.name && a.since == b.since; }
};
[[nodiscard]] bool revokes(const Revocation& r, const PeerIdentity& who);

/// The Ed25519 signature of `data` with the identity's key, in hex.
[[nodiscard]] std::string sign(const Identity& id, std::string_view data);

/// Checks that `sig_hex` signs `data` with the key of `cert_pem`, a certificate `ca_pem`
/// (or one of the CAs in it) issued and whose validity covers `now`; returns what the certificate says. Throws
/// InputError saying which check failed.
[[nodiscard]] PeerIdentity verify_signature(std::string_view cert_pem, std::string_view ca_pem, std::string_view data,
                                            std::string_view sig_hex, std::int64_t now);

/// Checks a member or operator name: what issue() accepts. Throws InputError.
void check_identity_name(std::string_view name);

}  // namespace hetcast::net
