#include "transport/rdma/latency.hpp"

#include "core/error.hpp"
#include "transport/rdma/loop_common.hpp"

#include <thread>

namespace meshperf::transport::rdma {

namespace {

using detail::clock;
using detail::idle_check_mask;
using detail::loop_end;
using detail::loop_status;

// The value the last byte carries in round trip i: never 0 (the cleared region), and never
// the previous round trip's value.
inline std::uint8_t seq_byte(std::uint64_t i) noexcept { return static_cast<std::uint8_t>(i % 255 + 1); }

struct lat_ctx {
    qp_slot& s;
    const point_params& p;
    std::uint64_t& iter;
    std::uint32_t& outstanding;
    verify_report& verify;
    loop_status& st;
};

ibv_send_wr make_wr(qp_slot& s, ibv_sge& sge, std::byte* local, std::uint64_t n, ibv_wr_opcode op) {
    sge = {reinterpret_cast<std::uintptr_t>(local), static_cast<std::uint32_t>(n), s.mr.lkey()};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_READ) {
        wr.wr.rdma.remote_addr = s.remote_addr;
        wr.wr.rdma.rkey = s.remote_rkey;
    }
    if (op != IBV_WR_RDMA_READ && n <= s.qp.max_inline()) wr.send_flags |= IBV_SEND_INLINE;
    return wr;
}

// WRITE ping-pong, active side: write with the round trip's value in the last byte, spin on
// our own region's last byte until the peer writes the same value back.
template <bool Verify>
std::size_t write_active(lat_ctx c, const std::atomic<bool>& stop, std::span<std::uint64_t> out) noexcept {
    qp_slot& s = c.s;
    const std::uint64_t n = c.p.size;
    const clock::duration timeout = c.p.peer_timeout;
    auto* const rx_last = reinterpret_cast<volatile std::uint8_t*>(s.rx() + n - 1);
    auto* const tx_last = reinterpret_cast<std::uint8_t*>(s.tx() + n - 1);
    ibv_sge sge;
    ibv_send_wr wr = make_wr(s, sge, s.tx(), n, IBV_WR_RDMA_WRITE);
    std::size_t done = 0;
    while (done < out.size() && !stop.load(std::memory_order_relaxed)) {
        if (!detail::wait_sends(s, c.outstanding, c.p.tx_depth - 1, timeout, c.st)) return done;
        const std::uint8_t v = seq_byte(c.iter);
        *tx_last = v;
        const auto t0 = clock::now();
        if (!detail::post_send(s, wr, c.st)) return done;
        ++c.outstanding;
        unsigned spins = 0;
        while (*rx_last != v) {
            if ((++spins & idle_check_mask) == 0) {
                if (!detail::reap_sends(s, c.outstanding, c.st)) return done;
                if (clock::now() - t0 > timeout) {
                    c.st.end = loop_end::timeout;
                    return done;
                }
            }
        }
        const auto t1 = clock::now();
        out[done++] = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
        ++c.iter;
        if constexpr (Verify) detail::check_written(s, n, c.verify);
        if (!detail::reap_sends(s, c.outstanding, c.st)) return done;
    }
    return done;
}

template <bool Verify>
std::uint64_t write_passive(lat_ctx c, const std::atomic<bool>& stop) noexcept {
    qp_slot& s = c.s;
    const std::uint64_t n = c.p.size;
    const clock::duration timeout = c.p.peer_timeout;
    auto* const rx_last = reinterpret_cast<volatile std::uint8_t*>(s.rx() + n - 1);
    auto* const tx_last = reinterpret_cast<std::uint8_t*>(s.tx() + n - 1);
    ibv_sge sge;
    ibv_send_wr wr = make_wr(s, sge, s.tx(), n, IBV_WR_RDMA_WRITE);
    std::uint64_t answered = 0;
    for (;;) {
        const std::uint8_t v = seq_byte(c.iter);
        unsigned spins = 0;
        while (*rx_last != v) {
            if ((++spins & idle_check_mask) == 0) {
                if (stop.load(std::memory_order_relaxed)) return answered;
                if (!detail::reap_sends(s, c.outstanding, c.st)) return answered;
            }
        }
        if constexpr (Verify) detail::check_written(s, n, c.verify);
        if (!detail::wait_sends(s, c.outstanding, c.p.tx_depth - 1, timeout, c.st)) return answered;
        *tx_last = v;
        if (!detail::post_send(s, wr, c.st)) return answered;
        ++c.outstanding;
        ++c.iter;
        ++answered;
        if (!detail::reap_sends(s, c.outstanding, c.st)) return answered;
    }
}

// Polls the shared CQ once: retires sends, counts receives (reposting one per receive).
// Returns receives seen, or -1 on error.
template <bool Verify>
int poll_send_recv(lat_ctx& c, ibv_recv_wr& rwr) noexcept {
    qp_slot& s = c.s;
    ibv_wc wc[8];
    const int n = ibv_poll_cq(s.cq.get(), 8, wc);
    if (n < 0) {
        c.st.fail_poll(-n);
        return -1;
    }
    int recvs = 0;
    for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) {
            c.st.fail_wc(wc[i]);
            return -1;
        }
        if (wc[i].opcode & IBV_WC_RECV) {
            ++recvs;
            --s.rx_posted;
            if constexpr (Verify) detail::check_received(s, wc[i], c.p.size, c.verify);
        } else {
            --c.outstanding;
        }
    }
    if (recvs > 0) {
        // One receive back per receive consumed, so the queue never runs dry.
        for (int i = 0; i < recvs; ++i) {
            if (!detail::post_recv(s, rwr, c.st)) return -1;
            ++s.rx_posted;
        }
    }
    return recvs;
}

template <bool Verify>
std::size_t send_active(lat_ctx c, const std::atomic<bool>& stop, std::span<std::uint64_t> out) noexcept {
    qp_slot& s = c.s;
    const std::uint64_t n = c.p.size;
    const clock::duration timeout = c.p.peer_timeout;
    ibv_sge sge, rsge{reinterpret_cast<std::uintptr_t>(s.rx()), static_cast<std::uint32_t>(s.length), s.mr.lkey()};
    ibv_send_wr wr = make_wr(s, sge, s.tx(), n, IBV_WR_SEND);
    ibv_recv_wr rwr{};
    rwr.sg_list = &rsge;
    rwr.num_sge = 1;
    std::size_t done = 0;
    while (done < out.size() && !stop.load(std::memory_order_relaxed)) {
        while (c.outstanding + 1 > c.p.tx_depth)
            if (poll_send_recv<false>(c, rwr) < 0) return done;
        const auto t0 = clock::now();
        if (!detail::post_send(s, wr, c.st)) return done;
        ++c.outstanding;
        unsigned idle = 0;
        for (;;) {
            const int r = poll_send_recv<Verify>(c, rwr);
            if (r < 0) return done;
            if (r > 0) break;
            if ((++idle & idle_check_mask) == 0 && clock::now() - t0 > timeout) {
                c.st.end = loop_end::timeout;
                return done;
            }
        }
        const auto t1 = clock::now();
        out[done++] = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
        ++c.iter;
    }
    return done;
}

template <bool Verify>
std::uint64_t send_passive(lat_ctx c, const std::atomic<bool>& stop) noexcept {
    qp_slot& s = c.s;
    const std::uint64_t n = c.p.size;
    ibv_sge sge, rsge{reinterpret_cast<std::uintptr_t>(s.rx()), static_cast<std::uint32_t>(s.length), s.mr.lkey()};
    ibv_send_wr wr = make_wr(s, sge, s.tx(), n, IBV_WR_SEND);
    ibv_recv_wr rwr{};
    rwr.sg_list = &rsge;
    rwr.num_sge = 1;
    std::uint64_t answered = 0;
    unsigned idle = 0;
    for (;;) {
        const int r = poll_send_recv<Verify>(c, rwr);
        if (r < 0) return answered;
        if (r == 0) {
            if ((++idle & idle_check_mask) == 0 && stop.load(std::memory_order_relaxed)) return answered;
            continue;
        }
        for (int i = 0; i < r; ++i) {
            while (c.outstanding + 1 > c.p.tx_depth)
                if (poll_send_recv<Verify>(c, rwr) < 0) return answered;
            if (!detail::post_send(s, wr, c.st)) return answered;
            ++c.outstanding;
            ++c.iter;
            ++answered;
        }
    }
}

template <bool Verify>
std::size_t read_active(lat_ctx c, const std::atomic<bool>& stop, std::span<std::uint64_t> out) noexcept {
    qp_slot& s = c.s;
    const std::uint64_t n = c.p.size;
    const clock::duration timeout = c.p.peer_timeout;
    ibv_sge sge;
    ibv_send_wr wr = make_wr(s, sge, s.rx(), n, IBV_WR_RDMA_READ);
    std::size_t done = 0;
    while (done < out.size() && !stop.load(std::memory_order_relaxed)) {
        const auto t0 = clock::now();
        if (!detail::post_send(s, wr, c.st)) return done;
        ++c.outstanding;
        unsigned idle = 0;
        while (c.outstanding > 0) {
            if (!detail::reap_sends(s, c.outstanding, c.st)) return done;
            if ((++idle & idle_check_mask) == 0 && clock::now() - t0 > timeout) {
                c.st.end = loop_end::timeout;
                return done;
            }
        }
        const auto t1 = clock::now();
        out[done++] = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
        ++c.iter;
        if constexpr (Verify) detail::check(s.rx(), s.reference.data(), n, c.verify);
    }
    return done;
}

// Leaves the QP quiescent: every send completed, so the next point's loop sees only its own
// completions.
bool drain(lat_ctx& c) noexcept {
    return detail::wait_sends(c.s, c.outstanding, 0, c.p.peer_timeout, c.st);
}

}  // namespace

namespace {
// RDMA WRITE latency spins on the last byte of the receive region, which the CPU cannot do
// in GPU memory.
void require_cpu_visible(const qp_slot& s, core::rdma_op op, const std::string& where) {
    if (op == core::rdma_op::write && !s.host_memory())
        throw core::spec_error(where + ": RDMA WRITE latency polls the receive buffer from the CPU, which cannot read "
                                       "GPU memory; measure GPU memory latency with --op send");
}
}  // namespace

latency_active::latency_active(endpoint& ep, std::size_t qp, const point_params& p)
    : ep_(&ep), p_(p) {
    slot_ = &detail::prepare_slot(ep, qp, p_);
    require_cpu_visible(*slot_, p_.op, ep.where());
    if (p_.op == core::rdma_op::send) slot_->top_up_receives();
}

std::size_t latency_active::run(const std::atomic<bool>& stop, std::span<std::uint64_t> rtt_ns) {
    loop_status st;
    lat_ctx c{*slot_, p_, iter_, sends_outstanding_, verify_, st};
    std::size_t n = 0;
    // The op and verify are chosen here, once per batch; each loop is straight-line code.
    switch (p_.op) {
        case core::rdma_op::write:
            n = p_.verify ? write_active<true>(c, stop, rtt_ns) : write_active<false>(c, stop, rtt_ns);
            break;
        case core::rdma_op::send:
            n = p_.verify ? send_active<true>(c, stop, rtt_ns) : send_active<false>(c, stop, rtt_ns);
            break;
        case core::rdma_op::read:
            n = p_.verify ? read_active<true>(c, stop, rtt_ns) : read_active<false>(c, stop, rtt_ns);
            break;
    }
    if (st.ok()) drain(c);
    if (!st.ok()) detail::raise(*slot_, st, ep_->where() + " latency " + std::string(core::to_string(p_.op)), p_.peer_timeout);
    return n;
}

latency_passive::latency_passive(endpoint& ep, std::size_t qp, const point_params& p)
    : ep_(&ep), p_(p) {
    slot_ = &detail::prepare_slot(ep, qp, p_);
    require_cpu_visible(*slot_, p_.op, ep.where());
    if (p_.op == core::rdma_op::send) slot_->top_up_receives();
    if (p_.op == core::rdma_op::read && slot_->host_memory()) {
        // The active side reads this region: give it the pattern (or anything, unverified).
        std::memcpy(slot_->rx(), p_.verify ? slot_->reference.data() : slot_->tx(), p_.size);
        if (p_.corrupt_sent_for_test) detail::corrupt_for_test(slot_->rx(), p_.size);  // what the peer reads
    }
}

std::uint64_t latency_passive::run(const std::atomic<bool>& stop) {
    loop_status st;
    lat_ctx c{*slot_, p_, iter_, sends_outstanding_, verify_, st};
    std::uint64_t n = 0;
    switch (p_.op) {
        case core::rdma_op::write:
            n = p_.verify ? write_passive<true>(c, stop) : write_passive<false>(c, stop);
            break;
        case core::rdma_op::send:
            n = p_.verify ? send_passive<true>(c, stop) : send_passive<false>(c, stop);
            break;
        case core::rdma_op::read:
            // READ needs nothing from this side's CPU; wait for the caller's stop.
            while (!stop.load(std::memory_order_relaxed))
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            break;
    }
    if (st.ok()) drain(c);
    if (!st.ok()) detail::raise(*slot_, st, ep_->where() + " latency " + std::string(core::to_string(p_.op)) + " (passive)", p_.peer_timeout);
    return n;
}

}  // namespace meshperf::transport::rdma
