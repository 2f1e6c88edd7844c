#pragma once
/// RAII over a reliable-connected queue pair and its state transitions.
#include "transport/rdma/cq.hpp"
#include "transport/rdma/pd.hpp"

#include <array>
#include <cstdint>
#include <string>

namespace meshperf::transport::rdma {

/// Sizes asked of a QP at creation.
struct qp_caps {
    std::uint32_t send_wr = 128;     ///< send-queue depth (the tx window)
    std::uint32_t recv_wr = 256;     ///< receive-queue depth
    std::uint32_t inline_bytes = 0;  ///< max_inline_data asked for (0: no inline sends)
};

/// What moving to RTR needs to know about the remote QP and the path.
struct rtr_params {
    std::uint32_t remote_qpn = 0;
    std::uint32_t remote_psn = 0;
    ibv_mtu mtu = IBV_MTU_1024;
    bool global = true;                        ///< GRH (RoCE always; IB across subnets)
    std::array<std::uint8_t, 16> remote_gid{};
    int sgid_index = 0;
    std::uint16_t remote_lid = 0;              ///< InfiniBand without GRH
    std::uint8_t port = 1;
    std::uint8_t max_dest_rd_atomic = 1;       ///< READs the remote may have outstanding here
};

/// An RC queue pair (ibv_create_qp); destroyed before its CQs. Non-movable.
class queue_pair {
public:
    /// Creates an RC QP on send_cq and recv_cq. If the device refuses the inline size, retries
    /// without inline data. Throws rdma_error naming the device.
    queue_pair(const protection_domain& pd, const completion_queue& send_cq,
               const completion_queue& recv_cq, const qp_caps& caps, std::string device);
    ~queue_pair();
    queue_pair(const queue_pair&) = delete;
    queue_pair& operator=(const queue_pair&) = delete;

    ibv_qp* get() const noexcept { return qp_; }
    std::uint32_t qpn() const noexcept { return qp_->qp_num; }
    /// Inline bytes the device granted (0: no inline sends).
    std::uint32_t max_inline() const noexcept { return max_inline_; }

    /// RESET -> INIT with remote access flags. Throws rdma_error "QP 0x.. to INIT".
    void to_init(std::uint8_t port, int access);
    /// INIT -> RTR. Throws rdma_error "QP 0x.. to RTR" (naming the MTU, remote QPN and GID).
    void to_rtr(const rtr_params& p);
    /// RTR -> RTS. timeout is 4.096 us * 2^timeout per try; retry counts 7 = the maximum
    /// (rnr 7 = retry forever: receivers repost promptly). Throws rdma_error "QP 0x.. to RTS".
    void to_rts(std::uint32_t psn, std::uint8_t max_rd_atomic, std::uint8_t timeout = 14,
                std::uint8_t retry_cnt = 7, std::uint8_t rnr_retry = 7);

private:
    ibv_qp* qp_ = nullptr;
    std::uint32_t max_inline_ = 0;
    std::string device_;
};

}  // namespace meshperf::transport::rdma
