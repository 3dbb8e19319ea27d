#include "hetcast/runtime/byte_text.hpp"

#include <nlohmann/json.hpp>

#include "hetcast/error.hpp"

namespace hetcast {

bool is_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;
        unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range (Table 3-7 of Unicode)
        if (c < 0x80) {
            ++i;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            n = 1;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2;
            if (c == 0xe0) lo = 0xa0;
            if (c == 0xed) hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3;
            if (c == 0xf0) lo = 0x90;
            if (c == 0xf4) hi = 0x8f;
        } else {
            return false;
        }
        if (i + n >= s.size()) return false;  // cut short
        for (std::size_t k = 1; k <= n; ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) return false;
        }
        i += n + 1;
    }
    return true;
}

nlohmann::json bytes_to_json(const std::string& s) {
    if (is_utf8(s)) return s;
    static constexpr char digits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(2 * s.size());
    for (const char ch : s) {
        const auto b = static_cast<unsigned char>(ch);
        hex += digits[b >> 4];
        hex += digits[b & 15];
    }
    return {{"hex", hex}};
}

std::string bytes_from_json(const nlohmann::json& j, const std::string& what) {
    if (j.is_string()) return j.get<std::string>();
    const auto bad = [&] { return InputError(what + " must be a string or {\"hex\": ...}"); };
    if (!j.is_object() || j.size() != 1 || !j.contains("hex") || !j["hex"].is_string()) throw bad();
    const auto& hex = j["hex"].get_ref<const std::string&>();
    if (hex.size() % 2 != 0) throw bad();
    const auto value = [&](char ch) -> int {
        if (ch >= '0' && ch <= '9') return ch - '0';
        if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
        if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
        throw bad();
    };
    std::string out;
    out.reserve(hex.size() / 2);
    for (std::size_t i = 0; i < hex.size(); i += 2) out += static_cast<char>(value(hex[i]) * 16 + value(hex[i + 1]));
    return out;
}

}  // namespace hetcast
