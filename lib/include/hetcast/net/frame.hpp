#pragma once
/// The wire format: length-prefixed binary frames with a fixed, versioned header
/// (docs/protocol.md). This module turns bytes into frames and back and nothing else:
/// no sockets, so it can be tested with byte arrays and fuzzed.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hetcast::net {

inline constexpr std::uint32_t frame_magic = 0x48435354;  // "HCST"
inline constexpr std::uint8_t protocol_version = 2;
inline constexpr std::size_t header_size = 24;

enum class FrameType : std::uint8_t {
    hello = 1,       ///< reserved: the shared-secret handshake of earlier builds
    auth = 2,        ///< reserved: likewise
    auth_ok = 3,     ///< server → client after TLS: the client is admitted (empty)
    error = 4,       ///< either way: a one-line reason; the sender closes after it
    ping = 5,        ///< probe: payload echoed back in a pong
    pong = 6,
    job_plan = 7,    ///< a node's part of a job: messages and its task list (JSON)
    data = 8,        ///< a chunk of message `message` of job `job`
    data_end = 9,    ///< the message is complete; payload: its SHA-256
    job_report = 10, ///< a node's completion times for a job (JSON)
    request = 11,    ///< a command from the CLI or a peer (JSON)
    response = 12,   ///< its answer (JSON)
    job_start = 13,  ///< coordinator → participant: run your task list now
    job_cancel = 14, ///< message `message` of job `job` will not come (all messages: 0xffffffff); payload: why
    bulk = 15,       ///< a goodput measurement's bytes on a connection of its own; `flags` says which part
    piece_request = 16,  ///< a piece of a cut-through message failed its check: send it again; payload: its index (8 bytes)
    piece_data = 17,     ///< that piece again; payload: its index (8 bytes) and its bytes
    job_relay = 18,      ///< a job plan on its way down the control tree: a route line, then the plan (docs/protocol.md)
    job_reports = 19,    ///< a relay's batch of its subtree's job events, each with "member" (JSON)
    job_pace = 20,       ///< coordinator → a sender of its job: the pace of its sends across shared uplinks (JSON)
};

/// `flags` of a bulk frame: the first (payload: JSON {"seconds", "warmup"}), filler, the last.
inline constexpr std::uint16_t bulk_start = 1;
inline constexpr std::uint16_t bulk_data = 0;
inline constexpr std::uint16_t bulk_end = 2;

inline constexpr std::uint32_t all_messages = 0xffffffffu;

[[nodiscard]] bool is_known(std::uint8_t type);
[[nodiscard]] const char* to_string(FrameType t);

struct FrameHeader {
    FrameType type = FrameType::error;
    std::uint16_t flags = 0;
    std::uint64_t job = 0;
    std::uint32_t message = 0;
    std::uint32_t length = 0;  ///< payload bytes that follow the header
};

/// A header and its payload, encoded: big-endian header then the payload bytes.
[[nodiscard]] std::vector<std::byte> encode(const FrameHeader& h, std::span<const std::byte> payload);
[[nodiscard]] std::vector<std::byte> encode(FrameType type, std::uint64_t job, std::uint32_t message,
                                            std::string_view payload);
/// Only the header, for a payload sent from elsewhere (a file chunk).
void encode_header(const FrameHeader& h, std::span<std::byte, header_size> out);

struct Decoded {
    enum class Status { complete, need_more, bad } status = Status::need_more;
    FrameHeader header;
    std::span<const std::byte> payload;  ///< points into the input
    std::size_t consumed = 0;            ///< bytes of the input this frame used
    std::string error;                   ///< why it is bad
};

/// Decodes one frame from the front of `in`. A header that claims more than
/// `max_payload` bytes is bad at once: nothing is allocated for what a peer merely claims.
[[nodiscard]] Decoded decode(std::span<const std::byte> in, std::size_t max_payload);

/// Header only: need_more until `header_size` bytes are there; then complete or bad.
[[nodiscard]] Decoded decode_header(std::span<const std::byte> in, std::size_t max_payload);

[[nodiscard]] inline std::string_view as_text(std::span<const std::byte> b) {
    return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace hetcast::net
