#pragma once
/// RAII over a memory region.
#include "transport/rdma/pd.hpp"

#include <cstddef>
#include <cstdint>

namespace meshperf::transport::rdma {

/// A registered memory region (ibv_reg_mr); deregistered on destruction, before the memory
/// it covers is freed. Non-movable.
class memory_region {
public:
    /// Registers [addr, addr + bytes) with access flags (IBV_ACCESS_*). Checks
    /// RLIMIT_MEMLOCK first. Throws rdma_error; a refusal that looks like the memlock limit
    /// says how to raise it.
    memory_region(const protection_domain& pd, void* addr, std::size_t bytes, int access,
                  const std::string& device);
    /// Adopts a region registered elsewhere (device memory: device_registration.hpp);
    /// deregisters it on destruction. mr must not be null.
    explicit memory_region(ibv_mr* adopted) noexcept : mr_(adopted) {}
    ~memory_region();
    memory_region(const memory_region&) = delete;
    memory_region& operator=(const memory_region&) = delete;

    ibv_mr* get() const noexcept { return mr_; }
    std::uint32_t lkey() const noexcept { return mr_->lkey; }
    std::uint32_t rkey() const noexcept { return mr_->rkey; }

private:
    ibv_mr* mr_ = nullptr;
};

}  // namespace meshperf::transport::rdma
