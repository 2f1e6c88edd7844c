#pragma once
/// A GPU emulated in host memory, for tests of the device-memory paths of collectives where
/// no GPU is present (the Soft-RoCE guest, unit tests). A daemon started with
/// MESHPERF_TEST_EMULATED_GPU=1 in its environment serves `--memory cuda:N` collectives from
/// it (daemon_context::collective_hooks): the buffers live apart from the engine's host
/// mirrors and only this interface's copies and sums move data between them, as on a GPU;
/// over RDMA its allocations claim GPUDirect support through nvidia-peermem, so they are
/// registered with the NIC by that path (ibv_reg_mr on the "device" pointer, which a
/// software RDMA device accepts for host memory). Never used otherwise.
#include "transport/mesh/device_memory.hpp"
#include "transport/rdma/device_memory.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace meshperf::daemon {

/// Counts of what an emulated device did, for tests that must see the device path taken.
struct emulated_gpu_counters {
    std::atomic<std::uint64_t> sums{0};     ///< add / add_at calls with bytes
    std::atomic<std::uint64_t> flushes{0};  ///< flush_rdma_writes calls
};

/// A size's buffers on the emulated device. `counters` may be null.
std::unique_ptr<transport::mesh::device_memory> make_emulated_collective_memory(std::size_t send, std::size_t recv, std::size_t scratch,
                                                                          emulated_gpu_counters* counters = nullptr);

/// The factory collective runs use for "cuda:N" under the test hook.
transport::mesh::device_memory_factory emulated_collective_memory_factory();

/// RDMA buffer memory on the emulated device (named "DOMAIN (emulated in host memory)").
std::shared_ptr<const transport::rdma::device_memory> emulated_rdma_memory(const std::string& domain);

}  // namespace meshperf::daemon
