#pragma once
/// The data path of a measured collective at one rank:
/// the rank's plan (core/collective/plan.hpp) run over its data connections, every step's
/// sends and receives progressing together on non-blocking sockets (so a ring moves data on
/// every link at once), reductions done as whole elements arrive; a dissemination barrier
/// before every iteration that also carries rank 0's decision to stop; warm-up, timed
/// iterations and the verification pass. One thread per rank; nothing here sends a session
/// frame. Every wait is bounded: a peer that closes, resets or sends nothing for the stall
/// limit ends the size with a collective_fault naming it.
#include "core/collective/plan.hpp"
#include "core/link_counters.hpp"
#include "core/point_counters.hpp"
#include "daemon/collective/step_fault.hpp"
#include "transport/mesh/connections.hpp"
#include "transport/mesh/device_memory.hpp"
#include "transport/link_counters_reader.hpp"
#include "transport/socket.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// One rank's data connections (transport/mesh/connections.hpp): a socket per peer rank it
/// exchanges data or barrier tokens with, and the transport's own links where it has them.
using collective_mesh = transport::mesh::connections;

/// How long a step may pass without a byte moving before the rank gives up on the peers it
/// still waits for. Short enough that every rank of a run whose rank froze is released within
/// 10 s (the neighbours of a frozen rank stall, give up and close, and the closing cascades),
/// long enough for a live peer that is merely slow between two bytes.
inline constexpr std::chrono::seconds collective_stall_limit{5};

/// How much longer than the stall limit a rank waits at a size's first barrier for ranks still
/// setting up their buffers (allocation, fill, upload, registration), given what its own set-up
/// took: twice that, at least 1 s. Peers run the same set-up at the same time, so a live one is
/// late by a fraction of it; a rank frozen before the barrier is named within the stall limit
/// plus this, not after a flat grace that would dwarf the stall limit.
inline double first_barrier_grace_s(double own_setup_s) {
    return std::isfinite(own_setup_s) && own_setup_s > 0.5 ? 2 * own_setup_s : 1.0;
}

/// How one size is run: counts and times from the spec and the daemon's limits.
struct size_run_options {
    std::uint64_t warmup_iterations = 0;
    std::optional<std::uint64_t> iterations;  ///< a fixed count, or
    std::optional<double> duration_s;         ///< iterate for this long (at least once)
    std::uint64_t max_iterations = 0;         ///< the daemon's cap on either
    double max_duration_s = 0;                ///< the daemon's cap on a size's timed iterations (0: none)
    bool verify = false;                      ///< one more, untimed iteration on fresh inputs, checked
    /// Test hook (MESHPERF_TEST_CORRUPT_COLLECTIVE): flips a bit of the first element of every
    /// message this rank sends, so `--verify` must find wrong elements.
    bool corrupt = false;
    /// Where the buffers live: empty for host memory, else their device (transport/mesh/device_memory.hpp).
    transport::mesh::device_memory_factory device_memory;
    /// This rank's NIC, whose counters are read around each size's timed iterations (the
    /// interface of its session's address; empty: not read), under `sysfs_root`. Over RDMA
    /// the port its links use is read with it (counters and hw_counters; data_links::count_port).
    transport::link_counter_target link_counter_target;
    std::filesystem::path sysfs_root = "/sys";
};

/// What one rank measured of one op at one size.
struct rank_timing {
    std::vector<double> iteration_s;     ///< each timed iteration, seconds (from the barrier's release)
    /// plan.times_link_from_left: per iteration, the link from its left neighbour as this rank
    /// saw it: over the steps, from the first to the last byte of each message that came over
    /// it: the iteration's bytes from the left at the rate the link delivered over all timed
    /// iterations (the bytes after each message's first arrival, over the first-to-last-byte
    /// intervals), at most the iteration's time. A receiver's view: a sender's clock stops
    /// once a chunk is in its socket buffer (which holds megabytes), so it cannot time a link.
    /// Empty when every message came at once (small sizes): nothing timed the link then, and
    /// a figure from it would be the clock's resolution, not the link.
    std::vector<double> link_in_s;
    std::optional<std::uint64_t> wrong;  ///< wrong elements of the verification pass, when verified
    /// An incast's receiver only: per sender rank (index = rank; empty for itself), each timed
    /// iteration's time until every byte of that sender had arrived. A sender's own clock
    /// stops when its data is in its socket buffer, which says nothing of the path when S fits
    /// there; the receiver's says when the data came.
    std::vector<std::vector<double>> from_sender_s;
    /// What this rank's NIC counted over the timed iterations (before the first, after the
    /// last); empty when they could not be read (docs/counters.md).
    std::optional<core::link_side_counters> link_counters;
    /// TCP meshes: what the sockets this rank sends data on counted over the timed iterations
    /// (TCP_INFO just before the first and just after the last, never inside them): for ring
    /// algorithms the socket to the right neighbour, rank + 1 mod p, so exactly the link
    /// rank -> right; otherwise summed over the peers it sends data to. Empty over RDMA, when
    /// a socket could not be read (never zeros), and for a rank that sends no data.
    std::optional<core::tcp_point_counters> send_tcp;
};

/// Runs `plan` over `mesh`: warm-up, then iterations until rank 0 says stop (count reached,
/// duration passed, or max_iterations), then the verification pass. Every rank of the run must
/// call it with the same op, size and options. Throws collective_fault, run_cancelled when
/// `cancel` is set (within about 0.1 s), or std::bad_alloc for a buffer that cannot be had.
rank_timing measure_collective_size(const core::collective_plan& plan, collective_mesh& mesh, const size_run_options& options,
                                    const std::atomic<bool>& cancel);

/// The ranks rank `rank` needs a connection to for every op of a run over `ranks` ranks: the
/// data peers of its plans (at `size_bytes`, a size every op can run) and its barrier
/// partners, ascending.
std::vector<unsigned> mesh_peers(const std::vector<core::collective_op>& ops, const std::vector<core::collective_algo>& algos,
                                 unsigned ranks, unsigned rank, core::dtype element, std::uint64_t size_bytes);

}  // namespace meshperf::daemon
