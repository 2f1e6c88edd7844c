#include "core/frame.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>

namespace meshperf::core {
namespace {

constexpr char magic[4] = {'M', 'P', 'F', '1'};

void put_be16(char* p, std::uint16_t v) {
    p[0] = static_cast<char>(v >> 8);
    p[1] = static_cast<char>(v);
}
void put_be32(char* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (24 - 8 * i));
}
std::uint32_t get_be(const char* p, int n) {
    std::uint32_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

}  // namespace

std::string frame_type_name(std::uint16_t type) {
    switch (static_cast<frame_type>(type)) {
        case frame_type::hello: return "hello";
        case frame_type::hello_ok: return "hello_ok";
        case frame_type::point_begin: return "point_begin";
        case frame_type::point_ready: return "point_ready";
        case frame_type::progress: return "progress";
        case frame_type::point_stop: return "point_stop";
        case frame_type::point_done: return "point_done";
        case frame_type::error: return "error";
        case frame_type::bye: return "bye";
        case frame_type::endpoint: return "endpoint";
        case frame_type::point_go: return "point_go";
        case frame_type::heartbeat: return "heartbeat";
    }
    return fmt::format("type {}", type);
}

std::string encode_frame(frame_type type, std::string_view payload) {
    if (payload.size() > max_frame_payload)
        throw std::length_error(fmt::format("frame payload of {} bytes exceeds the {} byte limit", payload.size(), max_frame_payload));
    std::string out(frame_header_size + payload.size(), '\0');
    std::memcpy(out.data(), magic, 4);
    put_be16(out.data() + 4, static_cast<std::uint16_t>(type));
    put_be16(out.data() + 6, 0);
    put_be32(out.data() + 8, static_cast<std::uint32_t>(payload.size()));
    std::memcpy(out.data() + frame_header_size, payload.data(), payload.size());
    return out;
}

decoded_frame decode_frame(std::span<const char> in) {
    decoded_frame f;
    // Reject a wrong magic as soon as the bytes seen so far disagree with it.
    const auto seen = std::min<std::size_t>(in.size(), 4);
    if (!std::equal(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(seen), magic)) {
        f.status = decode_status::bad;
        f.error = "bad frame magic (the peer is not speaking the meshperf session protocol)";
        return f;
    }
    if (in.size() >= 8 && get_be(in.data() + 6, 2) != 0) {
        f.status = decode_status::bad;
        f.error = "reserved frame field is not zero";
        return f;
    }
    if (in.size() < frame_header_size) return f;
    const auto length = get_be(in.data() + 8, 4);
    if (length > max_frame_payload) {
        f.status = decode_status::bad;
        f.error = fmt::format("frame length {} exceeds the {} byte limit", length, max_frame_payload);
        return f;
    }
    if (in.size() < frame_header_size + length) return f;
    f.status = decode_status::ok;
    f.type = static_cast<std::uint16_t>(get_be(in.data() + 4, 2));
    f.payload = std::string_view(in.data() + frame_header_size, length);
    f.consumed = frame_header_size + length;
    return f;
}

}  // namespace meshperf::core
