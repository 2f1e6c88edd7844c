#include "transport/rdma/qp.hpp"

#include "transport/rdma/error.hpp"
#include "transport/rdma/gid.hpp"
#include "transport/rdma/memlock.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace meshperf::transport::rdma {

queue_pair::queue_pair(const protection_domain& pd, const completion_queue& send_cq,
                       const completion_queue& recv_cq, const qp_caps& caps, std::string device)
    : device_(std::move(device)) {
    ibv_qp_init_attr init{};
    init.send_cq = send_cq.get();
    init.recv_cq = recv_cq.get();
    init.qp_type = IBV_QPT_RC;
    init.sq_sig_all = 0;
    init.cap.max_send_wr = caps.send_wr;
    init.cap.max_recv_wr = caps.recv_wr;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.cap.max_inline_data = caps.inline_bytes;
    errno = 0;
    qp_ = ibv_create_qp(pd.get(), &init);
    if (!qp_ && caps.inline_bytes > 0) {
        init.cap.max_inline_data = 0;  // some devices have no inline support at all
        errno = 0;
        qp_ = ibv_create_qp(pd.get(), &init);
    }
    if (!qp_) {
        const int err = errno ? errno : ENOMEM;
        const std::string advice = err == ENOMEM ? memlock_advice() : std::string();
        throw_errno(err, fmt::format("{}: ibv_create_qp (RC, {} send / {} receive entries){}{}",
                                     device_, caps.send_wr, caps.recv_wr,
                                     advice.empty() ? "" : ": ", advice));
    }
    max_inline_ = init.cap.max_inline_data;  // ibv_create_qp writes back what was granted
}

queue_pair::~queue_pair() {
    if (qp_) ibv_destroy_qp(qp_);
}

void queue_pair::to_init(std::uint8_t port, int access) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = port;
    a.qp_access_flags = access;
    if (int rc = ibv_modify_qp(qp_, &a,
                               IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        throw_errno(rc, fmt::format("{} port {}: QP {:#x} to INIT", device_, port, qpn()));
}

void queue_pair::to_rtr(const rtr_params& p) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = p.mtu;
    a.dest_qp_num = p.remote_qpn;
    a.rq_psn = p.remote_psn;
    a.max_dest_rd_atomic = p.max_dest_rd_atomic;
    a.min_rnr_timer = 12;  // 0.64 ms
    a.ah_attr.port_num = p.port;
    a.ah_attr.dlid = p.remote_lid;
    a.ah_attr.sl = 0;
    a.ah_attr.src_path_bits = 0;
    if (p.global) {
        a.ah_attr.is_global = 1;
        std::memcpy(a.ah_attr.grh.dgid.raw, p.remote_gid.data(), 16);
        a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(p.sgid_index);
        a.ah_attr.grh.hop_limit = 64;
        a.ah_attr.grh.traffic_class = 0;
        a.ah_attr.grh.flow_label = 0;
    }
    if (int rc = ibv_modify_qp(qp_, &a,
                               IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                   IBV_QP_MIN_RNR_TIMER))
        throw_errno(rc, fmt::format("{} port {}: QP {:#x} to RTR (remote QP {:#x}, GID {}, "
                                    "source GID index {}, MTU {})",
                                    device_, p.port, qpn(), p.remote_qpn,
                                    format_gid(p.remote_gid), p.sgid_index, mtu_bytes(p.mtu)));
}

void queue_pair::to_rts(std::uint32_t psn, std::uint8_t max_rd_atomic, std::uint8_t timeout,
                        std::uint8_t retry_cnt, std::uint8_t rnr_retry) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = psn;
    a.timeout = timeout;
    a.retry_cnt = retry_cnt;
    a.rnr_retry = rnr_retry;
    a.max_rd_atomic = max_rd_atomic;
    if (int rc = ibv_modify_qp(qp_, &a,
                               IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
        throw_errno(rc, fmt::format("{}: QP {:#x} to RTS", device_, qpn()));
}

}  // namespace meshperf::transport::rdma
