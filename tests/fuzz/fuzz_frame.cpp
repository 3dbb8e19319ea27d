// The wire format's decoder (net/frame.hpp): a byte stream cut into frames as the
// transport does, with the limits it uses. Checks what decode promises: a complete frame
// lies inside the input, its payload is within the limit and re-encodes to the same
// bytes, and decode_header agrees with decode.
#include <cstring>
#include <span>

#include "fuzz.hpp"
#include "hetcast/net/frame.hpp"

using namespace hetcast::net;

namespace {

bool same(const FrameHeader& a, const FrameHeader& b) {
    return a.type == b.type && a.flags == b.flags && a.job == b.job && a.message == b.message && a.length == b.length;
}

void stream(std::span<const std::byte> in, std::size_t max_payload) {
    while (!in.empty()) {
        const Decoded d = decode(in, max_payload);
        const Decoded h = decode_header(in, max_payload);
        if (d.status == Decoded::Status::bad) {
            if (d.error.empty()) fuzz::finding("a bad frame without a reason");
            return;
        }
        if (d.status == Decoded::Status::need_more) {
            if (in.size() >= header_size && h.status == Decoded::Status::bad) fuzz::finding("decode waits for a bad header");
            return;
        }
        if (h.status != Decoded::Status::complete || !same(h.header, d.header)) {
            fuzz::finding("decode_header disagrees with decode");
        }
        if (!is_known(static_cast<std::uint8_t>(d.header.type))) fuzz::finding("a complete frame of unknown type");
        if (d.header.length > max_payload) fuzz::finding("a payload over max_payload");
        if (d.consumed != header_size + d.header.length || d.consumed > in.size()) fuzz::finding("bad consumed");
        if (d.payload.size() != d.header.length || d.payload.data() != in.data() + header_size) {
            fuzz::finding("the payload is not the bytes after the header");
        }
        const auto again = encode(d.header, d.payload);
        if (again.size() != d.consumed || std::memcmp(again.data(), in.data(), d.consumed) != 0) {
            fuzz::finding("a decoded frame does not encode to its bytes");
        }
        in = in.subspan(d.consumed);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto in = std::as_bytes(std::span(data, size));
    fuzz::accepts([&] {
        stream(in, 0);
        stream(in, 64);
        stream(in, std::size_t{16} << 20);  // the transport's default max_frame
    });
    return 0;
}
