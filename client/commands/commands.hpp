#pragma once
/// Subcommands of the meshperf CLI. Each registers itself on the app and returns a function
/// that runs it once parsing succeeded (returning the process exit code).
#include "transport/tls.hpp"

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace meshperf::client {

/// Options every subcommand shares.
struct common_options {
    std::string token_file;   ///< --token-file; else $MESHPERF_TOKEN
    transport::tls_files tls; ///< --tls-ca / --tls-cert / --tls-key: talk TLS to the daemons
};

using command_runner = std::function<int()>;

command_runner add_sweep_command(CLI::App& app, const common_options& common);
command_runner add_info_command(CLI::App& app, const common_options& common);
command_runner add_runs_command(CLI::App& app, const common_options& common);
command_runner add_show_command(CLI::App& app, const common_options& common);
command_runner add_cancel_command(CLI::App& app, const common_options& common);
command_runner add_matrix_command(CLI::App& app, const common_options& common);
command_runner add_check_command(CLI::App& app, const common_options& common);
command_runner add_baseline_command(CLI::App& app, const common_options& common);
command_runner add_local_command(CLI::App& app, const common_options& common);
command_runner add_plot_command(CLI::App& app, const common_options& common);
command_runner add_report_command(CLI::App& app, const common_options& common);
command_runner add_plan_command(CLI::App& app, const common_options& common);
command_runner add_model_command(CLI::App& app, const common_options& common);
command_runner add_collective_command(CLI::App& app, const common_options& common);
/// `meshperf inspect [HOST]`: the node's PCIe links, ACS, GPU-NIC affinity and manifest.
command_runner add_inspect_command(CLI::App& app, const common_options& common);

}  // namespace meshperf::client
