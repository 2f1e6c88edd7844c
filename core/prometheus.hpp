#pragma once
/// Prometheus text exposition format 0.0.4: a small writer that groups samples by metric
/// family, writes HELP and TYPE once per family, escapes label values and formats floats
/// (NaN, +Inf, -Inf) as Prometheus parses them; and the node_exporter textfile of a
/// health check. Builds strings only: writing the file (atomically: temporary file, then
/// rename) is the caller's job.
#include "core/check.hpp"

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// HTTP Content-Type of the text format.
inline constexpr const char* prometheus_content_type = "text/plain; version=0.0.4; charset=utf-8";

/// Metric types of the text format.
enum class metric_type { counter, gauge, summary, histogram, untyped };

/// "counter", "gauge", "summary", "histogram", "untyped".
std::string_view to_string(metric_type);

/// One label of a sample; the value is any UTF-8 text (escaped on output).
struct metric_label {
    std::string name;
    std::string value;
};

/// True for a valid metric name: [a-zA-Z_:][a-zA-Z0-9_:]*.
bool valid_metric_name(std::string_view);

/// True for a valid label name: [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved).
bool valid_label_name(std::string_view);

/// Label value escaped for the text format: backslash → \\, double quote → \", line feed → \n;
/// bytes that are not UTF-8 (an interface or host name may hold any) become U+FFFD, as the
/// JSON API writes them, since Prometheus refuses a scrape with one.
std::string escape_label_value(std::string_view);

/// HELP text escaped for the text format: backslash → \\, line feed → \n; not UTF-8 → U+FFFD.
std::string escape_help(std::string_view);

/// A sample value as the text format writes it: "NaN", "+Inf", "-Inf", or the shortest
/// decimal that reads back to the same double (e.g. "9.41", "3", "1e+20").
std::string format_value(double);

/// A set of metric families, rendered in the order they were declared, each family's
/// samples in the order they were added. Not thread-safe: build one per scrape.
class exposition {
public:
    /// Declares a family. Declaring it again with the same type and help does nothing.
    /// Throws spec_error for an invalid name, or a family redeclared with another type or help.
    void declare(std::string_view name, metric_type type, std::string_view help);

    /// Adds a sample to a declared family. `suffix` selects the sample's name: empty for
    /// counter, gauge, untyped and a summary's quantiles (label "quantile"); "_sum" and
    /// "_count" for summary and histogram; "_bucket" for a histogram (label "le"). Throws
    /// spec_error for an undeclared family, a suffix the type does not have, an invalid or
    /// repeated label name, a missing quantile/le label, or a series already added.
    void add(std::string_view family, std::span<const metric_label> labels, double value,
             std::string_view suffix = {});
    void add(std::string_view family, std::initializer_list<metric_label> labels, double value,
             std::string_view suffix = {});

    /// True when no family is declared.
    bool empty() const { return families_.empty(); }

    /// The exposition text: per family "# HELP", "# TYPE", then its samples, each line ending
    /// in '\n'. A family without samples is written with HELP and TYPE only.
    std::string render() const;

private:
    struct family {
        std::string name;
        metric_type type;
        std::string help;
        std::vector<std::string> lines;   // rendered samples
        std::vector<std::string> series;  // sorted identities, to refuse duplicates
    };
    family* find(std::string_view name);
    std::vector<family> families_;
};

/// A node_exporter textfile-collector file for one check result (all gauges, no sample
/// timestamps, which the collector refuses):
/// - meshperf_check_status{peer, transport}: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN
/// - meshperf_check_figure_status{peer, transport, test, size_bytes}: the same, per figure
/// - meshperf_check_bandwidth_bytes_per_second{peer, transport, size_bytes}
/// - meshperf_check_latency_seconds{peer, transport, size_bytes}: one-way
/// - meshperf_check_last_run_timestamp_seconds{peer, transport}: `unix_seconds`
/// Figures that are not positive finite numbers have no value sample (their status says
/// UNKNOWN); a figure given twice (same test and size) is written once, the first.
std::string check_textfile(const check_result&, double unix_seconds);

}  // namespace meshperf::core
