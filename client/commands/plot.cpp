// meshperf plot: result files to SVG (sweeps overlaid, or a matrix as a heatmap).
#include "client/support/predictions.hpp"
#include "client/commands/commands.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/output_format.hpp"
#include "client/support/result_files.hpp"
#include "client/support/run_model.hpp"
#include "client/render/svg_collective.hpp"
#include "client/render/svg_heatmap.hpp"
#include "client/render/svg_plot.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <memory>

namespace meshperf::client {

namespace {

struct plot_options_cli {
    std::vector<std::string> files;
    std::string output;
    std::string title;
    std::string metric = "auto";
    bool no_model = false;
};

std::string plot_matrix(const report_matrix& m, const plot_options_cli& o) {
    const bool bandwidth = o.metric == "bandwidth" || (o.metric == "auto" && m.analysis.bandwidth);
    if (bandwidth ? !m.analysis.bandwidth : !m.analysis.latency)
        throw client_error(exit_usage, fmt::format("the matrix has no {} figures to draw; try --metric {}",
                                                   bandwidth ? "bandwidth" : "latency", bandwidth ? "latency" : "bandwidth"));
    auto data = heatmap_from_analysis(m.analysis, m.hosts, bandwidth ? heatmap_metric::bandwidth : heatmap_metric::latency);
    if (!o.title.empty()) data.title = o.title;
    return render_heatmap_svg(data);
}

std::string plot_runs(const std::vector<loaded_file>& files, const plot_options_cli& o) {
    std::vector<plot_run> runs;
    std::map<std::string, int> seen;
    for (const auto& f : files) seen[run_label(f.run())]++;
    for (const auto& f : files) {
        plot_run r;
        r.run = f.run();
        r.label = run_label(r.run);
        // Two runs of one path would share a legend entry: tell them apart by file.
        if (seen[r.label] > 1) r.label += " (" + std::filesystem::path(f.path).filename().string() + ")";
        if (!o.no_model) r.model = fit_run_model(r.run).fit;
        runs.push_back(std::move(r));
    }
    plot_options po;
    po.title = o.title;
    return render_sweep_svg(runs, measured_panels(std::span<const plot_run>(runs), po));
}

/// One collective result file (meshperf collective -o, or --format json): time and busbw per
/// op against size, with its predictions where it has them (client/render/svg_collective.hpp).
std::string plot_collective(const std::string& path, const nlohmann::json& doc, const plot_options_cli& o) {
    try {
        const auto run = core::collective_result_from_json(doc);
        return render_collective_svg(run, predicted_times(predictions_from_json(doc)), o.title);
    } catch (const std::exception& e) {
        throw client_error(exit_usage, fmt::format("{}: {}", path, e.what()));
    }
}

}  // namespace

command_runner add_plot_command(CLI::App& app, const common_options&) {
    auto o = std::make_shared<plot_options_cli>();
    auto* cmd = app.add_subcommand("plot", "draw result files as SVG: sweeps (latency and bandwidth against size, overlaid, "
                                           "with their models), one matrix (heatmap) or one collective run (time and "
                                           "busbw per op against size, predictions dashed)");
    cmd->add_option("files", o->files, "RESULT.json... (meshperf sweep/show --format json), one MATRIX.json "
                                       "(meshperf matrix --format json) or one collective result (meshperf collective -o)")
        ->required();
    cmd->add_option("-o,--output", o->output, "write the SVG to FILE (default: stdout)");
    cmd->add_option("--title", o->title, "title of the picture (default: derived from the files)");
    cmd->add_option("--metric", o->metric, "matrix: bandwidth, latency or auto (bandwidth when measured)")
        ->check(CLI::IsMember({"auto", "bandwidth", "latency"}))
        ->capture_default_str();
    cmd->add_flag("--no-model", o->no_model, "sweeps: do not draw the fitted models");
    return [o]() -> int {
        if (o->files.size() == 1) {
            const auto doc = read_json_file(o->files[0]);
            if (doc.is_object() && doc.value("schema", "") == core::collective_result_schema) {
                write_output(o->output, plot_collective(o->files[0], doc, *o));
                return exit_ok;
            }
        }
        std::vector<loaded_file> files;
        for (const auto& p : o->files) files.push_back(load_result_file(p));
        std::size_t matrices = 0;
        for (const auto& f : files) matrices += !f.is_run();
        if (matrices > 0 && files.size() > 1)
            throw client_error(exit_usage, "plot draws either runs or one matrix; for several, use meshperf report");
        write_output(o->output, matrices ? plot_matrix(files[0].matrix(), *o) : plot_runs(files, *o));
        return exit_ok;
    };
}

}  // namespace meshperf::client
