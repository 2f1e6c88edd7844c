#pragma once
/// Short measurements shared by `matrix`, `check` and `baseline save`: the run specs of a
/// quick test (by default an 8 B latency point and a 1 MiB bandwidth point, as two runs so
/// each test is measured at its own size only), and running them to completion on one
/// daemon with every failure turned into a message instead of an exception.
#include "client/support/daemon_client.hpp"
#include "core/check.hpp"
#include "core/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::client {

/// Default size of each test when --sizes is not given.
inline constexpr std::uint64_t default_latency_size = 8;
inline constexpr std::uint64_t default_bandwidth_size = 1024 * 1024;

/// What to measure; empty strings mean "the default".
struct short_test_options {
    std::string transport = "tcp";
    std::string tests;        ///< "latency,bandwidth" (default)
    std::string sizes;        ///< all tests at all these sizes, one run; empty: each test at its own sizes
    std::uint32_t streams = 1;
    double max_time = 0.3;    ///< adaptive cap per point, seconds
    double warmup = 0.1;      ///< warm-up per point, seconds
};

/// The runs of a short test against `peer` (normalised "host:port"). Without `sizes`, one
/// run per test: latency at `latency_sizes` (default {8}), bandwidth and bidir at
/// `bandwidth_sizes` (default {1 MiB}). Each spec is validated; throws core::spec_error.
std::vector<core::run_spec> short_test_specs(const std::string& peer, const short_test_options& o,
                                             std::vector<std::uint64_t> latency_sizes = {},
                                             std::vector<std::uint64_t> bandwidth_sizes = {});

/// What sorting did to `o.sizes` (core::size_order_note for --sizes), for the command to
/// print on stderr; "" when it was already ascending without repeats, empty or invalid (an
/// invalid list is reported by short_test_specs).
std::string size_order_note(const short_test_options& o);

/// How one run ended, seen from the client.
struct run_outcome {
    bool completed = false;
    bool initiator_unreachable = false;  ///< the daemon asked to run it did not answer
    core::run_result run;                ///< the result when the daemon returned one
    std::string error;                   ///< why it did not complete (empty when it did)
};

/// Submits `spec` to `initiator` and waits for the result (daemon_client::run_streaming).
/// Never throws for a failed run or an unreachable daemon: the outcome says what happened.
/// Refused credentials throw auth_refused (every other run would be refused as well).
/// `on_event` (may be empty) sees every event.
run_outcome run_to_completion(const daemon_client& initiator, const core::run_spec& spec,
                              const std::function<void(const nlohmann::json&)>& on_event = {});

/// The figure of a link from runs' points: latency = median one-way latency (us) at the
/// smallest latency size; bandwidth = Gbit/s at the largest bandwidth (else bidir) size.
struct link_figures {
    std::optional<double> gbit_per_s;
    std::optional<double> lat_us;
};
link_figures summarize_link(const std::vector<core::run_result>& runs);

/// The hosts of a matrix: "a,b,c" or a file with one address per line, as read_host_words
/// (client/support/hosts_file.hpp) reads them. Throws client_error (exit_usage) for fewer than two
/// hosts, an invalid address or a duplicate.
std::vector<std::string> read_host_list(const std::string& spec);

}  // namespace meshperf::client
