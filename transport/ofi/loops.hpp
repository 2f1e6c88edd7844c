#pragma once
/// Latency and bandwidth loops over one libfabric endpoint (one stream), send/receive
/// semantics (tagged or untagged messages). The receiving side counts bytes and checks the
/// pattern, as for RDMA SEND (docs/ofi.md).
///
/// Protocol per point (the session supplies the order): both sides construct their loop
/// (this arms it: receives posted), the passive side runs first, the active side after the
/// peer said ready; the active side ends (latency: by itself; bandwidth: on stop) and tells
/// the passive side how many messages it sent; the passive side expect()s that count, then
/// stops once they all arrived, or fails after peer_timeout. Every loop returns with no
/// operation outstanding on its endpoint (posted receives are cancelled and their
/// completions drained), so the next point starts clean.
#include "transport/ofi/endpoint.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace meshperf::transport::ofi {

struct point_params {
    std::uint64_t size = 1;
    /// Sends in flight at once (bandwidth); at most the endpoint's slots.
    std::uint32_t window = 64;
    bool verify = false;
    std::uint32_t pattern_seed = 0;
    /// The point's tag (tagged messages): a point never matches an earlier point's messages.
    std::uint64_t tag = 0;
    /// Test hook (MESHPERF_TEST_CORRUPT_OFI): one byte of every message sent is flipped.
    bool corrupt_sent_for_test = false;
    /// How long a side waits for the peer's messages or completions before it fails.
    std::chrono::milliseconds peer_timeout{5000};
};

/// Messages compared with the pattern.
struct verify_report {
    std::uint64_t checked = 0;
    std::uint64_t corrupt = 0;
    std::uint64_t first_bad_offset = 0;
    bool ok() const noexcept { return corrupt == 0; }
};

/// What a bandwidth loop has moved; written by its thread, read by any (relaxed).
struct bandwidth_counters {
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<std::uint64_t> messages{0};
};

/// The side that starts and times each round trip.
class latency_active {
public:
    /// Arms the endpoint for the point: fills the pattern. Throws core::spec_error for a size
    /// over the endpoint's buffers.
    latency_active(endpoint& ep, const point_params& p);
    /// Runs round trips until stop or rtt_ns is full, each RTT in ns (post of the ping to the
    /// reply's completion). Returns how many it wrote. Throws ofi_error on a failed
    /// completion or a reply that does not come within peer_timeout.
    std::size_t run(const std::atomic<bool>& stop, std::span<std::uint64_t> rtt_ns);
    const verify_report& verification() const noexcept { return verify_; }

private:
    endpoint& ep_;
    point_params p_;
    std::vector<std::byte> reference_;
    verify_report verify_;
};

/// The side that answers each ping.
class latency_passive {
public:
    /// Posts the first receive. Construct before telling the peer "ready".
    latency_passive(endpoint& ep, const point_params& p);
    /// Answers pings until stop; then cancels its receive. Throws ofi_error.
    void run(const std::atomic<bool>& stop);
    const verify_report& verification() const noexcept { return verify_; }

private:
    endpoint& ep_;
    point_params p_;
    std::vector<std::byte> reference_;
    verify_report verify_;
};

/// The sending side of a bandwidth stream.
class bandwidth_active {
public:
    bandwidth_active(endpoint& ep, const point_params& p);
    /// Keeps `window` sends in flight until stop, then waits for every one to complete.
    /// Throws ofi_error on a failed completion or none for peer_timeout.
    void run(const std::atomic<bool>& stop);
    /// Messages sent (all completed once run() returned): what the passive side expects.
    std::uint64_t messages() const noexcept { return counters_.messages.load(std::memory_order_relaxed); }
    const bandwidth_counters& counters() const noexcept { return counters_; }

private:
    endpoint& ep_;
    point_params p_;
    bandwidth_counters counters_;
};

/// The receiving side of a bandwidth stream: counts and checks what arrives.
class bandwidth_passive {
public:
    /// Posts a receive in every slot. Construct before telling the peer "ready".
    bandwidth_passive(endpoint& ep, const point_params& p);
    /// Receives until stop and then until expect()'s count arrived (without expect(): until
    /// nothing arrives for 1 ms); fails when announced messages do not arrive within
    /// peer_timeout after stop.
    void run(const std::atomic<bool>& stop);
    /// The active side's message count; call before setting the stop flag.
    void expect(std::uint64_t messages) noexcept { expected_.store(messages, std::memory_order_release); }
    const bandwidth_counters& counters() const noexcept { return counters_; }
    const verify_report& verification() const noexcept { return verify_; }

private:
    static constexpr std::uint64_t unknown = std::numeric_limits<std::uint64_t>::max();
    endpoint& ep_;
    point_params p_;
    std::vector<std::byte> reference_;
    bandwidth_counters counters_;
    verify_report verify_;
    std::atomic<std::uint64_t> expected_{unknown};
};

}  // namespace meshperf::transport::ofi
