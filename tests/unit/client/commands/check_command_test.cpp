#include "client/commands/check.hpp"
#include "client/commands/commands.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/short_runs.hpp"
#include "core/error.hpp"

#include "tests/unit/scratch_dir.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

namespace check_command_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
namespace fs = std::filesystem;

namespace {

fs::path scratch_dir() { return unit_test::scratch_dir("check"); }

core::point_result latency_point(std::uint64_t size, double p50_ns) {
    core::point_result p;
    p.test = core::test_kind::latency;
    p.size_bytes = size;
    core::summary s;
    s.count = 1;
    s.p50 = p50_ns;
    p.lat_ns = s;
    return p;
}

core::point_result bandwidth_point(core::test_kind t, std::uint64_t size, double gbit) {
    core::point_result p;
    p.test = t;
    p.size_bytes = size;
    p.gbit_per_s = gbit;
    return p;
}

}  // namespace

TEST_CASE("check command: the Nagios line and the JSON form") {
    const core::check_target target{"node2:7470", "tcp", ""};
    core::check_limits limits;
    limits.min_gbit = 9;
    const core::check_figure measured[] = {{core::figure_kind::bandwidth, 1 << 20, 2.35}};
    const auto r = core::evaluate_check(target, measured, limits);
    const auto line = client::render_check(r, client::output_format::nagios);
    CHECK(line == core::nagios_line(r) + "\n");
    CHECK(line.rfind("MESHPERF CRITICAL - tcp to node2:7470: 2.35 Gbit/s at 1 MiB", 0) == 0);
    CHECK(line.find("| bw_gbit=2.35;;9:;0;") != std::string::npos);
    const auto doc = nlohmann::json::parse(client::render_check(r, client::output_format::json));
    CHECK(doc["exit_code"] == 2);
    const auto unknown =
        client::render_check(core::unknown_result(target, "cannot reach meshperfd at localhost:7470"), client::output_format::nagios);
    CHECK(unknown == "MESHPERF UNKNOWN - tcp to node2:7470: cannot reach meshperfd at localhost:7470\n");
}

// Was a bug (issue 12): with a baseline of many sizes the plugin output was one ~3 KB line;
// Nagios keeps the first 4 KB and shows the first line as the status. Now the first line
// is short (state, the worst figure, the count of the others) and the details and the
// rest of the perfdata follow on the next lines (Nagios long output).
TEST_CASE("check command: many figures give a short first line and the details after it") {
    const core::check_target target{"node2.example.org:7470", "tcp", "node1.example.org:7470"};
    core::check_limits limits;
    std::vector<core::check_figure> measured;
    for (std::uint64_t size = 1; size <= (4u << 20); size *= 2) {
        limits.baseline.push_back({core::figure_kind::latency, size, 20.0 + static_cast<double>(size) / 1e4});
        limits.baseline.push_back({core::figure_kind::bandwidth, size, 9.0});
        // Latency 1.2x the baseline (WARNING), bandwidth at half (CRITICAL) from 64 KiB on.
        measured.push_back({core::figure_kind::latency, size, (20.0 + static_cast<double>(size) / 1e4) * 1.2});
        measured.push_back({core::figure_kind::bandwidth, size, size >= 65536 ? 4.5 : 8.9});
    }
    const auto r = core::evaluate_check(target, measured, limits);
    REQUIRE(r.state == core::check_state::critical);
    const auto text = client::render_check(r, client::output_format::nagios);
    REQUIRE(text.back() == '\n');
    const auto first = text.substr(0, text.find('\n'));
    CAPTURE(first);
    CHECK(first.size() < 300);
    CHECK(first.rfind("MESHPERF CRITICAL - tcp from node1.example.org:7470 to node2.example.org:7470: ", 0) == 0);
    CHECK(first.find("4.50 Gbit/s at 64 KiB (CRITICAL") != std::string::npos);  // the worst figure
    CHECK(first.find("45 other figures (6 CRITICAL, 23 WARNING, 16 OK)") != std::string::npos);
    CHECK(first.find(" | bw_gbit_64K=4.5;8.1:;6.75:;0;") != std::string::npos);
    // Every figure on a line of its own after the first, with its state and reason.
    std::vector<std::string> lines;
    for (std::size_t at = 0, nl; at < text.size(); at = nl + 1) {
        nl = text.find('\n', at);
        lines.push_back(text.substr(at, nl - at));
    }
    // 1 status line, 46 detail lines, then 44 perfdata lines (the 45th item ends the last
    // detail line after " | ", the 46th is on the first line).
    REQUIRE(lines.size() == 1 + 46 + 44);
    CHECK(lines[1].rfind("WARNING: 24.0 us at 1 B: above baseline", 0) == 0);
    for (std::size_t i = 1; i <= 46; ++i) {
        CAPTURE(lines[i]);
        CHECK(lines[i].size() < 300);
        CHECK(lines[i].find(" at ") != std::string::npos);
        CHECK((lines[i].rfind("OK: ", 0) == 0 || lines[i].rfind("WARNING: ", 0) == 0 || lines[i].rfind("CRITICAL: ", 0) == 0));
    }
    CHECK(lines[46].find(" | lat_us_1=") != std::string::npos);
    for (std::size_t i = 47; i < lines.size(); ++i) {
        CAPTURE(lines[i]);
        CHECK((lines[i].rfind("lat_us_", 0) == 0 || lines[i].rfind("bw_gbit_", 0) == 0));
        CHECK(lines[i].find(' ') == std::string::npos);  // one item per line
    }
    // JSON keeps both: the status line and the whole output.
    const auto doc = nlohmann::json::parse(client::render_check(r, client::output_format::json));
    CHECK(doc["line"] == first);
    CHECK(doc["output"] == text.substr(0, text.size() - 1));
}

TEST_CASE("check command: parse errors of check are UNKNOWN (3), of other commands not") {
    CLI::App app;
    app.require_subcommand(1);
    client::common_options common;
    // Keep the runners: they own the options CLI11 writes into while parsing (dropping them
    // was a heap-use-after-free, found by the TSan build).
    const auto run_check = client::add_check_command(app, common);
    const auto run_info = client::add_info_command(app, common);
    auto parse = [&](std::vector<std::string> args) {
        std::reverse(args.begin(), args.end());
        try {
            app.clear();
            app.parse(args);
        } catch (const CLI::ParseError& e) {
            return client::check_parse_failure(app, e);
        }
        return -2;  // parsed
    };
    // No peer parses (check --collective takes --hosts instead): the runner reports it
    // UNKNOWN (3), as tests/integration/test_collective_cli.py checks through the binary.
    CHECK(parse({"check"}) == -2);
    CHECK(parse({"check", "--collective"}) == 3);              // no op named
    CHECK(parse({"check", "node2", "--warn", "abc"}) == 3);    // not a number
    CHECK(parse({"check", "node2", "--format", "xml"}) == 3);  // not a choice
    CHECK(parse({"check", "--help"}) == 0);
    CHECK(parse({"info", "--format", "xml"}) == -1);           // not check: main() handles it
    CHECK(parse({"check", "node2", "--min-gbit", "5"}) == -2);
}

TEST_CASE("short runs: default specs measure each test at its own size") {
    client::short_test_options o;
    auto specs = client::short_test_specs("node2:7470", o);
    REQUIRE(specs.size() == 2);
    CHECK(specs[0].tests == std::vector<core::test_kind>{core::test_kind::latency});
    CHECK(specs[0].sizes == std::vector<std::uint64_t>{8});
    CHECK(specs[1].tests == std::vector<core::test_kind>{core::test_kind::bandwidth});
    CHECK(specs[1].sizes == std::vector<std::uint64_t>{1 << 20});
    CHECK(specs[1].max_point_s == doctest::Approx(0.3));
    // A baseline's sizes replace the defaults; --sizes makes one run of every test x size.
    specs = client::short_test_specs("node2:7470", o, {64, 8, 64}, {4096});
    CHECK(specs[0].sizes == std::vector<std::uint64_t>{8, 64});
    o.sizes = "64,1M";
    specs = client::short_test_specs("node2:7470", o);
    REQUIRE(specs.size() == 1);
    CHECK(specs[0].tests.size() == 2);
    o.tests = "speed";
    CHECK_THROWS_AS(client::short_test_specs("node2:7470", o), core::spec_error);
}

TEST_CASE("short runs: a link's figures are the smallest latency and the largest unidirectional bandwidth") {
    core::run_result a, b;
    a.points = {latency_point(64, 30'000), latency_point(8, 20'000)};
    b.points = {bandwidth_point(core::test_kind::bidir, 1 << 24, 50), bandwidth_point(core::test_kind::bandwidth, 1 << 20, 9),
                bandwidth_point(core::test_kind::bandwidth, 1 << 16, 7)};
    const auto f = client::summarize_link({a, b});
    CHECK(*f.lat_us == doctest::Approx(20.0));
    CHECK(*f.gbit_per_s == doctest::Approx(9.0));
    const auto none = client::summarize_link({});
    CHECK_FALSE(none.lat_us);
    CHECK_FALSE(none.gbit_per_s);
}

TEST_CASE("short runs: host lists from a file or a comma list") {
    const auto dir = scratch_dir();
    const auto file = (dir / "nodes.txt").string();
    std::ofstream(file) << "# rack 1\nnode1\nnode2:7480   # spare port\n\n  node3\n";
    CHECK(client::read_host_list(file) == std::vector<std::string>{"node1", "node2:7480", "node3"});
    CHECK(client::read_host_list("a, b,c") == std::vector<std::string>{"a", "b", "c"});
    CHECK_THROWS_AS(client::read_host_list("a"), client::client_error);
    CHECK_THROWS_AS(client::read_host_list("a,a:7470"), client::client_error);  // the same daemon twice
    CHECK_THROWS_AS(client::read_host_list((dir / "nope.txt").string()), client::client_error);
    fs::remove_all(dir);
}

}  // namespace check_command_test
