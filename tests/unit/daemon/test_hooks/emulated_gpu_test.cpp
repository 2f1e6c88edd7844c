// daemon/test_hooks/emulated_gpu: the GPU the test hook MESHPERF_TEST_EMULATED_GPU serves
// `--memory cuda:N` collectives from (the Soft-RoCE guest runs GPUDirect collectives on it).
// Its buffers are apart from every host buffer the engine owns, its address operations move
// exactly what they are asked, and its RDMA memory takes the peermem registration path.
#include "core/gpu_registration.hpp"
#include "core/collective/reduce_ops.hpp"
#include "daemon/test_hooks/emulated_gpu.hpp"

#include <algorithm>
#include <cstring>
#include <doctest/doctest.h>
#include <system_error>
#include <vector>

namespace emulated_gpu_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using region = transport::mesh::device_memory::region;

TEST_CASE("an emulated GPU's regions are allocations the NIC can register, none for an empty region") {
    auto dev = daemon::make_emulated_collective_memory(4096, 100, 0);
    auto* send = dev->allocation(region::send);
    auto* recv = dev->allocation(region::recv);
    REQUIRE(send);
    REQUIRE(recv);
    CHECK(dev->allocation(region::scratch) == nullptr);
    CHECK(send->size() == 4096);
    CHECK(recv->size() == 100);
    CHECK(send->data() != recv->data());
    CHECK(reinterpret_cast<std::uintptr_t>(send->data()) % 4096 == 0);  // page-aligned, as cudaMalloc's
    CHECK_THROWS_AS(send->dmabuf(), std::system_error);                  // no dma-buf: the peermem path
    CHECK_THROWS(send->zero(4000, 100));                                 // past the end: refused
    send->zero(0, 4096);
    std::vector<std::byte> host(4096, std::byte{1});
    dev->download(host.data(), region::send, 0, 4096);
    CHECK(std::all_of(host.begin(), host.end(), [](std::byte b) { return b == std::byte{0}; }));
    CHECK_THROWS(dev->upload(region::recv, 50, host.data(), 51));        // region ops are bounds-checked
}

TEST_CASE("an emulated GPU's address operations copy, sum and stage what they are asked, and count") {
    daemon::emulated_gpu_counters counters;
    auto dev = daemon::make_emulated_collective_memory(16, 16, 0, &counters);
    std::byte* send = dev->allocation(region::send)->data();
    std::byte* recv = dev->allocation(region::recv)->data();
    const float a[4] = {1.5f, 2.0f, -3.0f, 1e6f}, b[4] = {0.5f, 2.0f, 3.0f, 1.0f};
    dev->upload_at(send, reinterpret_cast<const std::byte*>(a), sizeof a);
    dev->upload_at(recv, reinterpret_cast<const std::byte*>(b), sizeof b);
    dev->add_at(core::dtype::fp32, recv, send, 16);
    float got[4];
    dev->download_at(reinterpret_cast<std::byte*>(got), recv, sizeof got);
    CHECK(got[0] == 2.0f);
    CHECK(got[1] == 4.0f);
    CHECK(got[2] == 0.0f);
    CHECK(got[3] == 1000001.0f);
    dev->copy_at(recv + 4, send, 4);  // one element, into the middle
    dev->download(reinterpret_cast<std::byte*>(got), region::recv, 0, 16);
    CHECK(got[0] == 2.0f);
    CHECK(got[1] == 1.5f);
    CHECK(got[2] == 0.0f);
    dev->add_at(core::dtype::fp32, recv, send, 0);  // nothing to add: not counted
    dev->flush_rdma_writes();
    CHECK(counters.sums.load() == 1);
    CHECK(counters.flushes.load() == 1);
}

TEST_CASE("the emulated GPU's RDMA memory says what it is and is registered by the peermem path") {
    const auto mem = daemon::emulated_rdma_memory("cuda:0");
    CHECK(mem->name() == "cuda:0 (emulated in host memory)");
    auto caps = mem->caps();
    caps.verbs_dmabuf = true;  // as the RDMA code sets it
    const auto plan = core::plan_gpu_registration(caps, core::gpu_registration_preference::automatic);
    REQUIRE(plan.attempts.size() == 1);
    CHECK(plan.attempts[0] == core::gpu_registration_path::peermem);
    const auto a = mem->allocate(2 << 20);
    CHECK(a->size() == 2u << 20);
    a->zero(0, a->size());
}

}  // namespace emulated_gpu_test
