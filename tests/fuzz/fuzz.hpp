#pragma once
// Shared by the libFuzzer targets: hetcast::Error (InputError included) is how a decoder
// rejects bad input, so it is caught; any other exception escapes LLVMFuzzerTestOneInput
// and aborts (a finding), as do crashes and sanitizer reports. `finding` aborts with a
// message for a broken invariant the target checks itself (a round trip, a bound).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hetcast/error.hpp"

namespace fuzz {

[[noreturn]] inline void finding(const std::string& what) {
    std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

/// Runs `f`; a hetcast::Error is a normal rejection (returns false).
template <class F>
bool accepts(F&& f) {
    try {
        f();
        return true;
    } catch (const hetcast::Error&) {
        return false;
    }
}

/// The payload as the daemon parses it: JSON or nothing (a parse error is the caller's
/// own rejection, before any hetcast decoder runs).
inline bool parse_json(const std::uint8_t* data, std::size_t size, nlohmann::json& out) {
    out = nlohmann::json::parse(text(data, size), nullptr, false);
    return !out.is_discarded();
}

}  // namespace fuzz
