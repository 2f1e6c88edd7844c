#include "daemon/runtime/metrics.hpp"

#include "core/counter_verdicts.hpp"
#include "core/prometheus.hpp"
#include "core/counter_sources.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <cmath>
#include <span>

namespace meshperf::daemon {

namespace {
constexpr core::run_state final_states[] = {core::run_state::completed, core::run_state::failed, core::run_state::cancelled};

/// The size class of a collective size, for meshperf_collective_busbw_bits_per_second.
const char* size_class(std::uint64_t bytes) {
    if (bytes < (std::uint64_t{64} << 10)) return "small";
    if (bytes < (std::uint64_t{16} << 20)) return "medium";
    return "large";
}

/// Adds one group's error and congestion counters (not traffic: node_exporter has those).
void add_increases(std::map<std::tuple<std::string, std::string, std::string>, double>& out, const std::string& side,
                   const std::string& device, const core::counter_group_delta& g) {
    for (const auto& [name, delta] : g.deltas)
        if (core::meaning_of(name) != core::counter_meaning::traffic) out[{side, device, name}] += static_cast<double>(delta);
}

/// The counter increases of one end over a run's points.
void add_side(std::map<std::tuple<std::string, std::string, std::string>, double>& out, const std::string& side,
              const std::optional<core::link_side_counters>& c) {
    if (!c) return;
    for (const auto& source : c->sources) {
        const auto* kind = core::find_counter_source_kind(source.kind);
        const auto device = kind && kind->has_port ? source.device + "/" + std::to_string(source.port) : source.device;
        for (const auto& g : source.groups) add_increases(out, side, device, g);
    }
}
}  // namespace

void metrics_registry::record_collective(const core::collective_result& run) {
    const std::string transport(run.spec.transport);
    std::lock_guard lock(m_);
    ++runs_by_state_[std::string(run.state.text())];
    for (const auto& point : run.points)  // ascending sizes per op: the largest of a class is written last
        if (std::isfinite(point.busbw_gbit_per_s) && point.busbw_gbit_per_s > 0)
            collective_busbw_bps_[{std::string(core::to_string(point.op)), std::string(core::to_string(point.algo)), point.ranks,
                                   transport, size_class(point.size_bytes)}] = core::bit_per_s_from_gbit(point.busbw_gbit_per_s);
}

void metrics_registry::record_run(const core::run_result& run, std::chrono::system_clock::time_point finished) {
    const std::string peer = run.spec.peer;
    const std::string transport(run.spec.transport);
    std::lock_guard lock(m_);
    ++runs_by_state_[std::string(run.state.text())];
    auto& p = peers_[{peer, transport}];
    p.last_run_unix_s = std::chrono::duration<double>(finished.time_since_epoch()).count();
    p.last_ok = run.state == core::run_state::completed;
    if (run.state == core::run_state::failed) ++p.failures;
    p.recorded = ++record_seq_;
    std::map<counter_key, double> increases;
    for (const auto& point : run.points) {
        add_side(increases, "initiator", point.link.initiator);
        add_side(increases, "peer", point.link.peer);
        for (const auto& r : point.rail_links) {  // device: each rail's own interface
            add_side(increases, "initiator", r.link.initiator);
            add_side(increases, "peer", r.link.peer);
        }
        if (point.tcp_counters && point.tcp_counters->segments_sent > 0)
            retransmit_ratio_[{peer, transport, std::string(core::to_string(point.test)), point.size_bytes}] =
                point.tcp_counters->retransmit_share();
        if (point.test == core::test_kind::latency) {
            if (point.lat_ns && point.lat_ns->count > 0) latency_ns_[{peer, transport, point.size_bytes}] = *point.lat_ns;
        } else if (std::isfinite(point.gbit_per_s) && point.gbit_per_s > 0) {
            bandwidth_bps_[{peer, transport, std::string(core::to_string(point.test)), point.size_bytes}] = core::bit_per_s_from_gbit(point.gbit_per_s);
        }
    }
    if (!increases.empty()) counter_increase_[{peer, transport}] = std::move(increases);
    evict_locked();
}

namespace {

/// Erases the entries of `m` whose key starts with (peer, transport).
template <class Map>
void erase_peer(Map& m, const std::string& peer, const std::string& transport) {
    std::erase_if(m, [&](const auto& kv) { return std::get<0>(kv.first) == peer && std::get<1>(kv.first) == transport; });
}

}  // namespace

void metrics_registry::evict_locked() {
    while (peers_.size() > max_peers_) {
        const auto oldest = std::min_element(peers_.begin(), peers_.end(),
                                             [](const auto& a, const auto& b) { return a.second.recorded < b.second.recorded; });
        const auto [peer, transport] = oldest->first;
        peers_.erase(oldest);
        erase_peer(bandwidth_bps_, peer, transport);
        erase_peer(latency_ns_, peer, transport);
        erase_peer(retransmit_ratio_, peer, transport);
        counter_increase_.erase({peer, transport});
        ++evicted_;
    }
}

std::string metrics_registry::render(std::size_t queued) const {
    using core::metric_type;
    core::exposition e;
    e.declare("meshperf_build_info", metric_type::gauge, "meshperfd version; always 1.");
    e.declare("meshperf_runs_total", metric_type::counter, "Runs this daemon initiated that finished, by final state.");
    e.declare("meshperf_run_failures_total", metric_type::counter, "Runs against a peer that failed (peer unreachable, error during a point).");
    e.declare("meshperf_run_queue_length", metric_type::gauge, "Runs waiting behind the current measurement.");
    e.declare("meshperf_bandwidth_bits_per_second", metric_type::gauge,
              "Latest bandwidth to a peer (sum over streams, counted at the receiver).");
    e.declare("meshperf_latency_seconds", metric_type::summary,
              "Latest one-way latency to a peer (round trip / 2); quantile 0 is the minimum, 1 the maximum.");
    e.declare("meshperf_last_run_timestamp_seconds", metric_type::gauge, "When the latest run against a peer ended, seconds since the Unix epoch.");
    e.declare("meshperf_last_run_success", metric_type::gauge, "1 when the latest run against a peer completed, 0 when it did not.");

    e.declare("meshperf_collective_busbw_bits_per_second", metric_type::gauge,
              "Latest collective bus bandwidth (nccl-tests busbw) at the largest size measured in its class "
              "(small < 64 KiB <= medium < 16 MiB <= large).");
    e.declare("meshperf_tcp_retransmit_ratio", metric_type::gauge,
              "Retransmitted / sent TCP segments of the latest bandwidth point to a peer, in its measured window.");
    e.declare("meshperf_link_counter_increase", metric_type::gauge,
              "How much an error or congestion counter of the NIC or RDMA port (side: initiator or peer) rose over the "
              "latest run's points to a peer; meaning: fatal, error, symbol_rate or congestion (docs/counters.md); traffic "
              "counters: node_exporter's netdev and infiniband collectors.");
    e.declare("meshperf_metrics_evicted_peers_total", metric_type::counter,
              "Peers (with their transport) whose series were dropped to keep /metrics bounded ([limits] metrics_max_peers): "
              "the least recently measured go first.");
    e.add("meshperf_build_info", {{"version", MESHPERF_VERSION}}, 1);
    e.add("meshperf_run_queue_length", std::span<const core::metric_label>{}, static_cast<double>(queued));
    std::lock_guard lock(m_);
    for (const auto state : final_states) {
        const std::string s(core::to_string(state));
        const auto it = runs_by_state_.find(s);
        e.add("meshperf_runs_total", {{"state", s}}, it == runs_by_state_.end() ? 0.0 : static_cast<double>(it->second));
    }
    e.add("meshperf_metrics_evicted_peers_total", std::span<const core::metric_label>{}, static_cast<double>(evicted_));
    for (const auto& [key, p] : peers_) {
        const auto& [peer, transport] = key;
        e.add("meshperf_run_failures_total", {{"peer", peer}, {"transport", transport}}, static_cast<double>(p.failures));
        e.add("meshperf_last_run_timestamp_seconds", {{"peer", peer}, {"transport", transport}}, p.last_run_unix_s);
        e.add("meshperf_last_run_success", {{"peer", peer}, {"transport", transport}}, p.last_ok ? 1.0 : 0.0);
    }
    for (const auto& [key, bps] : bandwidth_bps_) {
        const auto& [peer, transport, test, size] = key;
        e.add("meshperf_bandwidth_bits_per_second",
              {{"peer", peer}, {"transport", transport}, {"test", test}, {"size_bytes", std::to_string(size)}}, bps);
    }
    for (const auto& [key, s] : latency_ns_) {
        const auto& [peer, transport, size] = key;
        const std::pair<const char*, double> quantiles[] = {{"0", s.min},     {"0.5", s.p50},   {"0.9", s.p90},
                                                            {"0.99", s.p99}, {"0.999", s.p999}, {"1", s.max}};
        for (const auto& [q, ns] : quantiles)
            e.add("meshperf_latency_seconds",
                  {{"peer", peer}, {"transport", transport}, {"size_bytes", std::to_string(size)}, {"quantile", q}}, core::seconds_from_ns_by_factor(ns));
    }
    for (const auto& [key, bps] : collective_busbw_bps_) {
        const auto& [op, algo, ranks, transport, cls] = key;
        e.add("meshperf_collective_busbw_bits_per_second",
              {{"op", op}, {"algo", algo}, {"ranks", std::to_string(ranks)}, {"transport", transport}, {"size_class", cls}}, bps);
    }
    for (const auto& [key, ratio] : retransmit_ratio_) {
        const auto& [peer, transport, test, size] = key;
        e.add("meshperf_tcp_retransmit_ratio",
              {{"peer", peer}, {"transport", transport}, {"test", test}, {"size_bytes", std::to_string(size)}}, ratio);
    }
    for (const auto& [key, counters] : counter_increase_) {
        const auto& [peer, transport] = key;
        for (const auto& [ckey, value] : counters) {
            const auto& [side, device, counter] = ckey;
            e.add("meshperf_link_counter_increase",
                  {{"peer", peer}, {"transport", transport}, {"side", side}, {"device", device}, {"counter", counter},
                   {"meaning", std::string(core::to_string(core::meaning_of(counter)))}},
                  value);
        }
    }
    return e.render() + inspection_;
}

void metrics_registry::record_inspection(std::string exposition) {
    std::lock_guard lock(m_);
    inspection_ = std::move(exposition);
}

}  // namespace meshperf::daemon
