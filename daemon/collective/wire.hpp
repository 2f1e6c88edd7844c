#pragma once
/// What the sessions of a collective run carry, shared by the coordinator
/// (daemon/collective/coordinator) and every other rank
/// (daemon/collective/participant), over the peer session of the pairwise runs:
///
///     coordinator -> rank   hello       {protocol, version, run_id, collective: spec, rank, token, initiator, limits}
///     rank -> coordinator   hello_ok    {protocol, host, limits}          (or error: the rank refuses the plan)
///     coordinator -> rank   point_go    {mesh: true}   every rank expects its data connections: open yours
///     rank -> coordinator   point_ready {}             connected
///     per op and size:
///     coordinator -> rank   point_begin {op, size, index}
///     rank -> coordinator   point_done  {iteration_s, link_in_s, wrong[, from_sender_s, link_counters, send_tcp]}  (or error {message, blame})
///     coordinator -> rank   bye
///
/// The data connections are /v1/stream upgrades with one token per pair of ranks; the lower
/// rank opens them. Everything read from a peer is checked: a peer's JSON is not trusted.
#include "core/collective/spec.hpp"
#include "core/run_spec.hpp"
#include "daemon/collective/engine.hpp"
#include "daemon/test_hooks/collective_hooks.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// One op at one size of the run, as point_begin announces it.
struct collective_size_key {
    core::collective_op op = core::collective_op::allreduce;
    std::uint64_t size = 0;
    std::size_t index = 0;  ///< 1-based, over every op and size of the run
};

nlohmann::json to_json(const collective_size_key&);
/// Reads a point_begin body; throws session_error unless the op and the size are the spec's.
collective_size_key collective_size_key_from_json(const nlohmann::json&, const core::collective_spec&);

/// "allreduce 16 MiB".
std::string describe(const collective_size_key&);

/// A rank's point_done body.
nlohmann::json to_json(const rank_timing&);
/// Reads a rank's point_done; throws session_error unless it holds between 1 and
/// max_iterations times, each finite and > 0, link times likewise (as many, or none), and
/// a wrong count where `verify` asks for one; an incast receiver's from_sender_s (at most
/// max_ranks arrays, each empty or one time per iteration, finite and > 0); link_counters and
/// send_tcp (core::tcp_point_counters) when present, each well formed and sane, else a
/// session_error naming the field.
rank_timing rank_timing_from_json(const nlohmann::json&, std::uint64_t max_iterations, bool verify);

/// The collective limits of a daemon: its run limits, the default rank count.
core::collective_limits collective_limits_of(const core::run_limits&);
/// The normalizer of hosts (transport::parse_endpoint(h).to_string()).
std::string normalize_host(std::string_view);
/// The algorithm of each op of the spec, in its order.
std::vector<core::collective_algo> algos_of(const core::collective_spec&);
/// How every size of the run is iterated, under this daemon's limits, with its test hooks.
size_run_options run_options_of(const core::collective_spec&, const core::run_limits&, const collective_test_hooks&);
/// Checks that this daemon can hold the run's buffers in spec.memory (require_memory_domain;
/// always true for a GPU the hooks emulate). Throws as require_memory_domain, the message
/// starting with `side`.
void require_collective_memory(const core::collective_spec&, const collective_test_hooks&, const std::string& side);

/// "rank 3 (10.0.0.4:7470)".
std::string rank_name(const core::collective_spec&, unsigned rank);

/// A random token for the run's data connections (32 hex digits).
std::string new_mesh_token();

}  // namespace meshperf::daemon
