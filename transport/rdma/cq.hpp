#pragma once
/// RAII over a completion queue.
#include "transport/rdma/device.hpp"

namespace meshperf::transport::rdma {

/// A completion queue (ibv_create_cq), polled by one thread; destroyed after the QPs that
/// use it. Non-movable.
class completion_queue {
public:
    /// Creates a CQ of at least entries completions, reporting to `channel` when it is armed
    /// (null: none, the CQ is only polled). Throws rdma_error.
    completion_queue(const device_context& ctx, int entries, ibv_comp_channel* channel = nullptr);
    ~completion_queue();
    completion_queue(const completion_queue&) = delete;
    completion_queue& operator=(const completion_queue&) = delete;

    ibv_cq* get() const noexcept { return cq_; }

private:
    ibv_cq* cq_ = nullptr;
};

}  // namespace meshperf::transport::rdma
