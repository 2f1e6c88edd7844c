#pragma once
/// The verification pattern: byte i of a message is (i mod 251). Messages are sent from one
/// buffer, so every message of a stream carries the same bytes; a receiver whose reads do
/// not line up with messages finds the pattern position as (stream offset mod message
/// size). A buffer holding len + 251 pattern bytes serves any position p < len as
/// buffer + (p mod 251).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace meshperf::transport::tcp {

inline constexpr std::size_t pattern_period = 251;  // prime, so no message size aligns with it

/// Fills a buffer of at least len + pattern_period bytes with the pattern.
inline std::vector<char> make_pattern_buffer(std::size_t len) {
    std::vector<char> buf(len + pattern_period);
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(i % pattern_period);
    return buf;
}

/// Pointer to the pattern bytes that belong at message position `offset`.
inline const char* pattern_at(const std::vector<char>& pattern, std::uint64_t offset) {
    return pattern.data() + offset % pattern_period;
}

/// True when data[0..len) equals the pattern at message position `offset`.
inline bool matches_pattern(const std::vector<char>& pattern, std::uint64_t offset, const char* data, std::size_t len) {
    return std::memcmp(pattern_at(pattern, offset), data, len) == 0;
}

/// True when data[0..len), received at stream offset `offset` of a stream of
/// message_bytes-byte messages that each start the pattern afresh, matches.
inline bool matches_message_pattern(const std::vector<char>& pattern, std::uint64_t message_bytes,
                                    std::uint64_t offset, const char* data, std::size_t len) {
    while (len > 0) {
        const std::uint64_t at = offset % message_bytes;  // position within its message
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(len, message_bytes - at));
        if (!matches_pattern(pattern, at, data, n)) return false;
        data += n;
        offset += n;
        len -= n;
    }
    return true;
}

}  // namespace meshperf::transport::tcp
