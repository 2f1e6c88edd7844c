#include "core/check.hpp"
#include "core/error.hpp"
#include "core/prometheus.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <limits>
#include <string>
#include <vector>

namespace prometheus_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

TEST_SUITE("prometheus") {

TEST_CASE("names") {
    CHECK(valid_metric_name("meshperf_runs_total"));
    CHECK(valid_metric_name("job:rate5m"));
    CHECK(valid_metric_name("_x"));
    CHECK_FALSE(valid_metric_name(""));
    CHECK_FALSE(valid_metric_name("9lives"));
    CHECK_FALSE(valid_metric_name("bad-name"));
    CHECK_FALSE(valid_metric_name("bad name"));
    CHECK(valid_label_name("peer"));
    CHECK(valid_label_name("size_bytes"));
    CHECK_FALSE(valid_label_name("__name__"));
    CHECK_FALSE(valid_label_name("a:b"));
    CHECK_FALSE(valid_label_name("1a"));
    CHECK_FALSE(valid_label_name(""));
    CHECK(to_string(metric_type::counter) == "counter");
    CHECK(to_string(metric_type::histogram) == "histogram");
    CHECK(std::string(prometheus_content_type) == "text/plain; version=0.0.4; charset=utf-8");
}

TEST_CASE("escaping: label values and help") {
    CHECK(escape_label_value("plain") == "plain");
    CHECK(escape_label_value(R"(C:\dir)") == R"(C:\\dir)");
    CHECK(escape_label_value(R"(say "hi")") == R"(say \"hi\")");
    CHECK(escape_label_value("two\nlines") == R"(two\nlines)");
    CHECK(escape_label_value("\\\"\n") == R"(\\\"\n)");
    CHECK(escape_label_value("ünïcode") == "ünïcode");
    CHECK(escape_help(R"(a \ b "q")"
                      "\nnext") == R"(a \\ b "q"\nnext)");
}

TEST_CASE("float formatting") {
    CHECK(format_value(std::nan("")) == "NaN");
    CHECK(format_value(std::numeric_limits<double>::infinity()) == "+Inf");
    CHECK(format_value(-std::numeric_limits<double>::infinity()) == "-Inf");
    CHECK(format_value(9.41) == "9.41");
    CHECK(format_value(3) == "3");
    CHECK(format_value(0) == "0");
    CHECK(format_value(-2.5) == "-2.5");
    CHECK(format_value(0.1) == "0.1");
    CHECK(format_value(1e20) == "1e+20");
    CHECK(format_value(1176250000) == "1176250000");
    CHECK(std::stod(format_value(1.0 / 3)) == 1.0 / 3);  // round-trips
}

TEST_CASE("families: HELP and TYPE once, samples grouped, declaration order kept") {
    exposition e;
    CHECK(e.empty());
    e.declare("meshperf_runs_total", metric_type::counter, "Runs started.");
    e.declare("meshperf_queue_length", metric_type::gauge, "Runs waiting.\nPer device.");
    e.declare("meshperf_runs_total", metric_type::counter, "Runs started.");  // same: no-op
    e.add("meshperf_runs_total", {{"transport", "tcp"}}, 12);
    e.add("meshperf_queue_length", {}, 0);
    e.add("meshperf_runs_total", {{"transport", "rdma"}}, 3);
    CHECK_FALSE(e.empty());
    CHECK(e.render() ==
          "# HELP meshperf_runs_total Runs started.\n"
          "# TYPE meshperf_runs_total counter\n"
          "meshperf_runs_total{transport=\"tcp\"} 12\n"
          "meshperf_runs_total{transport=\"rdma\"} 3\n"
          "# HELP meshperf_queue_length Runs waiting.\\nPer device.\n"
          "# TYPE meshperf_queue_length gauge\n"
          "meshperf_queue_length 0\n");
}

TEST_CASE("label values are escaped in samples; labels keep their order") {
    exposition e;
    e.declare("x", metric_type::gauge, "h");
    e.add("x", {{"peer", "a\"b\\c\nd"}, {"b", "2"}}, std::nan(""));
    CHECK(e.render() == "# HELP x h\n# TYPE x gauge\nx{peer=\"a\\\"b\\\\c\\nd\",b=\"2\"} NaN\n");
}

TEST_CASE("summary and histogram samples") {
    exposition e;
    e.declare("meshperf_latency_seconds", metric_type::summary, "Latency.");
    e.add("meshperf_latency_seconds", {{"quantile", "0.5"}}, 2.31e-05);
    e.add("meshperf_latency_seconds", {{"quantile", "0.99"}}, 4e-05);
    e.add("meshperf_latency_seconds", {}, 1.5, "_sum");
    e.add("meshperf_latency_seconds", {}, 65536, "_count");
    e.declare("meshperf_sizes_bytes", metric_type::histogram, "Sizes.");
    e.add("meshperf_sizes_bytes", {{"le", "1024"}}, 1, "_bucket");
    e.add("meshperf_sizes_bytes", {{"le", format_value(std::numeric_limits<double>::infinity())}}, 2, "_bucket");
    e.add("meshperf_sizes_bytes", {}, 2, "_count");
    e.add("meshperf_sizes_bytes", {}, 1032, "_sum");
    CHECK(e.render() ==
          "# HELP meshperf_latency_seconds Latency.\n"
          "# TYPE meshperf_latency_seconds summary\n"
          "meshperf_latency_seconds{quantile=\"0.5\"} 2.31e-05\n"
          "meshperf_latency_seconds{quantile=\"0.99\"} 4e-05\n"
          "meshperf_latency_seconds_sum 1.5\n"
          "meshperf_latency_seconds_count 65536\n"
          "# HELP meshperf_sizes_bytes Sizes.\n"
          "# TYPE meshperf_sizes_bytes histogram\n"
          "meshperf_sizes_bytes_bucket{le=\"1024\"} 1\n"
          "meshperf_sizes_bytes_bucket{le=\"+Inf\"} 2\n"
          "meshperf_sizes_bytes_count 2\n"
          "meshperf_sizes_bytes_sum 1032\n");
}

TEST_CASE("misuse is refused with spec_error") {
    exposition e;
    CHECK_THROWS_AS(e.declare("bad-name", metric_type::gauge, "h"), spec_error);
    e.declare("g", metric_type::gauge, "h");
    CHECK_THROWS_AS(e.declare("g", metric_type::counter, "h"), spec_error);
    CHECK_THROWS_AS(e.declare("g", metric_type::gauge, "other help"), spec_error);
    CHECK_THROWS_AS(e.add("undeclared", {}, 1), spec_error);
    CHECK_THROWS_AS(e.add("g", {{"bad-label", "v"}}, 1), spec_error);
    CHECK_THROWS_AS(e.add("g", {{"__reserved", "v"}}, 1), spec_error);
    CHECK_THROWS_AS(e.add("g", {{"a", "1"}, {"a", "2"}}, 1), spec_error);
    CHECK_THROWS_AS(e.add("g", {}, 1, "_sum"), spec_error);
    e.add("g", {{"a", "1"}, {"b", "2"}}, 1);
    CHECK_THROWS_AS(e.add("g", {{"b", "2"}, {"a", "1"}}, 5), spec_error);  // same series, other order
    CHECK_NOTHROW(e.add("g", {{"a", "1"}, {"b", "3"}}, 1));
    e.declare("s", metric_type::summary, "h");
    CHECK_THROWS_AS(e.add("s", {}, 1), spec_error);  // no quantile
    CHECK_THROWS_AS(e.add("s", {}, 1, "_bucket"), spec_error);
    e.declare("hist", metric_type::histogram, "h");
    CHECK_THROWS_AS(e.add("hist", {}, 1), spec_error);
    CHECK_THROWS_AS(e.add("hist", {}, 1, "_bucket"), spec_error);  // no le
}

TEST_CASE("node_exporter textfile of a check") {
    check_limits limits;
    limits.min_gbit = 9;
    limits.max_lat_us = 50;
    const std::vector<check_figure> figures{{figure_kind::bandwidth, 1 << 20, 2.35},
                                            {figure_kind::latency, 8, 23.1}};
    const auto r = evaluate_check({"node2:7470", "tcp", ""}, figures, limits);
    CHECK(check_textfile(r, 1700000000) ==
          "# HELP meshperf_check_status State of the last meshperf check: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.\n"
          "# TYPE meshperf_check_status gauge\n"
          "meshperf_check_status{peer=\"node2:7470\",transport=\"tcp\"} 2\n"
          "# HELP meshperf_check_figure_status State of one figure of the last meshperf check: 0 OK, 1 WARNING, 2 "
          "CRITICAL, 3 UNKNOWN.\n"
          "# TYPE meshperf_check_figure_status gauge\n"
          "meshperf_check_figure_status{peer=\"node2:7470\",transport=\"tcp\",test=\"bandwidth\",size_bytes=\"1048576\"} 2\n"
          "meshperf_check_figure_status{peer=\"node2:7470\",transport=\"tcp\",test=\"latency\",size_bytes=\"8\"} 0\n"
          "# HELP meshperf_check_bandwidth_bytes_per_second Bandwidth measured by the last meshperf check, counted "
          "at the receiver.\n"
          "# TYPE meshperf_check_bandwidth_bytes_per_second gauge\n"
          "meshperf_check_bandwidth_bytes_per_second{peer=\"node2:7470\",transport=\"tcp\",size_bytes=\"1048576\"} "
          "293750000\n"
          "# HELP meshperf_check_latency_seconds One-way latency (round trip / 2) measured by the last meshperf "
          "check.\n"
          "# TYPE meshperf_check_latency_seconds gauge\n"
          "meshperf_check_latency_seconds{peer=\"node2:7470\",transport=\"tcp\",size_bytes=\"8\"} 2.31e-05\n"
          "# HELP meshperf_check_last_run_timestamp_seconds When the last meshperf check ran, in seconds since the "
          "Unix epoch.\n"
          "# TYPE meshperf_check_last_run_timestamp_seconds gauge\n"
          "meshperf_check_last_run_timestamp_seconds{peer=\"node2:7470\",transport=\"tcp\"} 1700000000\n");
}

TEST_CASE("textfile of an UNKNOWN check and of odd peers") {
    const auto r = unknown_result({"we\"ird\\host:1", "rdma", ""}, "daemon down");
    const std::string text = check_textfile(r, 1.5);
    CHECK(text.find("meshperf_check_status{peer=\"we\\\"ird\\\\host:1\",transport=\"rdma\"} 3\n") != std::string::npos);
    CHECK(text.find("meshperf_check_bandwidth_bytes_per_second{") == std::string::npos);
    CHECK(text.find("meshperf_check_last_run_timestamp_seconds{peer=\"we\\\"ird\\\\host:1\",transport=\"rdma\"} 1.5\n") !=
          std::string::npos);
    CHECK(text.back() == '\n');

    // A figure that is not a measurement has a status but no value; a repeated one is written once.
    check_limits limits;
    limits.min_gbit = 1;
    const std::vector<check_figure> figures{{figure_kind::bandwidth, 4096, std::nan("")},
                                            {figure_kind::bandwidth, 4096, 5.0}};
    const std::string odd = check_textfile(evaluate_check({"n", "tcp", ""}, figures, limits), 0);
    CHECK(odd.find("test=\"bandwidth\",size_bytes=\"4096\"} 3\n") != std::string::npos);
    CHECK(odd.find("meshperf_check_bandwidth_bytes_per_second{") == std::string::npos);
}

}  // TEST_SUITE

}  // namespace prometheus_test
