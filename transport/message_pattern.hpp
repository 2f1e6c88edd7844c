#pragma once
/// The byte pattern --verify checks on message transports (RDMA, libfabric): both sides
/// generate it from the same seed, and a received message is compared with it whole.
/// Header-only, so transport/rdma and transport/ofi use it without linking the rest of
/// transport/.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace meshperf::transport {

/// Fills out with the pattern of seed: a pseudo-random byte stream (xorshift64*), so a
/// shifted, truncated or stale copy does not match.
inline void fill_message_pattern(std::span<std::byte> out, std::uint32_t seed) noexcept {
    std::uint64_t x = 0x9e3779b97f4a7c15ull ^ (static_cast<std::uint64_t>(seed) << 17) ^ seed;
    std::size_t i = 0;
    while (i < out.size()) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        const std::uint64_t v = x * 0x2545f4914f6cdd1dull;
        const std::size_t n = out.size() - i < 8 ? out.size() - i : 8;
        std::memcpy(out.data() + i, &v, n);
        i += n;
    }
}

}  // namespace meshperf::transport
