#pragma once
/// meshperfd's configuration file (TOML, /etc/meshperf/meshperfd.toml, path by --config):
/// daemon settings the command line may override, authentication, limits on every run, and
/// the scheduled probes and inspections. systemd/meshperfd.toml.example lists every key with
/// its default.
///
/// Parsing is strict: an unknown table or key, a wrong type or an impossible value is a
/// core::spec_error naming the file, the table and the key, so a typo never turns into a
/// silently ignored setting. No I/O but reading the file.
#include "core/run_spec.hpp"
#include "daemon/runtime/auth.hpp"
#include "daemon/runtime/store_options.hpp"
#include "node/inventory.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::daemon {

/// [schedule]: probes this daemon starts on its own, to keep /metrics fresh.
struct probe_config {
    std::vector<std::string> peers;                     ///< "host:port", normalised (port 7470 added)
    std::vector<std::string> transports{"tcp"};  ///< names of core/transport_rules.hpp's table
    std::vector<core::test_kind> tests{core::test_kind::latency, core::test_kind::bandwidth};
    std::string memory = "host";                        ///< "host" or "cuda:N", both sides
    std::vector<std::uint64_t> sizes{8, 64 * 1024, 1024 * 1024, 16 * 1024 * 1024};  ///< bytes, sorted
    double interval_s = 900;                            ///< one probe per peer and transport per interval
    double jitter_s = 120;                              ///< each probe starts up to ± this much off its slot
    double point_duration_s = 2;                        ///< adaptive cap per point (max_point_s)

    bool enabled() const { return !peers.empty(); }
};

/// [inspect]: the node's own inspection (node/inspect.hpp), run by this daemon on a schedule
/// so that /metrics shows a node going bad between jobs (daemon/runs/inspect_scheduler.hpp).
struct inspect_config {
    double interval_s = 300;  ///< one inspection per interval; 0 = none on a schedule
    double jitter_s = 30;     ///< each starts up to ± this much off its slot (the first within it of the start)
    /// Also loop every RDMA device back to itself (node/loopback_check.hpp). Only while the
    /// daemon is idle: with a measurement running or queued it is not measured (UNKNOWN).
    bool loopback = false;
    std::string manifest;     ///< node.toml to compare with (node/manifest.hpp); empty: none

    bool enabled() const { return interval_s > 0; }
};

/// The whole file, with defaults for what it leaves out.
struct daemon_config {
    // [daemon] — each one is overridden by the command-line option of the same name.
    std::optional<std::string> listen;
    std::optional<std::string> state_dir;
    std::optional<std::string> token_file;

    // [auth]
    bool metrics_require_token = true;        ///< GET /metrics needs the bearer token
    auth_throttle_options auth_throttle;      ///< failed-authentication limiter

    // [limits]
    core::run_limits limits;                  ///< bounds on every run started or served
    cidr_list allowed_peers;                  ///< empty: any address (the token still has to match)
    std::size_t metrics_max_peers = 256;      ///< (peer, transport) pairs /metrics keeps series for

    // [schedule]
    probe_config schedule;

    // [inspect]
    inspect_config inspect;

    // [store]
    store_options store;                      ///< retention, start check, unstored results

    // [rails]: which NICs are rails (/v1/info, /v1/inspect): include and exclude globs
    node::rail_selection rails;
};

/// Parses the text of a configuration file; `origin` names it in messages. Throws
/// core::spec_error: "/etc/meshperf/meshperfd.toml: unknown key 'max_stream' in [limits]
/// (known: max_streams, ...)", "... line 7: ..." for TOML syntax errors.
daemon_config parse_config(std::string_view text, const std::string& origin);

/// Reads and parses a configuration file. A file that does not exist or cannot be read is a
/// core::spec_error saying so ("--config /etc/x.toml: no such file"), since a path given
/// explicitly must exist.
daemon_config load_config(const std::string& path);

/// Parses a duration: a number with unit ms, s, m or h ("250ms", "2s", "15m", "1h", "1.5s").
/// A bare number is seconds. Throws core::spec_error naming `what` for anything else or a
/// negative value.
double parse_duration_s(std::string_view text, std::string_view what);

}  // namespace meshperf::daemon
