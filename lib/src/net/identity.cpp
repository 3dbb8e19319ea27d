#include "hetcast/net/identity.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/net/digest.hpp"
#include "identity_x509.hpp"

namespace hetcast::net {
namespace {

template <auto Free>
struct Deleter {
    template <class T>
    void operator()(T* p) const { Free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using Bignum = std::unique_ptr<BIGNUM, Deleter<BN_free>>;

/// The reason OpenSSL gave last, or `fallback`.
std::string ssl_reason(const char* fallback) {
    const unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (e == 0) return fallback;
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    return buf;
}

Bio read_bio(std::string_view text) {
    Bio b(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
    if (!b) throw Error("out of memory");
    return b;
}

std::string drain(BIO* b) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(b, &data);
    return std::string(data, static_cast<std::size_t>(n));
}

std::string key_pem(EVP_PKEY* k) {
    Bio b(BIO_new(BIO_s_mem()));
    if (!b || PEM_write_bio_PrivateKey(b.get(), k, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
        throw Error("cannot write a key: " + ssl_reason("PEM_write_bio_PrivateKey failed"));
    }
    return drain(b.get());
}

std::string pem_of(X509* c) {
    Bio b(BIO_new(BIO_s_mem()));
    if (!b || PEM_write_bio_X509(b.get(), c) != 1) throw Error("cannot write a certificate: " + ssl_reason("failed"));
    return drain(b.get());
}

Key new_key() {
    Key k(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
    if (!k) throw Error("cannot make an Ed25519 key: " + ssl_reason("EVP_PKEY_Q_keygen failed"));
    return k;
}

/// Every PEM block of the text, in order: its type ("PRIVATE KEY", "CERTIFICATE") and the
/// block itself (re-encoded), so keys and certificates can be parsed in any order.
struct Block {
    std::string type;
    std::string pem;
};
std::vector<Block> blocks(std::string_view text, std::string_view origin) {
    std::vector<Block> out;
    Bio in = read_bio(text);
    while (true) {
        char* name = nullptr;
        char* header = nullptr;
        unsigned char* data = nullptr;
        long len = 0;
        if (PEM_read_bio(in.get(), &name, &header, &data, &len) != 1) {
            const unsigned long e = ERR_peek_last_error();
            ERR_clear_error();
            if (ERR_GET_REASON(e) == PEM_R_NO_START_LINE) break;
            throw InputError(std::string(origin) + ": a PEM block is damaged");
        }
        Bio o(BIO_new(BIO_s_mem()));
        PEM_write_bio(o.get(), name, header, data, len);
        out.push_back({name, drain(o.get())});
        OPENSSL_free(name);
        OPENSSL_free(header);
        OPENSSL_free(data);
        if (out.size() > 16) throw InputError(std::string(origin) + ": too many PEM blocks");
    }
    return out;
}

Key parse_key(const std::string& pem, std::string_view origin) {
    Bio b = read_bio(pem);
    Key k(PEM_read_bio_PrivateKey(b.get(), nullptr, nullptr, nullptr));
    if (!k) throw InputError(std::string(origin) + ": the private key cannot be read (" + ssl_reason("bad key") + ")");
    return k;
}

Cert parse_cert(std::string_view pem, std::string_view origin) {
    Bio b = read_bio(pem);
    Cert c(PEM_read_bio_X509(b.get(), nullptr, nullptr, nullptr));
    if (!c) throw InputError(std::string(origin) + ": a certificate cannot be read (" + ssl_reason("bad certificate") + ")");
    return c;
}

std::string name_entry(X509_NAME* n, int nid) {
    const int i = X509_NAME_get_index_by_NID(n, nid, -1);
    if (i < 0) return {};
    const ASN1_STRING* s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(n, i));
    return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), static_cast<std::size_t>(ASN1_STRING_length(s)));
}

void add_extension(X509* issuer, X509* subject, int nid, const char* value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, subject, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    if (!ext) throw Error(std::string("cannot add a certificate extension: ") + ssl_reason(value));
    X509_add_ext(subject, ext, -1);
    X509_EXTENSION_free(ext);
}

/// A certificate for `key` named `subject`, signed by `signer` (itself when `issuer` is null).
Cert make_cert(EVP_PKEY* key, const std::string& cn, const char* ou, X509* issuer, EVP_PKEY* signer, int days, bool ca,
               long back = 60) {
    Cert c(X509_new());
    if (!c) throw Error("out of memory");
    X509_set_version(c.get(), 2);
    Bignum serial(BN_new());
    if (!serial || BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
        !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(c.get()))) {
        throw Error("cannot draw a serial number: " + ssl_reason("BN_rand failed"));
    }
    // A minute back, for clocks a little behind the issuer's; revocation (a member's
    // `revoked` entry) compares against this time.
    X509_gmtime_adj(X509_getm_notBefore(c.get()), -back);
    X509_gmtime_adj(X509_getm_notAfter(c.get()), static_cast<long>(days) * 86400 - back + 60);
    X509_set_pubkey(c.get(), key);
    X509_NAME* n = X509_get_subject_name(c.get());
    const auto add = [n](const char* field, const std::string& v) {
        if (X509_NAME_add_entry_by_txt(n, field, MBSTRING_ASC, reinterpret_cast<const unsigned char*>(v.c_str()), -1, -1,
                                       0) != 1) {
            throw InputError(std::string("cannot put '") + v + "' in a certificate's " + field + ": " + ssl_reason("refused"));
        }
    };
    add("O", "hetcast");
    add("OU", ou);
    add("CN", cn);
    X509_set_issuer_name(c.get(), issuer ? X509_get_subject_name(issuer) : n);
    X509* iss = issuer ? issuer : c.get();
    add_extension(iss, c.get(), NID_basic_constraints, ca ? "critical,CA:TRUE,pathlen:0" : "critical,CA:FALSE");
    add_extension(iss, c.get(), NID_key_usage, ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
    if (!ca) add_extension(iss, c.get(), NID_ext_key_usage, "serverAuth,clientAuth");
    add_extension(iss, c.get(), NID_subject_key_identifier, "hash");
    if (X509_sign(c.get(), signer, nullptr) <= 0) throw Error("cannot sign a certificate: " + ssl_reason("X509_sign failed"));
    return c;
}

bool issued_by(X509* cert, X509* ca) {
    Key ca_key(X509_get_pubkey(ca));
    return ca_key && X509_check_issued(ca, cert) == X509_V_OK && X509_verify(cert, ca_key.get()) == 1;
}

/// Whether one of the CA certificates in `ca_pem` (one, or several during a CA rotation)
/// issued `cert`.
bool issued_by_any(X509* cert, std::string_view ca_pem) {
    for (const auto& b : blocks(ca_pem, "the CA")) {
        if (b.type != "CERTIFICATE") continue;
        Cert ca = parse_cert(b.pem, "the CA");
        if (issued_by(cert, ca.get())) return true;
    }
    return false;
}

PeerIdentity describe_cert(X509* c, std::string_view origin) {
    X509_NAME* n = X509_get_subject_name(c);
    PeerIdentity p;
    p.name = name_entry(n, NID_commonName);
    const std::string ou = name_entry(n, NID_organizationalUnitName);
    if (name_entry(n, NID_organizationName) != "hetcast" || p.name.empty() || (ou != "member" && ou != "operator")) {
        throw InputError(std::string(origin) + ": not a hetcast member or operator certificate");
    }
    p.role = ou == "operator" ? Role::operator_ : Role::member;
    std::tm tm{};
    if (ASN1_TIME_to_tm(X509_get0_notBefore(c), &tm) != 1) throw InputError(std::string(origin) + ": a bad notBefore");
    p.issued = static_cast<std::int64_t>(timegm(&tm));
    tm = {};
    if (ASN1_TIME_to_tm(X509_get0_notAfter(c), &tm) != 1) throw InputError(std::string(origin) + ": a bad notAfter");
    p.expires = static_cast<std::int64_t>(timegm(&tm));
    Bignum bn(ASN1_INTEGER_to_BN(X509_get0_serialNumber(c), nullptr));
    char* hex = bn ? BN_bn2hex(bn.get()) : nullptr;
    if (hex) p.serial = hex;
    OPENSSL_free(hex);
    return p;
}

Digest digest_of(std::initializer_list<std::string_view> parts) {
    Sha256 h;
    for (const auto p : parts) {
        h.update(std::as_bytes(std::span(p.data(), p.size())));
        h.update(std::as_bytes(std::span("\n", 1)));
    }
    return h.finish();
}

/// The last identity's key, parsed: OpenSSL 3 takes milliseconds to decode a PEM key, and
/// a coordinator signs a plan per relayed member (identified by the PEM's digest, so no
/// copy of the private key is kept besides the parsed one).
std::shared_ptr<EVP_PKEY> signing_key(const std::string& pem) {
    static std::mutex mu;
    static Digest which{};
    static std::shared_ptr<EVP_PKEY> key;
    const Digest d = digest_of({pem});
    std::lock_guard lock(mu);
    if (!key || !same_digest(d, which)) {
        key = std::shared_ptr<EVP_PKEY>(parse_key(pem, "the identity").release(), EVP_PKEY_free);
        which = d;
    }
    return key;
}

/// A signer's certificate checked against the CA once: its identity, its public key and the
/// certificate (for the validity, checked at each use). A few are kept: the coordinators
/// whose relayed plans arrive, the operators whose orders do.
struct Checked {
    Digest which{};
    Cert cert;
    Key key;
    PeerIdentity who;
};

std::shared_ptr<const Checked> checked_signer(std::string_view cert_pem, std::string_view ca_pem) {
    static std::mutex mu;
    static std::deque<std::shared_ptr<const Checked>> cache;
    const Digest d = digest_of({cert_pem, ca_pem});
    {
        std::lock_guard lock(mu);
        for (const auto& c : cache) {
            if (same_digest(c->which, d)) return c;
        }
    }
    auto c = std::make_shared<Checked>();
    c->which = d;
    c->cert = parse_cert(cert_pem, "the signer's certificate");
    if (!issued_by_any(c->cert.get(), ca_pem)) {
        ERR_clear_error();
        throw InputError("the signer's certificate was not issued by this cluster's CA");
    }
    c->key = Key(X509_get_pubkey(c->cert.get()));
    if (!c->key) throw InputError("the signer's certificate has no key");
    c->who = describe_cert(c->cert.get(), "the signer's certificate");
    std::lock_guard lock(mu);
    cache.push_front(c);
    if (cache.size() > 8) cache.pop_back();
    return c;
}

}  // namespace

PeerIdentity describe_x509(X509* cert, std::string_view origin) { return describe_cert(cert, origin); }

std::string sign(const Identity& id, std::string_view data) {
    const std::shared_ptr<EVP_PKEY> k = signing_key(id.key_pem);
    std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX_free>> ctx(EVP_MD_CTX_new());
    std::size_t len = 0;
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, k.get()) != 1 ||
        EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1) {
        throw Error("cannot sign: " + ssl_reason("EVP_DigestSign failed"));
    }
    std::vector<unsigned char> sig(len);
    if (EVP_DigestSign(ctx.get(), sig.data(), &len, reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1) {
        throw Error("cannot sign: " + ssl_reason("EVP_DigestSign failed"));
    }
    return to_hex(std::as_bytes(std::span(sig.data(), len)));
}

PeerIdentity verify_signature(std::string_view cert_pem, std::string_view ca_pem, std::string_view data,
                              std::string_view sig_hex, std::int64_t now) {
    const auto c = checked_signer(cert_pem, ca_pem);
    auto t = static_cast<time_t>(now);
    if (X509_cmp_time(X509_get0_notBefore(c->cert.get()), &t) > 0 || X509_cmp_time(X509_get0_notAfter(c->cert.get()), &t) < 0) {
        throw InputError("the signer's certificate is not valid now");
    }
    if (sig_hex.size() % 2 != 0 || sig_hex.size() > 1024) throw InputError("a malformed signature");
    std::vector<unsigned char> sig;
    for (std::size_t i = 0; i < sig_hex.size(); i += 2) {
        const auto nib = [](char ch) -> int {
            if (ch >= '0' && ch <= '9') return ch - '0';
            if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
            return -1;
        };
        const int hi = nib(sig_hex[i]), lo = nib(sig_hex[i + 1]);
        if (hi < 0 || lo < 0) throw InputError("a malformed signature");
        sig.push_back(static_cast<unsigned char>(hi << 4 | lo));
    }
    std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX_free>> ctx(EVP_MD_CTX_new());
    if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, c->key.get()) != 1 ||
        EVP_DigestVerify(ctx.get(), sig.data(), sig.size(), reinterpret_cast<const unsigned char*>(data.data()),
                         data.size()) != 1) {
        ERR_clear_error();
        throw InputError("the signature does not match");
    }
    return c->who;
}

bool revokes(const Revocation& r, const PeerIdentity& who) { return r.name == who.name && who.issued <= r.since; }

const char* to_string(Role r) { return r == Role::operator_ ? "operator" : "member"; }

void check_identity_name(std::string_view name) {
    if (name.empty()) throw InputError("an identity needs a name");
    if (name.size() > 64) throw InputError("'" + std::string(name.substr(0, 64)) + "…' is longer than 64 bytes (a certificate's CN)");
    for (const char ch : name) {
        if (ch < 0x21 || ch > 0x7e) throw InputError("'" + std::string(name) + "' has a byte outside printable ASCII");
    }
}

ClusterCa ClusterCa::create(std::string_view cluster, int days) {
    check_identity_name(cluster);
    Key k = new_key();
    Cert c = make_cert(k.get(), std::string(cluster), "ca", nullptr, k.get(), days, true);
    return ClusterCa(key_pem(k.get()), pem_of(c.get()));
}

ClusterCa ClusterCa::parse(std::string_view pem, std::string_view origin) {
    std::string key, cert;
    for (const auto& b : blocks(pem, origin)) {
        if (b.type == "PRIVATE KEY" && key.empty()) key = b.pem;
        if (b.type == "CERTIFICATE" && cert.empty()) cert = b.pem;
    }
    if (key.empty() || cert.empty()) throw InputError(std::string(origin) + ": not a CA file (a key and a certificate)");
    Key k = parse_key(key, origin);
    Cert c = parse_cert(cert, origin);
    if (X509_check_private_key(c.get(), k.get()) != 1 || X509_check_ca(c.get()) == 0) {
        ERR_clear_error();
        throw InputError(std::string(origin) + ": the key and the CA certificate do not belong together");
    }
    return ClusterCa(key, cert);
}

Identity ClusterCa::issue(std::string_view name, Role role, int days, long back) const {
    check_identity_name(name);
    if (days < 1) throw InputError("an identity is valid for a day at least");
    Key ca_key = parse_key(key_pem_, "the CA");
    Cert ca = parse_cert(cert_pem_, "the CA");
    Key k = new_key();
    Cert c = make_cert(k.get(), std::string(name), to_string(role), ca.get(), ca_key.get(), days, false, back);
    return Identity{key_pem(k.get()), pem_of(c.get()), cert_pem_};
}

std::string ca_certificates(std::string_view pem, std::string_view origin) {
    std::string out;
    for (const auto& b : blocks(pem, origin)) {
        if (b.type != "CERTIFICATE") continue;
        Cert c = parse_cert(b.pem, origin);
        if (X509_check_ca(c.get()) != 0) out += b.pem;
    }
    ERR_clear_error();
    if (out.empty()) throw InputError(std::string(origin) + ": no CA certificate in it");
    return out;
}

std::string identity_pem(const Identity& id) { return id.key_pem + id.cert_pem + id.ca_pem; }

Identity parse_identity(std::string_view pem, std::string_view origin) {
    std::string key;
    std::vector<std::string> certs;
    for (const auto& b : blocks(pem, origin)) {
        if (b.type == "PRIVATE KEY") {
            if (!key.empty()) throw InputError(std::string(origin) + ": more than one private key");
            key = b.pem;
        } else if (b.type == "CERTIFICATE") {
            certs.push_back(b.pem);
        } else {
            throw InputError(std::string(origin) + ": an unexpected '" + b.type.substr(0, 40) + "' block");
        }
    }
    if (key.empty()) throw InputError(std::string(origin) + ": no private key (an identity file holds a key, its certificate and the CA's)");
    // Its own, and the CA's; during a CA rotation, the old and the new CA's (docs/security.md).
    if (certs.size() < 2 || certs.size() > 1 + max_trusted_cas) {
        throw InputError(std::string(origin) + ": expected 2 certificates (its own and the CA's; " +
                         std::to_string(1 + max_trusted_cas) + " at most during a CA rotation), found " +
                         std::to_string(certs.size()));
    }
    Key k = parse_key(key, origin);
    Identity id;
    id.key_pem = key;
    std::vector<std::string> cas;
    for (const auto& pem_text : certs) {
        Cert c = parse_cert(pem_text, origin);
        if (X509_check_private_key(c.get(), k.get()) == 1 && id.cert_pem.empty()) {
            id.cert_pem = pem_text;
        } else {
            cas.push_back(pem_text);
        }
        ERR_clear_error();
    }
    if (id.cert_pem.empty() || cas.empty()) {
        throw InputError(std::string(origin) + ": the private key belongs to neither certificate, or to both");
    }
    for (const auto& pem_text : cas) {
        Cert c = parse_cert(pem_text, origin);
        if (X509_check_ca(c.get()) == 0) throw InputError(std::string(origin) + ": a certificate that is no CA's and not its own");
        id.ca_pem += pem_text;
    }
    Cert own = parse_cert(id.cert_pem, origin);
    if (!issued_by_any(own.get(), id.ca_pem)) throw InputError(std::string(origin) + ": its certificate was not issued by the CA in it");
    (void)describe_cert(own.get(), origin);
    return id;
}

PeerIdentity describe(const Identity& id) { return describe_certificate(id.cert_pem); }

PeerIdentity describe_certificate(std::string_view pem) {
    Cert c = parse_cert(pem, "a certificate");
    return describe_cert(c.get(), "a certificate");
}

}  // namespace hetcast::net
