#pragma once
/// File names in JSON. A name is bytes; JSON text is UTF-8. A name that is valid UTF-8
/// travels as a string, any other as {"hex": "..."} (its bytes, two hex digits each), so it
/// lands exactly as it was, never with U+FFFD in place of what it had.
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace hetcast {

/// Whether `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
/// past U+10FFFF).
[[nodiscard]] bool is_utf8(std::string_view s);

[[nodiscard]] nlohmann::json bytes_to_json(const std::string& s);

/// A string, or {"hex": even count of hex digits}. Throws InputError naming `what` otherwise.
[[nodiscard]] std::string bytes_from_json(const nlohmann::json& j, const std::string& what);

}  // namespace hetcast
