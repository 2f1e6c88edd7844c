#pragma once
/// Runs local copy sweeps on the copy engines: for each size, warm-up copies, then batches
/// of back-to-back cudaMemcpyAsync timed with CUDA events; optionally a verified copy of a
/// pattern. Measurement only: returns values, never prints. Plain C++.
#include "gpu/copy_result.hpp"

#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <vector>

namespace meshperf::gpu {

/// How to sweep.
struct copy_options {
    std::vector<std::uint64_t> sizes;   ///< bytes per copy, each > 0 (core::parse_size_list)
    int device = 0;                     ///< h2d, d2h, d2d: the device; p2p: the source
    int peer_device = 1;                ///< p2p: the destination
    unsigned warmup_copies = 4;         ///< untimed copies before each size (also calibrate the batch)
    unsigned batches = 5;               ///< timed batches per size; the median batch rate is reported
    double min_batch_seconds = 0.02;    ///< each batch repeats the copy until it lasts about this long
    unsigned max_copies_per_batch = 20000;
    bool verify = false;                ///< after timing, copy a pattern and count differing bytes
    /// Called after each size with its point (on the calling thread), e.g. to stream events.
    std::function<void(const copy_point&)> on_point;
    /// Called before each size is measured (warm-up included), with its size; all_gpu_copies
    /// starts every GPU's size together with it.
    std::function<void(std::uint64_t size_bytes)> before_size;
    /// Called once a size's timed batches are done (before its verification).
    std::function<void()> timed_done;
    /// Polled after timed_done: while it says true, one more untimed copy of the size, so a
    /// GPU done early keeps loading the host and the PCIe tree while others are still timed
    /// (all_gpu_copies: until every GPU's timed batches of the size are done).
    std::function<bool()> keep_loading;
    /// Checked between sizes and batches; when stop is requested the result is returned
    /// with cancelled = true and the points measured so far.
    std::stop_token stop;
};

/// Sweeps one direction. Allocates the source and destination once at the largest size
/// (device memory with cudaMalloc, host memory pinned). Throws std::system_error for CUDA
/// failures (no driver, no device, out of memory: see status.hpp), core::spec_error for bad
/// options (no sizes, p2p with device == peer_device), core::insane_figure when a timed
/// figure fails check_sane. A verify mismatch does not throw: see copy_result::verify_failed.
copy_result run_copy_sweep(copy_kind kind, const copy_options& options);

/// The GPU-to-GPU matrix: run_copy_sweep(p2p) for every ordered pair of distinct devices
/// (options.device and peer_device are ignored).
struct copy_matrix {
    int device_count = 0;
    std::vector<copy_result> pairs;  ///< src-major: (0,1), (0,2), ..., (1,0), ...
    /// Non-empty when the matrix cannot be measured here ("needs at least two GPUs: ...").
    std::string waived;
};
copy_matrix run_p2p_matrix(const copy_options& options);

}  // namespace meshperf::gpu
