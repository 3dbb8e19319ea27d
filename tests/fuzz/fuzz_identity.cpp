// Identity files and revocation lists (net/identity.hpp parse_identity, runtime/config.hpp
// parse_revoked): what a daemon reads at start and what members send each other. An
// accepted identity must describe itself and write back to text that reads the same.
#include "fuzz.hpp"
#include "hetcast/net/identity.hpp"
#include "hetcast/runtime/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(fuzz::text(data, size));
    hetcast::net::Identity id;
    if (fuzz::accepts([&] { id = hetcast::net::parse_identity(text, "fuzz"); })) {
        const auto who = hetcast::net::describe(id);
        if (who.name.empty()) fuzz::finding("an accepted identity names nobody");
        const auto again = hetcast::net::parse_identity(hetcast::net::identity_pem(id), "fuzz");
        if (again.cert_pem != id.cert_pem || again.key_pem != id.key_pem) fuzz::finding("an identity does not read back");
    }
    fuzz::accepts([&] { (void)hetcast::parse_revoked(text, "fuzz"); });
    return 0;
}
