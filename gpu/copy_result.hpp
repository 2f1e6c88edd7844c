#pragma once
/// Local copy sweeps: what is measured (host->device, device->host, device->device, and
/// GPU to GPU) and the figures per size, with their sanity check. Plain C++, no I/O: the
/// sweep itself is in copy_sweep.hpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::gpu {

/// A copy direction.
enum class copy_kind {
    h2d,  ///< pinned host memory -> device memory
    d2h,  ///< device memory -> pinned host memory
    d2d,  ///< within one device's memory
    p2p,  ///< one device's memory -> another device's memory
};

/// "h2d", "d2h", "d2d", "p2p".
std::string_view to_string(copy_kind);

/// Parses a comma-separated list ("h2d,d2h,d2d,p2p"), in the order given, without
/// duplicates. Throws core::spec_error naming the bad item and the accepted ones.
std::vector<copy_kind> parse_copy_kinds(std::string_view text);

/// One measured size. Rates are GB/s (10^9 bytes per second) of bytes copied (a d2d copy
/// reads and writes each byte once; that counts as one byte).
struct copy_point {
    std::uint64_t size_bytes = 0;
    double gb_per_s = 0;            ///< median of the batch rates
    double gb_per_s_min = 0;        ///< slowest batch
    double gb_per_s_max = 0;        ///< fastest batch
    double seconds_per_copy = 0;    ///< size_bytes / (gb_per_s * 1e9)
    unsigned batches = 0;           ///< timed batches (CUDA events around each)
    unsigned copies_per_batch = 0;  ///< back-to-back copies in one batch
    bool verify = false;            ///< --verify was on for this point
    std::uint64_t mismatched_bytes = 0;  ///< with verify: bytes that differed after a copy

    /// Verification ran and every byte matched.
    bool verified() const noexcept { return verify && mismatched_bytes == 0; }
};

/// A sweep of one direction between one source and one destination.
struct copy_result {
    copy_kind kind = copy_kind::h2d;
    std::string src;                ///< "host" or "cuda:N"
    std::string dst;
    /// p2p: direct peer access was enabled; otherwise the driver stages through the host.
    bool peer_access = false;
    std::vector<copy_point> points;
    std::vector<std::string> warnings;
    bool cancelled = false;         ///< the stop token fired; points hold what was measured

    /// Some point's verification found differing bytes.
    bool verify_failed() const noexcept;
};

/// Copies per timed batch so that one batch lasts about min_batch_seconds, given the time
/// of one copy; at least 1 and at most max_copies. A non-finite or non-positive time gives
/// max_copies.
unsigned copies_per_batch(double seconds_per_copy, double min_batch_seconds, unsigned max_copies) noexcept;

/// GB/s (10^9 B/s) of bytes moved in seconds; 0 when seconds is not positive.
double gb_per_s(double bytes, double seconds) noexcept;

/// Builds a point from the per-batch rates (GB/s): median, min, max, seconds per copy.
/// Requires at least one rate. Does not check sanity (check_sane does).
copy_point summarize_batches(std::uint64_t size_bytes, std::vector<double> batch_gb_per_s,
                             unsigned copies_per_batch);

/// Throws core::insane_figure unless the size and every rate are positive and finite,
/// min <= median <= max, and seconds_per_copy agrees with size / rate within 0.1%.
void check_sane(const copy_point&);

}  // namespace meshperf::gpu
