#pragma once
// Frames as a peer makes them: a payload of bytes or of JSON under a header.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "hetcast/net/frame.hpp"

namespace hetcast::detail {

inline std::vector<std::byte> bytes_of(std::string_view s) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    return {p, p + s.size()};
}

inline net::Frame make_frame(net::FrameType type, std::uint64_t job, std::uint32_t message, std::string_view payload) {
    return net::Frame{net::FrameHeader{type, 0, job, message, 0}, bytes_of(payload)};
}

/// A frame carrying `payload` as JSON text; strings that are not UTF-8 (an error naming a
/// file, a member's name from a config) go as U+FFFD instead of throwing.
inline net::Frame json_frame(net::FrameType type, std::uint64_t job, std::uint32_t message, const nlohmann::json& payload) {
    return make_frame(type, job, message, payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace hetcast::detail
