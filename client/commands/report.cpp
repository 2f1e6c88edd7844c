// meshperf report: result, matrix and collective result files to one self-contained HTML page.
#include "client/support/predictions.hpp"
#include "client/commands/commands.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/output_format.hpp"
#include "client/render/html_report.hpp"
#include "client/support/result_files.hpp"

#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <memory>

namespace meshperf::client {

namespace {

std::string now_rfc3339() {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace

command_runner add_report_command(CLI::App& app, const common_options&) {
    auto files = std::make_shared<std::vector<std::string>>();
    auto output = std::make_shared<std::string>();
    auto opt = std::make_shared<report_options>();
    auto no_points = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand("report", "one self-contained HTML page (tables, plots, models, heatmaps) from result "
                                             "and matrix files");
    cmd->add_option("files", *files, "RESULT.json, MATRIX.json and collective result files (meshperf sweep/show/matrix/"
                                     "collective --format json)")
        ->required();
    cmd->add_option("-o,--output", *output, "write the HTML to FILE (default: stdout)");
    cmd->add_option("--title", opt->title, "page title")->capture_default_str();
    cmd->add_flag("--no-points", *no_points, "leave out the table of every measured point");
    return [=]() -> int {
        std::vector<core::run_result> runs;
        std::vector<report_matrix> matrices;
        std::vector<report_collective> collectives;
        for (const auto& p : *files) {
            if (const auto doc = read_json_file(p); doc.is_object() && doc.value("schema", "") == core::collective_result_schema) {
                try {
                    collectives.push_back({core::collective_result_from_json(doc), predicted_times(predictions_from_json(doc))});
                } catch (const std::exception& e) {
                    throw client_error(exit_usage, fmt::format("{}: not a readable collective result: {}", p, e.what()));
                }
                continue;
            }
            auto f = load_result_file(p);
            if (f.is_run()) runs.push_back(f.run());
            else matrices.push_back(f.matrix());
        }
        report_options o = *opt;
        o.generated_at = now_rfc3339();
        o.point_tables = !*no_points;
        write_output(*output, render_html_report(runs, matrices, o, collectives));
        return exit_ok;
    };
}

}  // namespace meshperf::client
