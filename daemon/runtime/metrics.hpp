#pragma once
/// What GET /metrics exports: the latest figures of every peer this daemon measured (runs
/// started by clients and scheduled probes alike), run counters and the queue, in the
/// Prometheus text format (core/prometheus.hpp).
///
/// Families (names per Prometheus conventions: base units, `_total` counters):
/// - meshperf_build_info{version} 1
/// - meshperf_runs_total{state}: finished runs by final state (completed, failed, cancelled)
/// - meshperf_run_failures_total{peer, transport}: failed runs per peer
/// - meshperf_run_queue_length: runs waiting behind the current measurement
/// - meshperf_bandwidth_bits_per_second{peer, transport, test, size_bytes}: latest bandwidth
///   (test bandwidth or bidir, the sum over flows, counted at the receivers)
/// - meshperf_latency_seconds{peer, transport, size_bytes, quantile}: latest one-way latency
///   (summary without _sum and _count: quantiles 0 = min, 0.5, 0.9, 0.99, 0.999, 1 = max)
/// - meshperf_last_run_timestamp_seconds{peer, transport}: when the latest run ended
/// - meshperf_last_run_success{peer, transport}: 1 when it completed, 0 when it failed
/// - meshperf_collective_busbw_bits_per_second{op, algo, ranks, transport, size_class}: the
///   latest collective run's bus bandwidth (nccl-tests' busbw) at the largest size it measured
///   in each class: "small" below 64 KiB, "medium" below 16 MiB, "large" from 16 MiB
/// - meshperf_tcp_retransmit_ratio{peer, transport, test, size_bytes}: retransmitted /
///   sent segments of the latest bandwidth or bidir point (docs/counters.md)
/// - meshperf_link_counter_increase{peer, transport, side, device, counter, meaning}: how much each
///   error and congestion counter of the NIC or RDMA port (initiator or peer side) rose
///   over the latest run's points together; traffic counters are left to node_exporter
/// - meshperf_metrics_evicted_peers_total: (peer, transport) pairs whose series were dropped to
///   keep at most `max_peers` of them (the least recently measured go first)
/// - the latest inspection's families (daemon/runtime/inspect_metrics.hpp: those of
///   node/inspect_textfile.hpp, meshperf_inspect_state, meshperf_inspect_findings{state},
///   meshperf_inspect_timestamp_seconds, rail rates, PCIe links, GPU-rail pairs, the same
///   series `meshperf inspect --prom-file` writes; and per check, per finding not OK, the
///   loopback): the scheduled inspection's ([inspect]), or without a schedule the latest
///   /v1/inspect answer's
#include "core/collective/result.hpp"
#include "core/result.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace meshperf::daemon {

/// How many (peer, transport) pairs /metrics keeps series for by default ([limits]
/// metrics_max_peers): every distinct peer of a run adds series, and runs name any peer.
inline constexpr std::size_t default_metrics_max_peers = 256;

class metrics_registry {
public:
    /// Keeps the series of at most `max_peers` (peer, transport) pairs (at least 1).
    explicit metrics_registry(std::size_t max_peers = default_metrics_max_peers) : max_peers_(max_peers ? max_peers : 1) {}

    /// Takes the figures of a finished run (completed, failed or cancelled; the points it
    /// measured count either way). Called on the executor thread; thread-safe.
    void record_run(const core::run_result& run, std::chrono::system_clock::time_point finished =
                                                      std::chrono::system_clock::now());

    /// Takes the points of a finished collective run this daemon coordinated (its state counts
    /// in meshperf_runs_total). Thread-safe.
    void record_collective(const core::collective_result& run);
    /// Keeps the exposition of the latest inspection (inspection_exposition of its
    /// document), served after the run families until the next one. Thread-safe.
    void record_inspection(std::string exposition);
    /// The exposition text. `queued`: runs waiting now. Thread-safe.
    std::string render(std::size_t queued) const;

private:
    using peer_key = std::tuple<std::string, std::string>;                              // peer, transport
    using bw_key = std::tuple<std::string, std::string, std::string, std::uint64_t>;    // + test, size
    using lat_key = std::tuple<std::string, std::string, std::uint64_t>;                // + size
    struct peer_state {
        double last_run_unix_s = 0;
        bool last_ok = false;
        std::uint64_t failures = 0;
        std::uint64_t recorded = 0;  ///< when its latest run was recorded (record_seq_): the eviction order
    };
    /// Drops the least recently recorded pairs and all their series until max_peers_ remain.
    void evict_locked();
    std::size_t max_peers_;
    std::uint64_t record_seq_ = 0;
    std::uint64_t evicted_ = 0;
    mutable std::mutex m_;
    std::map<std::string, std::uint64_t> runs_by_state_;
    std::map<peer_key, peer_state> peers_;
    std::map<bw_key, double> bandwidth_bps_;
    std::map<lat_key, core::summary> latency_ns_;
    using collective_key = std::tuple<std::string, std::string, unsigned, std::string, std::string>;  // op, algo, ranks, transport, class
    std::map<collective_key, double> collective_busbw_bps_;
    std::map<bw_key, double> retransmit_ratio_;
    /// The latest run's counter increases per peer: side, device, counter -> sum over its points.
    using counter_key = std::tuple<std::string, std::string, std::string>;
    std::map<peer_key, std::map<counter_key, double>> counter_increase_;
    std::string inspection_;  ///< the latest inspection's exposition (empty: none yet)
};

}  // namespace meshperf::daemon
