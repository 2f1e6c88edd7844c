#pragma once
/// RAII over a protection domain.
#include "transport/rdma/device.hpp"

namespace meshperf::transport::rdma {

/// A protection domain (ibv_alloc_pd); deallocated on destruction, after every MR and QP in
/// it. Non-movable: MRs and QPs refer to it.
class protection_domain {
public:
    /// Throws rdma_error naming the device.
    explicit protection_domain(const device_context& ctx);
    ~protection_domain();
    protection_domain(const protection_domain&) = delete;
    protection_domain& operator=(const protection_domain&) = delete;

    ibv_pd* get() const noexcept { return pd_; }

private:
    ibv_pd* pd_ = nullptr;
};

}  // namespace meshperf::transport::rdma
