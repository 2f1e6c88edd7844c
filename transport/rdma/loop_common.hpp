#pragma once
/// Private to transport/rdma: what the latency and bandwidth loops share. Nothing here
/// allocates, logs or throws except raise(), which runs once after a loop has ended.
#include "transport/rdma/endpoint.hpp"
#include "transport/rdma/point.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace meshperf::transport::rdma::detail {

using clock = std::chrono::steady_clock;

/// Look at the clock and the stop flag once every this many idle polls (+1).
inline constexpr unsigned idle_check_mask = 0x3ff;

/// How a loop ended.
enum class loop_end : std::uint8_t { ok, wc_error, post_error, poll_error, timeout };

struct loop_status {
    loop_end end = loop_end::ok;
    int code = 0;              ///< errno (post/poll) or ibv_wc_status
    std::uint64_t missing = 0; ///< timeout of a receiver: messages announced but not received

    bool ok() const noexcept { return end == loop_end::ok; }
    void fail_wc(const ibv_wc& wc) noexcept {
        end = loop_end::wc_error;
        code = wc.status;
    }
    void fail_post(int rc) noexcept {
        end = loop_end::post_error;
        code = rc;
    }
    void fail_poll(int rc) noexcept {
        end = loop_end::poll_error;
        code = rc;
    }
};

/// Posts one send work request (or a chain). False, with st set, when the provider refuses it.
inline bool post_send(qp_slot& s, ibv_send_wr& wr, loop_status& st) noexcept {
    ibv_send_wr* bad = nullptr;
    if (const int rc = ibv_post_send(s.qp.get(), &wr, &bad)) {
        st.fail_post(rc);
        return false;
    }
    return true;
}

/// Posts one receive work request (or a chain). False, with st set, when the provider refuses it.
inline bool post_recv(qp_slot& s, ibv_recv_wr& wr, loop_status& st) noexcept {
    ibv_recv_wr* bad = nullptr;
    if (const int rc = ibv_post_recv(s.qp.get(), &wr, &bad)) {
        st.fail_post(rc);
        return false;
    }
    return true;
}

/// Throws the rdma_error for a loop that ended in error and marks the slot failed.
[[noreturn]] void raise(qp_slot& s, const loop_status& st, std::string_view what,
                        std::chrono::milliseconds timeout);

/// Checks a received message against the reference pattern.
inline void check(const std::byte* got, const std::byte* want, std::size_t n,
                  verify_report& r) noexcept {
    ++r.checked;
    if (std::memcmp(got, want, n) == 0) return;
    if (r.corrupt++ == 0)
        for (std::size_t i = 0; i < n; ++i)
            if (got[i] != want[i]) {
                r.first_bad_offset = i;
                break;
            }
}

/// Checks a SEND that landed in the slot's receive region: a message of the wrong length is
/// corrupt (its length is reported as the bad offset), one of the right length is compared.
inline void check_received(qp_slot& s, const ibv_wc& wc, std::uint64_t size, verify_report& r) noexcept {
    if (wc.byte_len != size) {
        ++r.checked;
        if (r.corrupt++ == 0) r.first_bad_offset = wc.byte_len;
        return;
    }
    check(s.rx(), s.reference.data(), size, r);
}

/// Checks a region the peer RDMA-wrote once its last byte (the round trip's marker, not
/// part of the pattern check) has been seen: the fence orders the reads after that poll.
inline void check_written(qp_slot& s, std::uint64_t size, verify_report& r) noexcept {
    std::atomic_thread_fence(std::memory_order_acquire);
    check(s.rx(), s.reference.data(), size - 1, r);
}

/// Send completions outstanding on a latency QP, retired without blocking. Returns false
/// (with st set) on an error completion. The CQ must carry no receives when this is used.
inline bool reap_sends(qp_slot& s, std::uint32_t& outstanding, loop_status& st) noexcept {
    ibv_wc wc[16];
    const int n = ibv_poll_cq(s.cq.get(), 16, wc);
    if (n < 0) {
        st.fail_poll(-n);
        return false;
    }
    for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) {
            st.fail_wc(wc[i]);
            return false;
        }
        --outstanding;
    }
    return true;
}

/// Blocks until at most `keep` sends are outstanding, or the timeout. Returns false on error.
inline bool wait_sends(qp_slot& s, std::uint32_t& outstanding, std::uint32_t keep,
                       clock::duration timeout, loop_status& st) noexcept {
    const auto t0 = clock::now();
    unsigned idle = 0;
    while (outstanding > keep) {
        if (!reap_sends(s, outstanding, st)) return false;
        if ((++idle & idle_check_mask) == 0 && clock::now() - t0 > timeout) {
            st.end = loop_end::timeout;
            return false;
        }
    }
    return true;
}

/// The test hook of point_params::corrupt_sent_for_test: flips one byte of a region of
/// `size` bytes that goes to the peer. The byte is in the first half and never the last one
/// (WRITE latency's round-trip marker, which the check leaves out and each round trip
/// overwrites), so it is compared wherever a message of 2 bytes or more is.
inline void corrupt_for_test(std::byte* region, std::uint64_t size) noexcept {
    region[(size - 1) / 2] ^= std::byte{0x5a};
}

/// Validates a point against an endpoint's QP and fills the verify reference. Throws
/// core::spec_error for bad parameters, rdma_error for an unusable QP.
qp_slot& prepare_slot(endpoint& ep, std::size_t qp, point_params& p);

}  // namespace meshperf::transport::rdma::detail
