// The --verify pattern on the host side (the kernels use the same pattern_word).
#include "gpu/pattern.hpp"

#include <doctest/doctest.h>
#include <vector>

using namespace meshperf::gpu;

TEST_CASE("pattern: fill and check agree at any alignment and length") {
    std::vector<unsigned char> buf(4096 + 16);
    for (std::size_t offset : {0, 1, 3, 8}) {
        for (std::size_t len : {0, 1, 7, 8, 9, 63, 4096}) {
            fill_pattern_host(buf.data() + offset, len, 42);
            CHECK(count_pattern_mismatches_host(buf.data() + offset, len, 42) == 0);
        }
    }
}

TEST_CASE("pattern: bytes are the little-endian bytes of the words") {
    std::vector<unsigned char> buf(24);
    fill_pattern_host(buf.data(), buf.size(), 7);
    for (std::size_t i = 0; i < buf.size(); ++i) CHECK(buf[i] == pattern_byte(7, i));
    CHECK(buf[0] == static_cast<unsigned char>(pattern_word(7, 0)));
    CHECK(buf[9] == static_cast<unsigned char>(pattern_word(7, 1) >> 8));
}

TEST_CASE("pattern: corrupt bytes are counted, other seeds and zeros fail") {
    std::vector<unsigned char> buf(1000);
    fill_pattern_host(buf.data(), buf.size(), 1);
    buf[0] ^= 1;
    buf[500] ^= 0x80;
    buf[999] = static_cast<unsigned char>(~buf[999]);  // in the tail after the last full word
    CHECK(count_pattern_mismatches_host(buf.data(), buf.size(), 1) == 3);
    fill_pattern_host(buf.data(), buf.size(), 1);
    CHECK(count_pattern_mismatches_host(buf.data(), buf.size(), 2) > 950);
    std::vector<unsigned char> zeros(1000, 0);
    CHECK(count_pattern_mismatches_host(zeros.data(), zeros.size(), 1) > 950);
}
