#include "core/prometheus.hpp"

#include "core/error.hpp"
#include "core/units.hpp"
#include "core/utf8.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <string>
#include <utility>

namespace meshperf::core {

namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

bool suffix_allowed(metric_type t, std::string_view suffix) {
    if (suffix.empty()) return t != metric_type::histogram;
    if (suffix == "_sum" || suffix == "_count") return t == metric_type::summary || t == metric_type::histogram;
    if (suffix == "_bucket") return t == metric_type::histogram;
    return false;
}

}  // namespace

std::string_view to_string(metric_type t) {
    switch (t) {
        case metric_type::counter: return "counter";
        case metric_type::gauge: return "gauge";
        case metric_type::summary: return "summary";
        case metric_type::histogram: return "histogram";
        case metric_type::untyped: return "untyped";
    }
    return "untyped";
}

bool valid_metric_name(std::string_view n) {
    if (n.empty() || !(name_start(n[0]) || n[0] == ':')) return false;
    return std::all_of(n.begin(), n.end(), [](char c) { return name_char(c) || c == ':'; });
}

bool valid_label_name(std::string_view n) {
    if (n.empty() || !name_start(n[0]) || n.starts_with("__")) return false;
    return std::all_of(n.begin(), n.end(), name_char);
}

namespace {

/// `v` with backslash, double quote and line feed escaped, bytes as they are: a series'
/// identity, so two values that differ only in bytes that are not UTF-8 stay two series.
std::string escape_quoted(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

}  // namespace

std::string escape_label_value(std::string_view v) { return escape_quoted(to_valid_utf8(v)); }

std::string escape_help(std::string_view raw) {
    const auto v = to_valid_utf8(raw);
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    return fmt::format("{}", v);
}

exposition::family* exposition::find(std::string_view name) {
    for (family& f : families_)
        if (f.name == name) return &f;
    return nullptr;
}

void exposition::declare(std::string_view name, metric_type type, std::string_view help) {
    if (!valid_metric_name(name))
        throw spec_error(fmt::format("metric name \"{}\" is invalid: use letters, digits, '_' and ':', not "
                                     "starting with a digit",
                                     name));
    if (family* f = find(name)) {
        if (f->type != type || f->help != help)
            throw spec_error(fmt::format("metric family {} is declared twice with different type or help", name));
        return;
    }
    families_.push_back(family{std::string(name), type, std::string(help), {}, {}});
}

void exposition::add(std::string_view name, std::initializer_list<metric_label> labels, double value,
                     std::string_view suffix) {
    add(name, std::span<const metric_label>(labels.begin(), labels.size()), value, suffix);
}

void exposition::add(std::string_view name, std::span<const metric_label> labels, double value,
                     std::string_view suffix) {
    family* f = find(name);
    if (!f) throw spec_error(fmt::format("metric family {} is not declared; declare() it first", name));
    if (!suffix_allowed(f->type, suffix))
        throw spec_error(fmt::format("a {} has no sample named {}{}", to_string(f->type), name, suffix));
    std::vector<const metric_label*> sorted;
    for (const metric_label& l : labels) {
        if (!valid_label_name(l.name))
            throw spec_error(fmt::format("label name \"{}\" of {} is invalid: use letters, digits and '_', not "
                                         "starting with a digit or \"__\"",
                                         l.name, name));
        sorted.push_back(&l);
    }
    std::sort(sorted.begin(), sorted.end(), [](const metric_label* a, const metric_label* b) { return a->name < b->name; });
    for (std::size_t i = 1; i < sorted.size(); ++i)
        if (sorted[i]->name == sorted[i - 1]->name)
            throw spec_error(fmt::format("label {} is given twice on {}", sorted[i]->name, name));
    auto has = [&](std::string_view label) {
        return std::any_of(sorted.begin(), sorted.end(), [&](const metric_label* l) { return l->name == label; });
    };
    if (f->type == metric_type::summary && suffix.empty() && !has("quantile"))
        throw spec_error(fmt::format("summary {} sample needs a \"quantile\" label", name));
    if (f->type == metric_type::histogram && suffix == "_bucket" && !has("le"))
        throw spec_error(fmt::format("histogram {}_bucket sample needs an \"le\" label", name));

    std::string rendered_labels;
    for (std::size_t i = 0; i < labels.size(); ++i)
        rendered_labels += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].name, escape_label_value(labels[i].value));
    std::string identity(suffix);
    for (const metric_label* l : sorted) identity += fmt::format(",{}=\"{}\"", l->name, escape_quoted(l->value));
    const auto at = std::lower_bound(f->series.begin(), f->series.end(), identity);
    if (at != f->series.end() && *at == identity)
        throw spec_error(fmt::format("{}{}{{{}}} is added twice", name, suffix, rendered_labels));
    f->series.insert(at, identity);
    f->lines.push_back(fmt::format("{}{}{}{}{} {}\n", name, suffix, labels.empty() ? "" : "{", rendered_labels,
                                   labels.empty() ? "" : "}", format_value(value)));
}

std::string exposition::render() const {
    std::string out;
    for (const family& f : families_) {
        out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, escape_help(f.help), f.name, to_string(f.type));
        for (const std::string& line : f.lines) out += line;
    }
    return out;
}

namespace {

// A unit conversion adds representation noise (23.1 us / 1e6 prints as 2.3100000000000002e-05);
// 15 significant digits are below any measurement's precision and print cleanly.
// from_chars, unlike strtod, ignores the locale.
double converted(double v, double factor) {
    const std::string text = fmt::format("{:.15g}", v * factor);
    double out = v * factor;
    std::from_chars(text.data(), text.data() + text.size(), out);
    return out;
}

}  // namespace

std::string check_textfile(const check_result& r, double unix_seconds) {
    exposition e;
    e.declare("meshperf_check_status", metric_type::gauge,
              "State of the last meshperf check: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.");
    e.declare("meshperf_check_figure_status", metric_type::gauge,
              "State of one figure of the last meshperf check: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.");
    e.declare("meshperf_check_bandwidth_bytes_per_second", metric_type::gauge,
              "Bandwidth measured by the last meshperf check, counted at the receiver.");
    e.declare("meshperf_check_latency_seconds", metric_type::gauge,
              "One-way latency (round trip / 2) measured by the last meshperf check.");
    e.declare("meshperf_check_last_run_timestamp_seconds", metric_type::gauge,
              "When the last meshperf check ran, in seconds since the Unix epoch.");
    const std::string& peer = r.target.peer;
    const std::string& transport = r.target.transport;
    e.add("meshperf_check_status", {{"peer", peer}, {"transport", transport}}, exit_code(r.state));
    std::vector<std::pair<figure_kind, std::uint64_t>> seen;  // a figure given twice is written once
    for (const figure_verdict& v : r.figures) {
        const check_figure& f = v.figure;
        if (std::find(seen.begin(), seen.end(), std::pair{f.kind, f.size_bytes}) != seen.end()) continue;
        seen.emplace_back(f.kind, f.size_bytes);
        const std::string size = std::to_string(f.size_bytes);
        e.add("meshperf_check_figure_status",
              {{"peer", peer}, {"transport", transport}, {"test", std::string(to_string(f.kind))}, {"size_bytes", size}},
              exit_code(v.state));
        if (!std::isfinite(f.value) || f.value <= 0) continue;
        if (f.kind == figure_kind::bandwidth)
            e.add("meshperf_check_bandwidth_bytes_per_second",
                  {{"peer", peer}, {"transport", transport}, {"size_bytes", size}}, converted(f.value, bytes_per_s_per_gbit_per_s));
        else
            e.add("meshperf_check_latency_seconds", {{"peer", peer}, {"transport", transport}, {"size_bytes", size}},
                  converted(f.value, 1e-6));
    }
    e.add("meshperf_check_last_run_timestamp_seconds", {{"peer", peer}, {"transport", transport}}, unix_seconds);
    return e.render();
}

}  // namespace meshperf::core
