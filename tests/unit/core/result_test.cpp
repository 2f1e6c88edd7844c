#include "core/error.hpp"
#include "core/result.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace result_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using doctest::Contains;
using nlohmann::json;

namespace {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_v = std::numeric_limits<double>::infinity();

summary lat_summary(double scale) {
    summary s;
    s.count = 10'000;
    s.min = 10 * scale;
    s.p50 = 12 * scale;
    s.p90 = 15 * scale;
    s.p99 = 20 * scale;
    s.p999 = 30 * scale;
    s.max = 40 * scale;
    s.mean = 13 * scale;
    s.stdev = 2.5 * scale;
    return s;
}

point_result latency_point(std::uint64_t size = 64) {
    point_result p;
    p.test = test_kind::latency;
    p.size_bytes = size;
    p.rtt_ns = lat_summary(1000);
    p.lat_ns = lat_summary(500);
    p.precision = {true, 0.01, 0.004, true, 12};
    p.cpu = {100.0, 98.5};
    p.duration_s = 0.25;
    p.verified = true;
    return p;
}

/// A flow that moved `bytes` in `seconds`, with figures consistent with them.
flow_figures flow(const std::string& dir, std::uint64_t bytes, double seconds, std::uint64_t size, std::size_t streams = 1) {
    flow_figures f;
    f.direction = dir;
    f.bytes = bytes;
    f.seconds = seconds;
    f.gbit_per_s = static_cast<double>(bytes) * 8.0 / seconds / 1e9;
    f.msg_per_s = static_cast<double>(bytes) / static_cast<double>(size) / seconds;
    f.interval_min_gbit = f.gbit_per_s * 0.9;
    f.interval_max_gbit = f.gbit_per_s * 1.1;
    for (std::size_t i = 0; i < streams; ++i) f.stream_gbit_per_s.push_back(f.gbit_per_s / static_cast<double>(streams));
    return f;
}

void add_totals(point_result& p) {
    p.gbit_per_s = 0;
    p.msg_per_s = 0;
    for (const auto& f : p.flows) {
        p.gbit_per_s += f.gbit_per_s;
        p.msg_per_s += f.msg_per_s;
        p.duration_s = std::max(p.duration_s, f.seconds);
    }
}

point_result bandwidth_point(std::uint64_t size = 65536) {
    point_result p;
    p.test = test_kind::bandwidth;
    p.size_bytes = size;
    p.flows.push_back(flow("initiator->peer", 1'250'000'000, 1.0, size, 2));  // 10 Gbit/s
    add_totals(p);
    p.precision = {true, 0.01, 0.008, true, 40};
    p.cpu = {35.0, 60.0};
    return p;
}

point_result bidir_point(std::uint64_t size = 1 << 20) {
    point_result p;
    p.test = test_kind::bidir;
    p.size_bytes = size;
    p.flows.push_back(flow("initiator->peer", 3'000'000'000, 1.5, size));
    p.flows.push_back(flow("peer->initiator", 2'000'000'000, 1.25, size));
    add_totals(p);
    p.precision = {true, 0.01, 0.02, false, 60};
    p.cpu = {120.0, 110.0};
    p.warnings.push_back("precision target not met: 95% CI half-width 2% of the estimate");
    return p;
}

run_result sample_run() {
    run_result r;
    r.id = "r-20240601-120000-abcdef";
    r.state = run_state::completed;
    r.created_at = "2024-06-01T12:00:00Z";
    r.finished_at = "2024-06-01T12:00:42Z";
    r.initiator = {"node1:7470", "node1", "0.1.0", "6.1.0-21-amd64", "AMD EPYC 9654", 192};
    r.peer = {"node2:7470", "node2", "0.1.0", "6.1.0-21-amd64", "AMD EPYC 9654", 192};
    r.spec.peer = "node2:7470";
    r.spec.tests = {test_kind::latency, test_kind::bandwidth, test_kind::bidir};
    r.spec.sizes = {64, 65536, 1 << 20};
    r.spec.streams = 2;
    r.points = {latency_point(), bandwidth_point(), bidir_point()};
    r.warnings = {"peer clock coarse"};
    return r;
}

void check_same(const summary& a, const summary& b) {
    CHECK(a.count == b.count);
    CHECK(a.min == b.min);
    CHECK(a.p50 == b.p50);
    CHECK(a.p90 == b.p90);
    CHECK(a.p99 == b.p99);
    CHECK(a.p999 == b.p999);
    CHECK(a.max == b.max);
    CHECK(a.mean == b.mean);
    CHECK(a.stdev == b.stdev);
}

void check_same(const host_info& a, const host_info& b) {
    CHECK(a.address == b.address);
    CHECK(a.hostname == b.hostname);
    CHECK(a.version == b.version);
    CHECK(a.kernel == b.kernel);
    CHECK(a.cpu_model == b.cpu_model);
    CHECK(a.cpu_count == b.cpu_count);
}

void check_same(const point_result& a, const point_result& b) {
    CHECK(a.test == b.test);
    CHECK(a.size_bytes == b.size_bytes);
    REQUIRE(a.lat_ns.has_value() == b.lat_ns.has_value());
    if (a.lat_ns) check_same(*a.lat_ns, *b.lat_ns);
    REQUIRE(a.rtt_ns.has_value() == b.rtt_ns.has_value());
    if (a.rtt_ns) check_same(*a.rtt_ns, *b.rtt_ns);
    CHECK(a.gbit_per_s == b.gbit_per_s);
    CHECK(a.msg_per_s == b.msg_per_s);
    REQUIRE(a.flows.size() == b.flows.size());
    for (std::size_t i = 0; i < a.flows.size(); ++i) {
        const auto &f = a.flows[i], &g = b.flows[i];
        CHECK(f.direction == g.direction);
        CHECK(f.bytes == g.bytes);
        CHECK(f.seconds == g.seconds);
        CHECK(f.gbit_per_s == g.gbit_per_s);
        CHECK(f.msg_per_s == g.msg_per_s);
        CHECK(f.interval_min_gbit == g.interval_min_gbit);
        CHECK(f.interval_max_gbit == g.interval_max_gbit);
        CHECK(f.stream_gbit_per_s == g.stream_gbit_per_s);
    }
    CHECK(a.precision.adaptive == b.precision.adaptive);
    CHECK(a.precision.target == b.precision.target);
    CHECK(a.precision.achieved == b.precision.achieved);
    CHECK(a.precision.met == b.precision.met);
    CHECK(a.precision.batches == b.precision.batches);
    CHECK(a.precision.method == b.precision.method);
    CHECK(a.precision.blocks == b.precision.blocks);
    CHECK(a.precision.samples_achieved == b.precision.samples_achieved);
    CHECK(a.precision.blocks_achieved == b.precision.blocks_achieved);
    CHECK(a.precision.block_values == b.precision.block_values);
    CHECK(a.cpu.local_percent == b.cpu.local_percent);
    CHECK(a.cpu.remote_percent == b.cpu.remote_percent);
    CHECK(a.duration_s == b.duration_s);
    CHECK(a.verified == b.verified);
    CHECK(a.warnings == b.warnings);
}

point_result through_text(const point_result& p) { return point_result_from_json(json::parse(to_json(p).dump())); }

/// Splits one CSV row into fields, honouring double quotes ("" inside quotes is a quote).
std::vector<std::string> split_csv(const std::string& row) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (std::size_t i = 0; i < row.size(); ++i) {
        const char c = row[i];
        if (quoted) {
            if (c == '"' && i + 1 < row.size() && row[i + 1] == '"') { out.back() += '"'; ++i; }
            else if (c == '"') quoted = false;
            else out.back() += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.emplace_back();
        } else {
            out.back() += c;
        }
    }
    CHECK_FALSE(quoted);  // every quote closed
    return out;
}

std::string insanity(const point_result& p) {
    try {
        check_sane(p);
    } catch (const insane_figure& e) {
        return e.what();
    }
    return {};
}

}  // namespace

TEST_SUITE("result") {

TEST_CASE("point_result JSON round trip: latency") {
    const auto p = latency_point();
    check_same(p, point_result_from_json(to_json(p)));
    check_same(p, through_text(p));
    const auto j = to_json(p);
    CHECK(j["test"] == "latency");
    CHECK(j["size_bytes"] == 64);
    CHECK(j["lat_ns"]["p999"] == 15000.0);
    CHECK(j["rtt_ns"]["p50"] == 12000.0);
    CHECK_FALSE(j.contains("gbit_per_s"));  // latency points carry no rates
    CHECK_FALSE(j.contains("flows"));
}

TEST_CASE("point_result JSON: a size that is not an integer in range is refused, not cast") {
    // nlohmann's get<std::uint64_t>() of 1e31 is undefined behaviour; the reader must refuse it.
    for (const json& size : {json(1e31), json(-4), json(64.5), json("64")}) {
        auto j = to_json(latency_point());
        j["size_bytes"] = size;
        CAPTURE(size.dump());
        CHECK_THROWS_AS(point_result_from_json(j), spec_error);
    }
}

TEST_CASE("point_result JSON round trip: bandwidth, one flow with two streams") {
    const auto p = bandwidth_point();
    CHECK(insanity(p).empty());
    check_same(p, point_result_from_json(to_json(p)));
    check_same(p, through_text(p));
    const auto j = to_json(p);
    CHECK(j["gbit_per_s"].get<double>() == doctest::Approx(10.0));
    CHECK(j["gbyte_per_s"].get<double>() == doctest::Approx(1.25));
    CHECK(j["msg_per_s"].get<double>() == doctest::Approx(1.25e9 / 65536));
    CHECK(j["flows"][0]["streams_gbit_per_s"].size() == 2);
    CHECK_FALSE(j.contains("lat_ns"));
}

TEST_CASE("point_result JSON round trip: bidir with two flows") {
    const auto p = bidir_point();
    CHECK(insanity(p).empty());
    const auto q = through_text(p);
    check_same(p, q);
    REQUIRE(q.flows.size() == 2);
    CHECK(q.flows[0].direction == "initiator->peer");
    CHECK(q.flows[1].direction == "peer->initiator");
    CHECK(q.gbit_per_s == doctest::Approx(16.0 + 12.8));
}

TEST_CASE("point_result JSON: precision not reached (+inf) travels as null and comes back as +inf") {
    auto p = bandwidth_point();
    p.precision.achieved = inf_v;
    p.precision.met = false;
    const auto j = to_json(p);
    CHECK(j["precision"]["achieved"].is_null());
    CHECK(std::isinf(through_text(p).precision.achieved));
    // A fixed-length point has no target: null in JSON.
    p.precision = {false, 0.0, 0.0, false, 0};
    CHECK(to_json(p)["precision"]["target"].is_null());
    check_same(p, through_text(p));
}

TEST_CASE("point_result JSON: the precision method, both views and the block estimates travel, with unit-bearing names") {
    auto p = latency_point();
    interval_choice c;
    c.relative_half_width = 0.4;
    c.method = precision_method::blocks;
    c.blocks = 3;
    c.samples_relative_half_width = 0.001;
    c.blocks_relative_half_width = 0.4;
    p.precision.record(c);
    p.precision.met = false;
    p.precision.block_values = {14000, 60000, 14100};
    const auto j = to_json(p);
    CHECK(j["precision"]["method"] == "blocks");
    CHECK(j["precision"]["blocks"] == 3);
    CHECK(j["precision"]["samples_achieved"] == 0.001);
    CHECK(j["precision"]["blocks_achieved"] == 0.4);
    CHECK(j["precision"]["achieved"] == 0.4);
    CHECK(j["precision"]["block_rtt_ns"] == json::array({14000, 60000, 14100}));
    CHECK_FALSE(j["precision"].contains("block_gbit_per_s"));
    check_same(p, through_text(p));

    auto b = bandwidth_point();
    c.method = precision_method::too_few_blocks;
    c.blocks_relative_half_width = inf_v;
    b.precision.record(c);
    b.precision.block_values = {9.5, 10.5};
    const auto jb = to_json(b);
    CHECK(jb["precision"]["method"] == "too_few_blocks");
    CHECK(jb["precision"]["blocks_achieved"].is_null());
    CHECK(jb["precision"]["block_gbit_per_s"] == json::array({9.5, 10.5}));
    check_same(b, through_text(b));
}

TEST_CASE("point_result JSON: a result written before the precision method was recorded still reads, and writes back unchanged") {
    auto j = to_json(latency_point());
    const auto old_precision = j["precision"];
    CHECK_FALSE(old_precision.contains("method"));  // no method recorded: none written
    const auto p = point_result_from_json(j);
    CHECK_FALSE(p.precision.method.has_value());
    CHECK(p.precision.blocks == 0);
    CHECK(p.precision.block_values.empty());
    CHECK(std::isinf(p.precision.blocks_achieved));
    CHECK(to_json(p)["precision"] == old_precision);
    // an unknown method name from a newer writer reads as "not recorded"
    j["precision"]["method"] = "bootstrap";
    CHECK_FALSE(point_result_from_json(j).precision.method.has_value());
}

TEST_CASE("check_sane: block estimates must be finite and non-negative, precision views non-negative") {
    auto p = latency_point();
    p.precision.method = precision_method::samples;
    p.precision.block_values = {14000, nan_v};
    CHECK_THROWS_AS(check_sane(p), insane_figure);
    p.precision.block_values = {14000, -1};
    CHECK_THROWS_AS(check_sane(p), insane_figure);
    p.precision.block_values = {14000, 14001};
    CHECK_NOTHROW(check_sane(p));
    auto b = bandwidth_point();
    b.precision.block_values = {10.0, 0.0, 9.5};  // a block in which no bytes arrived (found by integration-reports)
    CHECK_NOTHROW(check_sane(b));
    p.precision.samples_achieved = nan_v;
    CHECK_THROWS_AS(check_sane(p), insane_figure);
    p.precision.samples_achieved = inf_v;  // unknown is allowed
    CHECK_NOTHROW(check_sane(p));
}

TEST_CASE("run_result JSON round trip") {
    const auto r = sample_run();
    const auto j = to_json(r);
    CHECK(j["schema"] == "meshperf.run/1");
    CHECK(j["error"].is_null());
    const auto back = run_result_from_json(json::parse(j.dump()));
    CHECK(back.id == r.id);
    CHECK(back.state == r.state);
    CHECK(back.created_at == r.created_at);
    CHECK(back.finished_at == r.finished_at);
    check_same(back.initiator, r.initiator);
    check_same(back.peer, r.peer);
    CHECK(back.spec.peer == r.spec.peer);
    CHECK(back.spec.tests == r.spec.tests);
    CHECK(back.spec.sizes == r.spec.sizes);
    CHECK(back.spec.streams == r.spec.streams);
    REQUIRE(back.points.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) check_same(back.points[i], r.points[i]);
    CHECK(back.error.empty());
    CHECK(back.warnings == r.warnings);
}

TEST_CASE("run_result JSON: a failed, unfinished run") {
    auto r = sample_run();
    r.state = run_state::failed;
    r.finished_at.clear();
    r.error = "point 2/3 (bandwidth 64 KiB) against peer node2:7470 failed: connection reset";
    r.points.resize(1);
    const auto j = to_json(r);
    CHECK(j["finished_at"].is_null());
    CHECK(j["error"] == r.error);
    const auto back = run_result_from_json(j);
    CHECK(back.finished_at.empty());
    CHECK(back.error == r.error);
    CHECK(back.points.size() == 1);
}

TEST_CASE("run_result_from_json rejects documents that are not meshperf results") {
    CHECK_THROWS_WITH_AS(run_result_from_json(json{{"schema", "iperf3/1"}, {"id", "x"}}), Contains("meshperf.run/1"), spec_error);
    CHECK_THROWS_WITH_AS(run_result_from_json(json{{"schema", "meshperf.run/2"}}), Contains("not a meshperf run result"), spec_error);
    CHECK_THROWS_AS(run_result_from_json(json{{"id", "x"}}), spec_error);
    CHECK_THROWS_AS(run_result_from_json(json::array()), spec_error);
    CHECK_THROWS_AS(run_result_from_json(json("meshperf.run/1")), spec_error);
    CHECK_THROWS_AS(run_result_from_json(json(nullptr)), spec_error);
}

// Was a bug (fixed): the header says run_result_from_json "throws spec_error when the schema tag is missing
// or foreign", but a schema tag that is not a string ({"schema": 1}) makes j.value("schema", "")
// throw nlohmann::json::type_error instead.
TEST_CASE("run_result_from_json: a non-string schema tag is a spec_error") {
    CHECK_THROWS_AS(run_result_from_json(json{{"schema", 1}}), spec_error);
    CHECK_THROWS_AS(run_result_from_json(json{{"schema", nullptr}}), spec_error);
}

TEST_CASE("check_sane accepts consistent points") {
    CHECK(insanity(latency_point()).empty());
    CHECK(insanity(bandwidth_point()).empty());
    CHECK(insanity(bidir_point()).empty());
    // Identical percentiles (a perfectly steady path) are in order.
    auto p = latency_point();
    summary flat;
    flat.count = 3;
    flat.min = flat.p50 = flat.p90 = flat.p99 = flat.p999 = flat.max = flat.mean = 100;
    p.rtt_ns = flat;
    flat.min = flat.p50 = flat.p90 = flat.p99 = flat.p999 = flat.max = flat.mean = 50;
    p.lat_ns = flat;
    CHECK(insanity(p).empty());
}

TEST_CASE("check_sane rejects NaN, infinite, negative and zero figures") {
    for (double bad : {nan_v, inf_v, -inf_v, -1.0, 0.0}) {
        CAPTURE(bad);
        auto p = bandwidth_point();
        p.flows[0].gbit_per_s = bad;
        CHECK_FALSE(insanity(p).empty());

        p = bandwidth_point();
        p.flows[0].msg_per_s = bad;
        CHECK_FALSE(insanity(p).empty());

        p = bandwidth_point();
        p.flows[0].seconds = bad;
        CHECK_FALSE(insanity(p).empty());

        p = latency_point();
        p.lat_ns->min = bad;
        CHECK_FALSE(insanity(p).empty());

        p = latency_point();
        p.rtt_ns->p999 = bad;
        CHECK_FALSE(insanity(p).empty());
    }
    for (double bad : {nan_v, inf_v, -1.0}) {
        CAPTURE(bad);
        auto p = latency_point();
        p.lat_ns->stdev = bad;
        CHECK_FALSE(insanity(p).empty());
        p = bandwidth_point();
        p.cpu.local_percent = bad;
        CHECK(insanity(p).find("CPU use") != std::string::npos);
        p = bandwidth_point();
        p.cpu.remote_percent = bad;
        CHECK_FALSE(insanity(p).empty());
        p = bandwidth_point();
        p.duration_s = bad;
        CHECK(insanity(p).find("duration") != std::string::npos);
        p = bandwidth_point();
        p.flows[0].stream_gbit_per_s[1] = bad;
        CHECK(insanity(p).find("stream bandwidth") != std::string::npos);
        p = bandwidth_point();
        p.flows[0].interval_max_gbit = bad;
        CHECK_FALSE(insanity(p).empty());
    }
    auto p = bandwidth_point();
    p.flows[0].gbit_per_s = 0;
    CHECK(insanity(p).find("must be positive") != std::string::npos);
    p = bandwidth_point();
    p.flows[0].gbit_per_s = nan_v;
    CHECK(insanity(p).find("finite") != std::string::npos);
}

TEST_CASE("check_sane rejects missing figures") {
    auto p = latency_point();
    p.size_bytes = 0;
    CHECK(insanity(p).find("size 0") != std::string::npos);
    p = latency_point();
    p.lat_ns.reset();
    CHECK(insanity(p).find("without latency figures") != std::string::npos);
    p = latency_point();
    p.rtt_ns->count = 0;
    CHECK(insanity(p).find("no samples") != std::string::npos);
    p = bandwidth_point();
    p.flows.clear();
    CHECK(insanity(p).find("without flows") != std::string::npos);
    p = bandwidth_point();
    p.flows[0] = flow("initiator->peer", 0, 1.0, 65536);
    p.flows[0].gbit_per_s = 1;
    CHECK(insanity(p).find("bytes received") != std::string::npos);
}

TEST_CASE("check_sane rejects out-of-order percentiles and a mean outside [min, max]") {
    auto p = latency_point();
    p.lat_ns->p90 = p.lat_ns->p50 * 0.9;
    CHECK(insanity(p).find("out of order") != std::string::npos);
    p = latency_point();
    p.rtt_ns->max = p.rtt_ns->p999 * 0.5;
    CHECK(insanity(p).find("round-trip time percentiles are out of order") != std::string::npos);
    p = latency_point();
    p.lat_ns->min = p.lat_ns->p50 * 1.01;
    CHECK(insanity(p).find("out of order") != std::string::npos);
    p = latency_point();
    p.lat_ns->mean = p.lat_ns->max * 1.5;
    CHECK(insanity(p).find("outside [min, max]") != std::string::npos);
    p = latency_point();
    p.lat_ns->mean = p.lat_ns->min * 0.5;
    CHECK(insanity(p).find("outside [min, max]") != std::string::npos);
}

TEST_CASE("check_sane rejects one-way latency that is not half the RTT") {
    auto p = latency_point();
    p.lat_ns->p50 *= 1.01;
    CHECK(insanity(p).find("half the round-trip") != std::string::npos);
}

TEST_CASE("check_sane rejects rates inconsistent with bytes, size and seconds") {
    auto p = bandwidth_point();
    p.flows[0].gbit_per_s *= 1.01;
    add_totals(p);
    CHECK(insanity(p).find("disagrees with 1250000000 bytes") != std::string::npos);

    p = bandwidth_point();
    p.flows[0].seconds = 2.0;  // same bytes, twice the time: the rate would halve
    CHECK(insanity(p).find("disagrees") != std::string::npos);

    p = bandwidth_point();
    p.flows[0].gbit_per_s = p.flows[0].gbit_per_s * 8;  // bytes counted as bits the other way round
    add_totals(p);
    CHECK_FALSE(insanity(p).empty());

    p = bandwidth_point();
    p.flows[0].msg_per_s *= 2;
    add_totals(p);
    CHECK(insanity(p).find("message rate disagrees") != std::string::npos);

    // Rounding noise well within the tolerance is accepted.
    p = bandwidth_point();
    p.flows[0].gbit_per_s *= 1 + 1e-9;
    add_totals(p);
    CHECK(insanity(p).empty());
}

TEST_CASE("check_sane rejects totals that are not the sum of the flows") {
    auto p = bidir_point();
    p.gbit_per_s = p.flows[0].gbit_per_s;  // forgot the reverse flow
    CHECK(insanity(p).find("not the sum of their flows") != std::string::npos);
    p = bidir_point();
    p.msg_per_s *= 1.5;
    CHECK(insanity(p).find("not the sum") != std::string::npos);
    p = bidir_point();
    p.gbit_per_s = 0;
    CHECK_FALSE(insanity(p).empty());
}

TEST_CASE("CSV: the header and every row have the same number of columns") {
    auto r = sample_run();
    // Awkward text: commas, quotes and a newline inside quoted fields.
    r.id = "run,with \"quotes\"";
    r.points[1].warnings = {"sender CPU-bound (95% of a core per stream), figure may be low", "say \"hi\""};
    r.points[2].warnings.push_back("multi\nline");
    const auto header = split_csv(csv_header());
    CHECK(header.size() == 24);
    CHECK(header.front() == "run_id");
    CHECK(header[21] == "warnings");
    CHECK(header.back() == "precision_blocks");
    for (const auto& p : r.points) {
        CAPTURE(to_string(p.test));
        const auto row = split_csv(to_csv_row(r, p));
        REQUIRE(row.size() == header.size());
        CHECK(row[0] == r.id);
        CHECK(row[1] == to_string(p.test));
        CHECK(row[2] == std::to_string(p.size_bytes));
    }
}

TEST_CASE("CSV: columns hold the figures they name") {
    const auto r = sample_run();
    const auto header = split_csv(csv_header());
    auto col = [&](const std::vector<std::string>& row, const std::string& name) {
        for (std::size_t i = 0; i < header.size(); ++i)
            if (header[i] == name) return row.at(i);
        FAIL("no column " << name);
        return std::string();
    };
    const auto lat = split_csv(to_csv_row(r, r.points[0]));
    CHECK(col(lat, "lat_ns_p50") == "6000");
    CHECK(col(lat, "lat_ns_p999") == "15000");
    CHECK(col(lat, "rtt_ns_p50") == "12000");
    CHECK(col(lat, "samples") == "10000");
    CHECK(col(lat, "gbit_per_s").empty());
    CHECK(col(lat, "flows").empty());
    CHECK(col(lat, "precision_met") == "true");
    CHECK(col(lat, "verified") == "true");

    const auto bw = split_csv(to_csv_row(r, r.points[1]));
    CHECK(col(bw, "lat_ns_p50").empty());
    CHECK(col(bw, "gbit_per_s") == "10");
    CHECK(col(bw, "msg_per_s") == "19073.5");
    CHECK(col(bw, "flows") == "initiator->peer=10");
    CHECK(col(bw, "cpu_initiator_percent") == "35");
    CHECK(col(bw, "cpu_peer_percent") == "60");
    CHECK(col(bw, "verified") == "false");

    const auto bi = split_csv(to_csv_row(r, r.points[2]));
    CHECK(col(bi, "flows") == "initiator->peer=16;peer->initiator=12.8");
    CHECK(col(bi, "gbit_per_s") == "28.8");
    CHECK(col(bi, "precision_met") == "false");
    CHECK(col(bi, "precision_achieved") == "0.02");
    CHECK(col(bi, "precision_method").empty());  // not recorded in this point

    auto with_method = r.points[0];
    with_method.precision.method = precision_method::blocks;
    with_method.precision.blocks = 24;
    const auto m = split_csv(to_csv_row(r, with_method));
    REQUIRE(m.size() == header.size());
    CHECK(col(m, "precision_method") == "blocks");
    CHECK(col(m, "precision_blocks") == "24");
    CHECK(header.back() == "precision_blocks");  // appended: the original columns keep their places
    CHECK(header[21] == "warnings");
}

TEST_CASE("CSV: a precision of +inf is an empty cell, not 'inf'") {
    auto r = sample_run();
    r.points[1].precision.achieved = inf_v;
    const auto header = split_csv(csv_header());
    const auto row = split_csv(to_csv_row(r, r.points[1]));
    REQUIRE(row.size() == header.size());
    CHECK(row[16].empty());
    CHECK(header[16] == "precision_achieved");
    CHECK(to_csv_row(r, r.points[1]).find("inf") == std::string::npos);
}

}  // TEST_SUITE

}  // namespace result_test
