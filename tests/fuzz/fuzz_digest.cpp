// The SHA-256 digests of plans and piece lists (runtime/job.hpp digest_from_hex): 64
// lowercase hex digits or InputError; an accepted digest prints back as the same text.
#include "fuzz.hpp"
#include "hetcast/net/digest.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/pieces.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string hex(fuzz::text(data, size));
    hetcast::net::Digest d{};
    if (fuzz::accepts([&] { d = hetcast::digest_from_hex(hex); })) {
        if (hetcast::net::to_hex(d) != hex) fuzz::finding("a digest does not print back as its text");
    }
    // piece_count on a size and piece size from the input, in the ranges a plan allows
    // (sizes are bounded by max_message, far below 2^62, before piece_count sees them).
    if (size >= 16) {
        std::uint64_t a = 0, b = 0;
        for (int i = 0; i < 8; ++i) a = a << 8 | data[i], b = b << 8 | data[8 + i];
        a >>= 2;
        if (b >= hetcast::min_piece && b <= hetcast::max_piece) {
            if (hetcast::piece_count(a, b) != a / b + (a % b != 0)) fuzz::finding("piece_count is not ceil(size / piece)");
        }
    }
    return 0;
}
