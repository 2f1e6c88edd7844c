#include "tests/support/source_dir.hpp"
#include "core/error.hpp"
#include "daemon/runtime/config.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace config_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using daemon::parse_config;

namespace {

std::string error_of(const std::string& text) {
    try {
        parse_config(text, "test.toml");
    } catch (const core::spec_error& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// systemd/meshperfd.toml.example, parsed.
daemon::daemon_config example_config() {
    const auto path = std::filesystem::path(meshperf::test::source_dir()) / "systemd/meshperfd.toml.example";
    std::ifstream in(path);
    REQUIRE(in);
    std::ostringstream text;
    text << in.rdbuf();
    return parse_config(text.str(), path.string());
}

}  // namespace

TEST_CASE("config: an empty file gives every default") {
    const auto c = parse_config("", "empty.toml");
    CHECK_FALSE(c.listen);
    CHECK_FALSE(c.state_dir);
    CHECK_FALSE(c.token_file);
    CHECK(c.metrics_require_token);
    CHECK(c.limits.max_streams == core::run_limits{}.max_streams);
    CHECK(c.limits.max_duration_s == core::run_limits{}.max_duration_s);
    CHECK(c.limits.max_run_s == core::run_limits{}.max_run_s);
    CHECK(c.allowed_peers.empty());
    CHECK_FALSE(c.schedule.enabled());
    CHECK(c.auth_throttle.free_failures == daemon::auth_throttle_options{}.free_failures);
}

TEST_CASE("config: the shipped example parses and holds the defaults it claims") {
    const auto example = example_config();
    const auto defaults = parse_config("", "empty.toml");
    CHECK(example.metrics_require_token == defaults.metrics_require_token);
    CHECK(example.limits.max_streams == defaults.limits.max_streams);
    CHECK(example.limits.max_iterations == defaults.limits.max_iterations);
    CHECK(example.limits.max_duration_s == defaults.limits.max_duration_s);
    CHECK(example.limits.max_run_s == defaults.limits.max_run_s);
    CHECK(example.limits.initiator_silence_s == defaults.limits.initiator_silence_s);
    CHECK(example.auth_throttle.first_delay == defaults.auth_throttle.first_delay);
    CHECK(example.auth_throttle.max_delay == defaults.auth_throttle.max_delay);
    CHECK(example.schedule.sizes == defaults.schedule.sizes);
    CHECK(example.schedule.tests == defaults.schedule.tests);
    CHECK(example.schedule.interval_s == defaults.schedule.interval_s);
    CHECK(example.schedule.jitter_s == defaults.schedule.jitter_s);
    CHECK(example.schedule.point_duration_s == defaults.schedule.point_duration_s);
    CHECK_FALSE(example.schedule.enabled());
}

TEST_CASE("config: every table and key is read") {
    const auto c = parse_config(R"(
[daemon]
listen = "0.0.0.0:7471"
state_dir = "/tmp/x"
token_file = "/etc/meshperf/token"

[auth]
metrics_require_token = false
failed_auth_free_attempts = 5
failed_auth_first_delay = "500ms"
failed_auth_max_delay = "2m"

[limits]
max_streams = 8
max_iterations = 1000
max_point_duration = "5s"
max_run_duration = "10m"
allowed_peer_cidrs = ["10.0.0.0/8", "fd00::/8"]

[schedule]
peers = ["node2", "node3:7480", "node2:7470"]
transports = ["tcp"]
tests = ["latency"]
memory = "host"
sizes = ["8", "64K", "1M"]
interval = "30s"
jitter = "5s"
point_duration = "250ms"
)",
                                "full.toml");
    CHECK(*c.listen == "0.0.0.0:7471");
    CHECK(*c.state_dir == "/tmp/x");
    CHECK(*c.token_file == "/etc/meshperf/token");
    CHECK_FALSE(c.metrics_require_token);
    CHECK(c.auth_throttle.free_failures == 5);
    CHECK(c.auth_throttle.first_delay == std::chrono::milliseconds(500));
    CHECK(c.auth_throttle.max_delay == std::chrono::milliseconds(120'000));
    CHECK(c.limits.max_streams == 8);
    CHECK(c.limits.max_iterations == 1000);
    CHECK(c.limits.max_duration_s == 5.0);
    CHECK(c.limits.max_run_s == 600.0);
    CHECK(c.allowed_peers.to_string() == "10.0.0.0/8, fd00::/8");
    CHECK(c.allowed_peers.contains(*daemon::parse_ip_address("10.1.2.3")));
    CHECK_FALSE(c.allowed_peers.contains(*daemon::parse_ip_address("192.168.1.1")));
    // Peers normalised (default port) and deduplicated.
    REQUIRE(c.schedule.peers.size() == 2);
    CHECK(c.schedule.peers[0] == "node2:7470");
    CHECK(c.schedule.peers[1] == "node3:7480");
    CHECK(c.schedule.tests == std::vector<core::test_kind>{core::test_kind::latency});
    CHECK(c.schedule.sizes == std::vector<std::uint64_t>{8, 65536, 1048576});
    CHECK(c.schedule.interval_s == 30.0);
    CHECK(c.schedule.jitter_s == 5.0);
    CHECK(c.schedule.point_duration_s == doctest::Approx(0.25));
    CHECK(c.schedule.enabled());
}

TEST_CASE("config: comma-separated strings work for lists of names and sizes") {
    const auto c = parse_config("[schedule]\npeers = [\"a\"]\ntests = \"latency, bandwidth\"\nsizes = \"64,4K\"\n", "t.toml");
    CHECK(c.schedule.tests.size() == 2);
    CHECK(c.schedule.sizes == std::vector<std::uint64_t>{64, 4096});
    // TOML arrays are homogeneous: all strings, or all integers (bytes).
    const auto ints = parse_config("[schedule]\nsizes = [8, 65536]\n", "t.toml");
    CHECK(ints.schedule.sizes == std::vector<std::uint64_t>{8, 65536});
}

TEST_CASE("config: unknown keys and tables are refused, naming them and the known ones") {
    const auto e = error_of("[limits]\nmax_stream = 4\n");
    CHECK(contains(e, "test.toml"));
    CHECK(contains(e, "unknown key 'max_stream' in [limits]"));
    CHECK(contains(e, "max_streams"));
    CHECK(contains(error_of("[limit]\nmax_streams = 4\n"), "unknown table [limit]"));
    CHECK(contains(error_of("max_streams = 4\n"), "unknown key 'max_streams' outside any table"));
    // Every unknown key is named at once, in a stable order.
    const auto two = error_of("[auth]\nzeta = 1\nalpha = 2\n");
    CHECK(contains(two, "'alpha'"));
    CHECK(contains(two, "'zeta'"));
    CHECK(two.find("'alpha'") < two.find("'zeta'"));
}

TEST_CASE("config: wrong types and impossible values name the key") {
    CHECK(contains(error_of("[limits]\nmax_streams = \"4\"\n"), "[limits] max_streams: must be an integer, not a string"));
    CHECK(contains(error_of("[limits]\nmax_streams = 0\n"), "[limits] max_streams: must be 1 to 1024, not 0"));
    CHECK(contains(error_of("[auth]\nmetrics_require_token = \"no\"\n"), "must be true or false"));
    CHECK(contains(error_of("[limits]\nmax_run_duration = \"10 parsecs\"\n"), "unknown unit 'parsecs'"));
    CHECK(contains(error_of("[limits]\nmax_run_duration = \"soon\"\n"), "is not a duration"));
    CHECK(contains(error_of("[limits]\nmax_point_duration = \"2m\"\nmax_run_duration = \"1m\"\n"),
                   "must not be shorter than max_point_duration"));
    CHECK(contains(error_of("[limits]\nallowed_peer_cidrs = [\"10.1.2.3/8\"]\n"), "did you mean 10.0.0.0/8"));
    CHECK(contains(error_of("[limits]\nallowed_peer_cidrs = \"10.0.0.0/8\"\n"), "must be an array of strings"));
    CHECK(contains(error_of("[schedule]\npeers = [\"a\"]\ntransports = [\"udp\"]\n"), "[schedule] transports"));
    CHECK(contains(error_of("[schedule]\npeers = [\"a\"]\ntests = [\"speed\"]\n"), "[schedule] tests"));
    CHECK(contains(error_of("[schedule]\nsizes = [\"0\"]\n"), "[schedule] sizes"));
    CHECK(contains(error_of("[schedule]\ninterval = \"10s\"\njitter = \"10s\"\n"), "must be shorter than the interval"));
    CHECK(contains(error_of("[schedule]\ninterval = \"0s\"\n"), "[schedule] interval"));
    CHECK(contains(error_of("[daemon]\nlisten = \"\"\n"), "[daemon] listen: is empty"));
    // A probe the daemon's own limits would refuse is caught at start, not at probe time.
    CHECK(contains(error_of("[limits]\nmax_point_duration = \"1s\"\n[schedule]\npeers = [\"a\"]\n"),
                   "would be refused"));
    CHECK(contains(error_of("[schedule]\npeers = [\"a\"]\nmemory = \"gpu0\"\n"), "the probe of a:7470 over tcp would be refused"));
}

TEST_CASE("config: TOML syntax errors carry the line") {
    const auto e = error_of("[limits]\nmax_streams = = 4\n");
    CHECK(contains(e, "test.toml: not valid TOML"));
    CHECK(contains(e, "line 2"));
}

TEST_CASE("config: load_config refuses a missing file with a clear message") {
    try {
        daemon::load_config("/nonexistent/meshperfd.toml");
        FAIL("no exception");
    } catch (const core::spec_error& e) {
        CHECK(contains(e.what(), "--config /nonexistent/meshperfd.toml: no such file"));
    }
}

TEST_CASE("config: initiator_silence bounds how long a frozen initiator holds this daemon") {
    CHECK(parse_config("", "empty.toml").limits.initiator_silence_s == 10.0);
    CHECK(parse_config("[limits]\ninitiator_silence = \"4s\"\n", "t.toml").limits.initiator_silence_s == 4.0);
    CHECK(contains(error_of("[limits]\ninitiator_silence = \"1s\"\n"), "initiator_silence"));
    CHECK(contains(error_of("[limits]\ninitiator_silence = \"11m\"\n"), "initiator_silence"));
}

TEST_CASE("config: durations") {
    CHECK(daemon::parse_duration_s("250ms", "x") == doctest::Approx(0.25));
    CHECK(daemon::parse_duration_s("2s", "x") == 2.0);
    CHECK(daemon::parse_duration_s("15m", "x") == 900.0);
    CHECK(daemon::parse_duration_s("1h", "x") == 3600.0);
    CHECK(daemon::parse_duration_s("1.5", "x") == 1.5);
    CHECK_THROWS_AS(daemon::parse_duration_s("-1s", "x"), core::spec_error);
    CHECK_THROWS_AS(daemon::parse_duration_s("s", "x"), core::spec_error);
}

TEST_CASE("config: limits max_qps, max_bytes_per_point, max_queued_runs, max_connections") {
    const auto d = parse_config("", "empty.toml");
    CHECK(d.limits.max_qps == 64);
    CHECK(d.limits.max_bytes_per_point == (16ull << 40));
    CHECK(d.limits.max_queued_runs == 64);
    CHECK(d.limits.max_connections == 1024);
    const auto c = parse_config("[limits]\nmax_qps = 4\nmax_bytes_per_point = \"64G\"\nmax_queued_runs = 3\nmax_connections = 200\n",
                                "t.toml");
    CHECK(c.limits.max_qps == 4);
    CHECK(c.limits.max_bytes_per_point == (64ull << 30));
    CHECK(c.limits.max_queued_runs == 3);
    CHECK(c.limits.max_connections == 200);
    CHECK(d.metrics_max_peers == 256);
    CHECK(example_config().metrics_max_peers == d.metrics_max_peers);
    CHECK(parse_config("[limits]\nmetrics_max_peers = 10\n", "t").metrics_max_peers == 10);
    CHECK_THROWS_AS(parse_config("[limits]\nmetrics_max_peers = 0\n", "t"), core::spec_error);
    CHECK(parse_config("[limits]\nmax_bytes_per_point = \"1.5T\"\n", "t").limits.max_bytes_per_point == (3ull << 39));
    CHECK(parse_config("[limits]\nmax_bytes_per_point = \"512 MiB\"\n", "t").limits.max_bytes_per_point == (512ull << 20));
    CHECK(parse_config("[limits]\nmax_bytes_per_point = 1048576\n", "t").limits.max_bytes_per_point == (1ull << 20));
    CHECK(contains(error_of("[limits]\nmax_bytes_per_point = \"64GB\"\n"),
                   "[limits] max_bytes_per_point: \"64GB\" is not a size: write a number and an IEC unit"));
    CHECK(contains(error_of("[limits]\nmax_bytes_per_point = 100\n"), "[limits] max_bytes_per_point: must be 4 KiB to"));
    CHECK(contains(error_of("[limits]\nmax_bytes_per_point = true\n"), "must be a size such as \"64G\""));
    CHECK(contains(error_of("[limits]\nmax_qps = 0\n"), "[limits] max_qps: must be 1 to 1024, not 0"));
    CHECK(contains(error_of("[limits]\nmax_queued_runs = 0\n"), "[limits] max_queued_runs: must be 1 to 100000, not 0"));
    CHECK(contains(error_of("[limits]\nmax_connections = 4\n"), "[limits] max_connections: must be 16 to 1000000, not 4"));
    // A probe beyond the byte limit is a configuration error at start.
    CHECK(contains(error_of("[limits]\nmax_bytes_per_point = \"8M\"\n[schedule]\npeers = [\"a\"]\n"),
                   "would be refused: one 16 MiB message"));
}

TEST_CASE("config: the shipped example holds the new limits' defaults") {
    const auto example = example_config();
    const core::run_limits defaults;
    CHECK(example.limits.max_qps == defaults.max_qps);
    CHECK(example.limits.max_bytes_per_point == defaults.max_bytes_per_point);
    CHECK(example.limits.max_queued_runs == defaults.max_queued_runs);
    CHECK(example.limits.max_connections == defaults.max_connections);
}

TEST_CASE("config: [inspect] defaults, every key, and the shipped example") {
    const auto d = parse_config("", "empty.toml");
    CHECK(d.inspect.enabled());
    CHECK(d.inspect.interval_s == 300.0);
    CHECK(d.inspect.jitter_s == 30.0);
    CHECK_FALSE(d.inspect.loopback);
    CHECK(d.inspect.manifest.empty());
    const auto c = parse_config("[inspect]\ninterval = \"1m\"\njitter = \"5s\"\nloopback = true\n"
                                "manifest = \"/etc/meshperf/node.toml\"\n",
                                "t.toml");
    CHECK(c.inspect.interval_s == 60.0);
    CHECK(c.inspect.jitter_s == 5.0);
    CHECK(c.inspect.loopback);
    CHECK(c.inspect.manifest == "/etc/meshperf/node.toml");
    // 0 turns the schedule off, an integer or a string alike; the jitter rule then does not apply.
    CHECK_FALSE(parse_config("[inspect]\ninterval = 0\n", "t.toml").inspect.enabled());
    CHECK_FALSE(parse_config("[inspect]\ninterval = \"0s\"\njitter = \"1m\"\n", "t.toml").inspect.enabled());
    CHECK(parse_config("[inspect]\ninterval = \"1s\"\njitter = \"0s\"\n", "t.toml").inspect.interval_s == 1.0);

    const auto example = example_config();
    CHECK(example.inspect.interval_s == d.inspect.interval_s);
    CHECK(example.inspect.jitter_s == d.inspect.jitter_s);
    CHECK(example.inspect.loopback == d.inspect.loopback);
    CHECK(example.inspect.manifest == d.inspect.manifest);
}

TEST_CASE("config: bad [inspect] values name the key") {
    CHECK(contains(error_of("[inspect]\ninterval = \"500ms\"\n"),
                   "[inspect] interval: must be 0 (no scheduled inspection) or at least 1 s, not 0.5 s"));
    CHECK(contains(error_of("[inspect]\ninterval = \"-5s\"\n"), "[inspect] interval"));
    CHECK(contains(error_of("[inspect]\ninterval = \"8d\"\n"), "[inspect] interval: \"8d\": unknown unit 'd'"));
    CHECK(contains(error_of("[inspect]\ninterval = \"20s\"\n"), "[inspect] jitter: must be shorter than the interval (20 s), not 30 s"));
    CHECK(contains(error_of("[inspect]\ninterval = \"10s\"\njitter = \"10s\"\n"), "[inspect] jitter: must be shorter"));
    CHECK(contains(error_of("[inspect]\njitter = \"2d\"\n"), "[inspect] jitter"));
    CHECK(contains(error_of("[inspect]\nloopback = \"yes\"\n"), "[inspect] loopback: must be true or false, not a string"));
    CHECK(contains(error_of("[inspect]\nmanifest = 8\n"), "[inspect] manifest: must be a string, not an integer"));
    CHECK(contains(error_of("[inspect]\nmanifest = \"\"\n"), "[inspect] manifest: is empty"));
    CHECK(contains(error_of("[inspect]\nexpect = \"node.toml\"\n"),
                   "unknown key 'expect' in [inspect] (known: interval, jitter, loopback, manifest)"));
}

}  // namespace config_test
