#include "transport/rdma/bandwidth.hpp"

#include "transport/rdma/loop_common.hpp"

#include <thread>

namespace meshperf::transport::rdma {

namespace {

using detail::clock;
using detail::idle_check_mask;
using detail::loop_end;
using detail::loop_status;

constexpr int poll_batch = 32;

// The window of posted-but-uncompleted messages is at most p.tx_depth. Only every
// signal_every-th message asks for a completion; its wr_id is the number of messages posted
// up to and including it, and RC completes in order, so one completion retires its group.
template <core::rdma_op Op>
void stream(qp_slot& s, const point_params& p, const std::atomic<bool>& stop,
            std::uint64_t max_messages, bandwidth_counters& c, loop_status& st) noexcept {
    const std::uint64_t n = p.size;
    const std::uint64_t every = p.signal_every;
    const std::uint64_t window = p.tx_depth;
    const std::uint64_t limit = max_messages ? max_messages : ~0ull;
    const std::int64_t timeout_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(p.peer_timeout).count();
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(Op == core::rdma_op::read ? s.rx() : s.tx()),
                static_cast<std::uint32_t>(n), s.mr.lkey()};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if constexpr (Op == core::rdma_op::write) wr.opcode = IBV_WR_RDMA_WRITE;
    if constexpr (Op == core::rdma_op::read) wr.opcode = IBV_WR_RDMA_READ;
    if constexpr (Op == core::rdma_op::send) wr.opcode = IBV_WR_SEND;
    if constexpr (Op != core::rdma_op::send) {
        wr.wr.rdma.remote_addr = s.remote_addr;
        wr.wr.rdma.rkey = s.remote_rkey;
    }
    const unsigned base_flags = (Op != core::rdma_op::read && n <= s.qp.max_inline()) ? static_cast<unsigned>(IBV_SEND_INLINE) : 0u;
    ibv_wc wc[poll_batch];
    std::uint64_t posted = 0, completed = 0;
    bool stopping = false;
    unsigned idle = 0;
    std::int64_t last_progress = steady_now_ns();
    c.start(last_progress);
    for (;;) {
        if (!stopping && stop.load(std::memory_order_relaxed)) stopping = true;
        while (posted - completed < window && posted < limit) {
            if (stopping && posted % every == 0) break;  // the current group is closed
            const std::uint64_t next = posted + 1;
            wr.wr_id = next;
            wr.send_flags = base_flags | ((next % every == 0 || next == limit) ? static_cast<unsigned>(IBV_SEND_SIGNALED) : 0u);
            if (!detail::post_send(s, wr, st)) return;
            posted = next;
        }
        if (completed == posted && (stopping || posted == limit)) return;
        const int k = ibv_poll_cq(s.cq.get(), poll_batch, wc);
        if (k > 0) {
            for (int i = 0; i < k; ++i) {
                if (wc[i].status != IBV_WC_SUCCESS) {
                    st.fail_wc(wc[i]);
                    return;
                }
                completed = wc[i].wr_id;
            }
            last_progress = steady_now_ns();
            c.publish(completed, completed * n, last_progress);
            idle = 0;
        } else if (k < 0) {
            st.fail_poll(-k);
            return;
        } else if ((++idle & idle_check_mask) == 0 && posted != completed &&
                   steady_now_ns() - last_progress > timeout_ns) {
            st.end = loop_end::timeout;
            return;
        }
    }
}

// Receiver of a SEND stream. Receives all land in the one rx region (the pattern is the
// same in every message, so a message overwritten by the next still reads as the pattern);
// each completion is reposted at once, in one chained post per poll batch.
template <bool Verify>
void receive(qp_slot& s, const point_params& p, const std::atomic<bool>& stop,
             const std::atomic<std::uint64_t>& expected, bandwidth_counters& c,
             verify_report& v, loop_status& st) noexcept {
    constexpr std::uint64_t unknown = ~0ull;
    const std::int64_t timeout_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(p.peer_timeout).count();
    constexpr std::int64_t quiet_ns = 1'000'000;
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(s.rx()), static_cast<std::uint32_t>(s.length), s.mr.lkey()};
    ibv_recv_wr rwr[poll_batch]{};
    for (int i = 0; i < poll_batch; ++i) {
        rwr[i].sg_list = &sge;
        rwr[i].num_sge = 1;
        rwr[i].next = i + 1 < poll_batch ? &rwr[i + 1] : nullptr;
    }
    ibv_wc wc[poll_batch];
    std::uint64_t received = 0, bytes = 0;
    std::int64_t last = 0, stop_seen = 0;
    unsigned idle = 0;
    for (;;) {
        const int k = ibv_poll_cq(s.cq.get(), poll_batch, wc);
        if (k > 0) {
            for (int i = 0; i < k; ++i) {
                if (wc[i].status != IBV_WC_SUCCESS) {
                    st.fail_wc(wc[i]);
                    return;
                }
                ++received;
                bytes += wc[i].byte_len;
                if constexpr (Verify) detail::check_received(s, wc[i], p.size, v);
            }
            s.rx_posted -= static_cast<std::uint32_t>(k);
            rwr[k - 1].next = nullptr;
            const bool posted = detail::post_recv(s, rwr[0], st);
            rwr[k - 1].next = k < poll_batch ? &rwr[k] : nullptr;
            if (!posted) return;
            s.rx_posted += static_cast<std::uint32_t>(k);
            last = steady_now_ns();
            if (received == static_cast<std::uint64_t>(k)) c.start(last);
            c.publish(received, bytes, last);
            idle = 0;
        } else if (k < 0) {
            st.fail_poll(-k);
            return;
        } else if ((++idle & idle_check_mask) == 0 && stop.load(std::memory_order_acquire)) {
            const std::int64_t now = steady_now_ns();
            if (!stop_seen) stop_seen = now;
            const std::uint64_t want = expected.load(std::memory_order_acquire);
            if (want != unknown) {
                if (received >= want) return;
                if (now - stop_seen > timeout_ns) {
                    st.end = loop_end::timeout;
                    st.missing = want - received;
                    return;
                }
            } else if (now - std::max(last, stop_seen) > quiet_ns) {
                return;
            }
        }
    }
}

void wait_for(const std::atomic<bool>& stop) noexcept {
    while (!stop.load(std::memory_order_relaxed)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

bandwidth_active::bandwidth_active(endpoint& ep, std::size_t qp, const point_params& p)
    : ep_(&ep), p_(p) {
    slot_ = &detail::prepare_slot(ep, qp, p_);
}

bool bandwidth_active::inline_sends() const noexcept {
    return p_.op != core::rdma_op::read && p_.size <= slot_->qp.max_inline();
}

void bandwidth_active::run(const std::atomic<bool>& stop, std::uint64_t max_messages) {
    loop_status st;
    counters_.reset();
    switch (p_.op) {
        case core::rdma_op::write: stream<core::rdma_op::write>(*slot_, p_, stop, max_messages, counters_, st); break;
        case core::rdma_op::read: stream<core::rdma_op::read>(*slot_, p_, stop, max_messages, counters_, st); break;
        case core::rdma_op::send: stream<core::rdma_op::send>(*slot_, p_, stop, max_messages, counters_, st); break;
    }
    if (!st.ok())
        detail::raise(*slot_, st, ep_->where() + " bandwidth " + std::string(core::to_string(p_.op)), p_.peer_timeout);
    if (p_.verify && p_.op == core::rdma_op::read)
        detail::check(slot_->rx(), slot_->reference.data(), p_.size, verify_);
}

bandwidth_passive::bandwidth_passive(endpoint& ep, std::size_t qp, const point_params& p)
    : ep_(&ep), p_(p) {
    slot_ = &detail::prepare_slot(ep, qp, p_);
    if (p_.op == core::rdma_op::send) slot_->top_up_receives();
    if (p_.op == core::rdma_op::read && slot_->host_memory()) {  // GPU memory: read as it is
        std::memcpy(slot_->rx(), p_.verify ? slot_->reference.data() : slot_->tx(), p_.size);
        if (p_.corrupt_sent_for_test) detail::corrupt_for_test(slot_->rx(), p_.size);  // what the peer reads
    }
}

void bandwidth_passive::run(const std::atomic<bool>& stop) {
    loop_status st;
    counters_.reset();
    switch (p_.op) {
        case core::rdma_op::send:
            if (p_.verify)
                receive<true>(*slot_, p_, stop, expected_, counters_, verify_, st);
            else
                receive<false>(*slot_, p_, stop, expected_, counters_, verify_, st);
            break;
        case core::rdma_op::write:
            wait_for(stop);
            // The active side said "done" after its last write completed: the region holds it.
            // A count of 0 says none landed (the peer's QP failed on a rail left to fail
            // alone): there is nothing to check.
            if (p_.verify && expected_.load(std::memory_order_acquire) != 0)
                detail::check(slot_->rx(), slot_->reference.data(), p_.size, verify_);
            break;
        case core::rdma_op::read:
            wait_for(stop);
            break;
    }
    if (!st.ok())
        detail::raise(*slot_, st, ep_->where() + " bandwidth " + std::string(core::to_string(p_.op)) + " (passive)", p_.peer_timeout);
}

}  // namespace meshperf::transport::rdma
