#pragma once
/// RAII over a completion channel: the file descriptor a thread can sleep on (poll) until a
/// CQ it armed has a completion, instead of spinning on ibv_poll_cq.
#include "transport/rdma/device.hpp"

namespace meshperf::transport::rdma {

/// A completion channel (ibv_create_comp_channel) with a non-blocking descriptor; destroyed
/// after the CQs that use it. Non-movable.
class completion_channel {
public:
    /// Throws rdma_error naming the device.
    explicit completion_channel(const device_context& ctx);
    ~completion_channel();
    completion_channel(const completion_channel&) = delete;
    completion_channel& operator=(const completion_channel&) = delete;

    ibv_comp_channel* get() const noexcept { return ch_; }
    /// For poll(2): readable when an armed CQ has had a completion.
    int fd() const noexcept { return ch_->fd; }
    /// Reads and acknowledges every event waiting (never blocks); returns how many. CQs must
    /// be re-armed (ibv_req_notify_cq) before the next wait.
    int drain() noexcept;

private:
    ibv_comp_channel* ch_ = nullptr;
};

}  // namespace meshperf::transport::rdma
