#pragma once
// A field of a request or an answer as it came off the wire, with a fallback. The one
// private header of wire/ that every part may include (tests/runtime_layout_test.sh).
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "hetcast/error.hpp"

namespace hetcast {

/// `j[key]` as a T, or `fallback` when `j` has no `key` or it is null. Throws InputError
/// "WHAT: 'KEY' has the wrong type" when it is there as something else (`what` empty: the
/// key alone).
template <class T>
T field(const nlohmann::json& j, const char* key, T fallback, std::string_view what = "request") {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    try {
        return it->template get<T>();
    } catch (const nlohmann::json::exception&) {
        std::string text = what.empty() ? std::string() : std::string(what) + ": ";
        throw InputError(text + "'" + key + "' has the wrong type");
    }
}

}  // namespace hetcast
