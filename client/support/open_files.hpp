#pragma once
/// How many measurements the CLI may run at once within its open-file limit
/// (RLIMIT_NOFILE), and the default `--parallel` of `meshperf matrix` that follows from it:
/// every job of a round (full) or wave (triage) at once, unless the limit binds.
#include <cstddef>
#include <cstdint>
#include <string>

namespace meshperf::client {

/// Descriptors kept aside for the CLI's own files (stdio, output, TLS, resolver).
inline constexpr std::uint64_t files_reserved = 64;
/// Descriptors one measurement may hold at once: its connection to the initiating daemon,
/// and after a failed run a probe of its peer, with one to spare.
inline constexpr std::uint64_t files_per_measurement = 3;

/// The open-file limit after raise_open_file_limit().
struct open_file_limit {
    std::uint64_t soft = 0;   ///< the soft limit in force (RLIM_INFINITY read as 1 << 20)
    std::uint64_t hard = 0;   ///< the hard limit (likewise)
    bool raised = false;      ///< the soft limit was below the hard one and was raised to it
    bool known = false;       ///< getrlimit answered; false: soft and hard are 0
};

/// Raises the soft RLIMIT_NOFILE of this process to its hard limit (when lower and the
/// kernel allows it) and returns the limit in force afterwards. Never throws.
open_file_limit raise_open_file_limit();

/// Measurements that fit at once within `soft` open files besides files_reserved; at least 1.
std::size_t measurements_within(std::uint64_t soft);

/// Idle connections the matrix may keep open between rounds (client/support/connection_pool)
/// besides `parallel` measurements within `soft` open files (an unknown limit: 1024): what
/// the measurements and files_reserved leave, never more than `hosts` (one per daemon).
std::size_t idle_connections_within(const open_file_limit& limit, std::size_t parallel, std::size_t hosts);

/// The default of --parallel: `wanted` (the jobs of the widest round or wave; at least 1)
/// unless the open-file limit allows fewer.
struct parallel_default {
    std::size_t parallel = 1;  ///< jobs to run at once
    std::size_t wanted = 1;    ///< the jobs of the widest round or wave
    bool limited = false;      ///< the open-file limit binds: parallel < wanted
};
parallel_default default_parallel(std::size_t wanted, const open_file_limit& limit);

/// The stderr note for a binding limit, naming it: "matrix: the open-file limit (RLIMIT_NOFILE
/// 1024, hard limit 1024) allows 320 measurements at once, a round has 1024 pairs: each round
/// runs in 4 waves (...)". `step` names what runs at once ("round", "wave"), `unit` its jobs
/// ("pairs", "links").
std::string parallel_limit_note(const parallel_default& d, const open_file_limit& limit, const char* step, const char* unit);

}  // namespace meshperf::client
