#pragma once
/// The verification pattern: byte i of a stream is (i mod 251). A buffer holding the
/// pattern for size + 251 bytes lets any message start at any stream offset without
/// computing bytes per message: message data = buffer + (offset mod 251).
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

/// Pointer to the pattern bytes that belong at stream offset `offset`.
inline const char* pattern_at(const std::vector<char>& pattern, std::uint64_t offset) {
    return pattern.data() + offset % pattern_period;
}

/// True when data[0..len) equals the pattern at stream offset `offset`.
inline bool matches_pattern(const std::vector<char>& pattern, std::uint64_t offset, const char* data, std::size_t len) {
    return std::memcmp(pattern_at(pattern, offset), data, len) == 0;
}

}  // namespace meshperf::transport::tcp
