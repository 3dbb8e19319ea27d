#pragma once
#include <string_view>

namespace hetcast {

/// Parses a byte count: "1048576", "64KiB", "1MiB", "2GiB", "1kB", "10MB", "1GB", "1.5MiB".
/// Throws InputError on anything else, on a negative count or on more than 2^60 bytes.
[[nodiscard]] double parse_bytes(std::string_view text);

/// Parses a rate in bytes per second: "25e6" (bytes/s), "200Mbit", "1Gbit/s", "500kbit",
/// "25MB/s", "10MiB/s". Throws InputError on anything else or on a rate that is not positive.
[[nodiscard]] double parse_rate(std::string_view text);

}  // namespace hetcast
