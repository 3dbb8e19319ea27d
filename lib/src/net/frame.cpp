#include "hetcast/net/frame.hpp"

#include <cstring>

namespace hetcast::net {
namespace {

template <class T>
void put(std::byte*& p, T v) {
    for (int i = sizeof(T) - 1; i >= 0; --i) *p++ = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

template <class T>
T get(const std::byte*& p) {
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>((v << 8) | std::to_integer<T>(*p++));
    return v;
}

}  // namespace

bool is_known(std::uint8_t type) {
    return type >= static_cast<std::uint8_t>(FrameType::hello) &&
           type <= static_cast<std::uint8_t>(FrameType::job_pace);
}

const char* to_string(FrameType t) {
    switch (t) {
        case FrameType::hello: return "hello";
        case FrameType::auth: return "auth";
        case FrameType::auth_ok: return "auth_ok";
        case FrameType::error: return "error";
        case FrameType::ping: return "ping";
        case FrameType::pong: return "pong";
        case FrameType::job_plan: return "job_plan";
        case FrameType::data: return "data";
        case FrameType::data_end: return "data_end";
        case FrameType::job_report: return "job_report";
        case FrameType::request: return "request";
        case FrameType::response: return "response";
        case FrameType::job_start: return "job_start";
        case FrameType::job_cancel: return "job_cancel";
        case FrameType::bulk: return "bulk";
        case FrameType::piece_request: return "piece_request";
        case FrameType::piece_data: return "piece_data";
        case FrameType::job_relay: return "job_relay";
        case FrameType::job_reports: return "job_reports";
        case FrameType::job_pace: return "job_pace";
    }
    return "unknown";
}

void encode_header(const FrameHeader& h, std::span<std::byte, header_size> out) {
    std::byte* p = out.data();
    put<std::uint32_t>(p, frame_magic);
    put<std::uint8_t>(p, protocol_version);
    put<std::uint8_t>(p, static_cast<std::uint8_t>(h.type));
    put<std::uint16_t>(p, h.flags);
    put<std::uint64_t>(p, h.job);
    put<std::uint32_t>(p, h.message);
    put<std::uint32_t>(p, h.length);
}

std::vector<std::byte> encode(const FrameHeader& h, std::span<const std::byte> payload) {
    std::vector<std::byte> out(header_size + payload.size());
    FrameHeader hh = h;
    hh.length = static_cast<std::uint32_t>(payload.size());
    encode_header(hh, std::span<std::byte, header_size>(out.data(), header_size));
    if (!payload.empty()) std::memcpy(out.data() + header_size, payload.data(), payload.size());
    return out;
}

std::vector<std::byte> encode(FrameType type, std::uint64_t job, std::uint32_t message, std::string_view payload) {
    FrameHeader h;
    h.type = type;
    h.job = job;
    h.message = message;
    return encode(h, std::as_bytes(std::span(payload.data(), payload.size())));
}

Decoded decode_header(std::span<const std::byte> in, std::size_t max_payload) {
    Decoded d;
    if (in.size() < header_size) return d;
    const std::byte* p = in.data();
    const auto magic = get<std::uint32_t>(p);
    const auto version = get<std::uint8_t>(p);
    const auto type = get<std::uint8_t>(p);
    d.header.flags = get<std::uint16_t>(p);
    d.header.job = get<std::uint64_t>(p);
    d.header.message = get<std::uint32_t>(p);
    d.header.length = get<std::uint32_t>(p);
    d.status = Decoded::Status::bad;
    if (magic != frame_magic) {
        d.error = "not a hetcast frame (bad magic)";
    } else if (version != protocol_version) {
        d.error = "unsupported protocol version " + std::to_string(version) + " (this side speaks " +
                  std::to_string(protocol_version) + ")";
    } else if (!is_known(type)) {
        d.error = "unknown frame type " + std::to_string(type);
    } else if (d.header.length > max_payload) {
        d.error = "frame of " + std::to_string(d.header.length) + " bytes exceeds the limit of " +
                  std::to_string(max_payload);
    } else {
        d.header.type = static_cast<FrameType>(type);
        d.status = Decoded::Status::complete;
    }
    return d;
}

Decoded decode(std::span<const std::byte> in, std::size_t max_payload) {
    Decoded d = decode_header(in, max_payload);
    if (d.status != Decoded::Status::complete) return d;
    const std::size_t total = header_size + d.header.length;
    if (in.size() < total) {
        d.status = Decoded::Status::need_more;
        return d;
    }
    d.payload = in.subspan(header_size, d.header.length);
    d.consumed = total;
    return d;
}

}  // namespace hetcast::net
