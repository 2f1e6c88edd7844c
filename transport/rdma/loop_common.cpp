#include "transport/rdma/loop_common.hpp"

#include "core/error.hpp"
#include "transport/rdma/error.hpp"
#include "transport/rdma/pattern.hpp"

#include <cerrno>
#include <fmt/format.h>

namespace meshperf::transport::rdma::detail {

void raise(qp_slot& s, const loop_status& st, std::string_view what,
           std::chrono::milliseconds timeout) {
    s.failed = true;
    const std::string qp = fmt::format("QP {:#x}", s.qp.qpn());
    switch (st.end) {
        case loop_end::ok: break;
        case loop_end::wc_error: {
            const bool gone = st.code == IBV_WC_RETRY_EXC_ERR || st.code == IBV_WC_RNR_RETRY_EXC_ERR;
            // Only status, wr_id and qp_num are valid in a failed completion: the loop's
            // name says which operation it was.
            throw rdma_error(std::error_code(st.code, wc_category()),
                             fmt::format("{} {}: work completion failed (status {}){}", what, qp,
                                         st.code, gone ? " - the peer is gone or not answering" : ""));
        }
        case loop_end::post_error:
            throw_errno(st.code, fmt::format("{} {}: ibv_post_send/recv", what, qp));
        case loop_end::poll_error:
            throw_errno(st.code, fmt::format("{} {}: ibv_poll_cq", what, qp));
        case loop_end::timeout:
            if (st.missing)
                throw_errno(ETIMEDOUT, fmt::format("{} {}: {} messages announced by the peer did "
                                                   "not arrive within {} ms - peer gone",
                                                   what, qp, st.missing, timeout.count()));
            throw_errno(ETIMEDOUT, fmt::format("{} {}: no progress for {} ms - the peer is gone "
                                               "or stopped answering",
                                               what, qp, timeout.count()));
    }
    throw_errno(EINVAL, fmt::format("{} {}: loop ended in error", what, qp));
}

qp_slot& prepare_slot(endpoint& ep, std::size_t qp, point_params& p) {
    const std::string at = ep.where();
    if (!ep.connected()) throw core::spec_error(at + ": connect() the endpoint before running points");
    if (qp >= ep.qp_count())
        throw core::spec_error(fmt::format("{}: QP {} does not exist ({} QPs)", at, qp, ep.qp_count()));
    qp_slot& s = ep.slot(qp);
    if (s.failed)
        throw_errno(EIO, fmt::format("{}: QP {:#x} failed in an earlier point; open a new endpoint",
                                     at, s.qp.qpn()));
    const std::uint64_t max = std::min(s.length, s.remote_length);
    if (p.size < 1 || p.size > max)
        throw core::spec_error(fmt::format("{}: message size {} is outside 1..{} (the buffers "
                                           "both sides registered)", at, p.size, max));
    if (p.tx_depth == 0) p.tx_depth = s.tx_depth;
    if (p.tx_depth > s.tx_depth)
        throw core::spec_error(fmt::format("{}: tx_depth {} exceeds the QP's {}", at, p.tx_depth, s.tx_depth));
    if (p.signal_every == 0) p.signal_every = std::max<std::uint32_t>(1, p.tx_depth / 4);
    if (p.signal_every > p.tx_depth)
        throw core::spec_error(fmt::format("{}: signal_every {} exceeds the window {}", at,
                                           p.signal_every, p.tx_depth));
    if (p.peer_timeout.count() <= 0) throw core::spec_error(at + ": peer_timeout must be positive");
    const auto n = static_cast<std::size_t>(p.size);
    if (!s.host_memory()) {  // GPU memory: the CPU cannot fill or check it
        if (p.verify)
            throw core::spec_error(at + ": --verify checks the buffers from the CPU, which cannot read GPU memory; "
                                        "measure GPU memory over RDMA without --verify");
        s.device->zero(s.length, n);
        return s;
    }
    if (p.verify) {
        fill_pattern({s.reference.data(), n}, p.pattern_seed);
        std::memcpy(s.tx(), s.reference.data(), n);
    }
    std::memset(s.rx(), 0, n);  // nothing stale can pass for this point's data
    if (p.corrupt_sent_for_test) corrupt_for_test(s.tx(), n);  // what WRITE and SEND give the peer
    return s;
}

}  // namespace meshperf::transport::rdma::detail
