// gpu::page_aligned_range: the arguments export_dmabuf gives cuMemGetHandleForAddressRange
// (base, length: whole host pages) and ibv_reg_dmabuf_mr (offset), for buffers that start on
// a page and for the 256-byte alignment cudaMalloc promises.
#include "gpu/dmabuf_range.hpp"

#include <cstdint>
#include <doctest/doctest.h>
#include <limits>
#include <stdexcept>

using meshperf::gpu::page_aligned_range;

TEST_CASE("dma-buf range: a page-aligned buffer is exported as it is, offset 0") {
    const auto r = page_aligned_range(0x7f0000200000, 3u << 20, 4096);
    CHECK(r.base == 0x7f0000200000);
    CHECK(r.offset == 0);
    CHECK(r.length == 3u << 20);
}

TEST_CASE("dma-buf range: a buffer 256 B into a page: the whole pages around it, the offset to register at") {
    const std::uint64_t start = 0x7f0000200100;  // cudaMalloc's 256-byte alignment
    const auto r = page_aligned_range(start, 8192, 4096);
    CHECK(r.base == 0x7f0000200000);
    CHECK(r.offset == 0x100);
    CHECK(r.length == 3 * 4096);  // 256 B + 8 KiB needs a third page
    CHECK(r.base % 4096 == 0);
    CHECK(r.length % 4096 == 0);
    CHECK(r.base + r.offset == start);
    CHECK(r.offset + 8192 <= r.length);  // the MR (offset, length) lies inside the dma-buf
}

TEST_CASE("dma-buf range: every start and length lands inside whole pages, for 4 KiB and 64 KiB pages") {
    for (std::uint64_t page : {std::uint64_t{4096}, std::uint64_t{65536}})
        for (std::uint64_t start = 0x10000000; start < 0x10000000 + 3 * page; start += 256)
            for (std::uint64_t bytes : {std::uint64_t{1}, std::uint64_t{255}, page - 1, page, page + 1, 5 * page + 7}) {
                CAPTURE(page);
                CAPTURE(start);
                CAPTURE(bytes);
                const auto r = page_aligned_range(start, bytes, page);
                CHECK(r.base % page == 0);
                CHECK(r.length % page == 0);
                CHECK(r.base + r.offset == start);
                CHECK(r.offset < page);
                CHECK(r.offset + bytes <= r.length);
                CHECK(r.length - (r.offset + bytes) < page);  // no whole page more than needed
            }
}

TEST_CASE("dma-buf range: bad page sizes, empty buffers and address-space overflow are refused") {
    CHECK_THROWS_AS(page_aligned_range(0x1000, 4096, 0), std::invalid_argument);
    CHECK_THROWS_AS(page_aligned_range(0x1000, 4096, 3000), std::invalid_argument);
    CHECK_THROWS_AS(page_aligned_range(0x1000, 0, 4096), std::invalid_argument);
    const auto top = std::numeric_limits<std::uint64_t>::max();
    CHECK_THROWS_AS(page_aligned_range(top - 100, 4096, 4096), std::invalid_argument);
    CHECK_THROWS_AS(page_aligned_range(top - 4095, 4096, 4096), std::invalid_argument);  // one byte past the end
    CHECK(page_aligned_range(top - 8191, 4096, 4096).length == 4096);                     // the last page but one: fine
    // Inside the address space, but whole pages around it would end past it.
    CHECK_THROWS_AS(page_aligned_range(top - 8191 + 256, 4000, 4096), std::invalid_argument);
}
