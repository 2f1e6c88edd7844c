// meshperf: the command-line client of meshperfd.
#include "client/commands/check.hpp"
#include "client/support/cli_suggest.hpp"
#include "client/commands/commands.hpp"
#include "client/support/daemon_client.hpp"
#include "core/error.hpp"

#include <csignal>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace meshperf::client;

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
    CLI::App app{"meshperf: network and interconnect latency/bandwidth sweeps between meshperfd daemons"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("meshperf ") + MESHPERF_VERSION);
    common_options common;
    app.add_option("--token-file", common.token_file, "file with the cluster bearer token (else $MESHPERF_TOKEN)");
    app.add_option("--tls-ca", common.tls.ca_file,
                   "talk TLS to the daemons, whose certificates must chain to this PEM CA bundle")
        ->envname("MESHPERF_TLS_CA");
    app.add_option("--tls-cert", common.tls.cert_file, "PEM client certificate, for daemons that require one (mutual TLS)")
        ->envname("MESHPERF_TLS_CERT");
    app.add_option("--tls-key", common.tls.key_file, "PEM private key of --tls-cert")->envname("MESHPERF_TLS_KEY");
    std::map<CLI::App*, command_runner> runners;
    auto add = [&](command_runner r) { runners[app.get_subcommands({}).back()] = std::move(r); };
    add(add_sweep_command(app, common));
    add(add_info_command(app, common));
    add(add_runs_command(app, common));
    add(add_show_command(app, common));
    add(add_cancel_command(app, common));
    add(add_matrix_command(app, common));
    add(add_check_command(app, common));
    add(add_baseline_command(app, common));
    add(add_local_command(app, common));
    add(add_plot_command(app, common));
    add(add_report_command(app, common));
    add(add_plan_command(app, common));
    add(add_model_command(app, common));
    add(add_collective_command(app, common));
    add(add_inspect_command(app, common));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // A mistyped command or long option: name the nearest one instead of CLI11's message.
        const auto hint = e.get_exit_code() == 0 ? std::string() : explain_unknown_name(app, std::vector<std::string>(argv + 1, argv + argc));
        if (const int check_rc = check_parse_failure(app, e, hint); check_rc >= 0) return check_rc;  // check: UNKNOWN (3)
        if (!hint.empty()) {
            std::fprintf(stderr, "meshperf: %s\n", hint.c_str());
            return exit_usage;
        }
        const int rc = app.exit(e);
        return rc == 0 ? exit_ok : exit_usage;
    }
    try {
        for (auto* sub : app.get_subcommands())
            if (auto it = runners.find(sub); it != runners.end()) return it->second();
        return exit_usage;
    } catch (const client_error& e) {
        std::fprintf(stderr, "meshperf: %s\n", e.what());
        return e.code();
    } catch (const meshperf::core::spec_error& e) {
        std::fprintf(stderr, "meshperf: %s\n", e.what());
        return exit_usage;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "meshperf: %s\n", e.what());
        return exit_run_failed;
    }
}
