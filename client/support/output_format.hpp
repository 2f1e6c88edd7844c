#pragma once
/// The one output layer of the CLI: every command that prints a document declares its
/// `--format` here and hands each format's renderer to render(), so the choice (names,
/// default, help text, refusal of a format the command lacks) is made in one place.
/// Measurement never prints; a renderer returns text.
#include <CLI/CLI.hpp>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::client {

/// The formats a command may offer.
enum class output_format { table, json, csv, nagios };

/// "table", "json", "csv", "nagios".
std::string_view to_string(output_format);

/// Adds `--format` to `cmd`, accepting exactly `offered` (the first is the default, which
/// `format` is set to) by name, case-insensitively; CLI11 refuses any other name with the
/// list of those offered (exit 2).
CLI::Option* add_format_option(CLI::App& cmd, output_format& format, std::initializer_list<output_format> offered);

/// One renderer per format a command offers; a format left empty is not offered.
struct renderers {
    std::function<std::string()> table;
    std::function<std::string()> json;
    std::function<std::string()> csv;
    std::function<std::string()> nagios;
};

/// The text of `format`, from its renderer. Throws std::logic_error when the command has
/// none for it (add_format_option never lets that through).
std::string render(output_format format, const renderers& r);

/// Writes text to `path`, or to stdout when path is empty or "-". Throws client_error.
void write_output(const std::string& path, const std::string& text);

/// Where a renderer that writes piece by piece hands its text.
using text_sink = std::function<void(std::string_view)>;

/// Writes what `produce` hands its sink to `path` (a temporary file renamed into place, as
/// write_output does) or to stdout, as it comes: the whole text is never held.
void write_output_streamed(const std::string& path, const std::function<void(const text_sink&)>& produce);

}  // namespace meshperf::client
