#include "client/support/cli_wording.hpp"
#include "core/json_text.hpp"
#include "client/render/collective.hpp"
#include "client/collective/run.hpp"
#include "client/commands/commands.hpp"
#include "client/support/output_format.hpp"
#include "client/support/daemon_client.hpp"
#include "client/render/table.hpp"
#include "client/support/result_files.hpp"
#include "client/render/run_output.hpp"
#include "core/result.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <memory>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// The document of `meshperf show FILE`; a path that is no file is a usage error that says
/// both forms.
json read_shown_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw client_error(exit_usage, fmt::format("show: no such file {}: give HOST RUN_ID for a stored run, or the FILE of a "
                                                   "saved result",
                                                   path));
    if (!std::filesystem::is_regular_file(path, ec))
        throw client_error(exit_usage, fmt::format("show: {} is not a regular file: give HOST RUN_ID for a stored run, or the "
                                                   "FILE of a saved result",
                                                   path));
    return read_json_file(path);
}

/// GET /v1/runs/ID from HOST; a HOST that is a saved file is a usage error (it was resolved
/// as a host name), and the daemon's advice for an unknown id names the CLI command.
json fetch_shown_run(const std::string& host, const std::string& id, const credentials& creds) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(host, ec) || (host.size() > 5 && host.ends_with(".json")))
        throw client_error(exit_usage, fmt::format("show: {} is a file, and a saved result is shown without a run id: meshperf "
                                                   "show {} (or give HOST RUN_ID for a stored run)",
                                                   host, host));
    try {
        return daemon_client(host, creds).get("/v1/runs/" + id);
    } catch (const client_error& e) {
        throw client_error(e.code(), with_runs_command(e.what(), host));
    }
}

}  // namespace

command_runner add_info_command(CLI::App& app, const common_options& common) {
    auto host = std::make_shared<std::string>("localhost:7470");
    auto format = std::make_shared<output_format>();
    auto* cmd = app.add_subcommand("info", "show a daemon's version, host, transports, devices and queue");
    cmd->add_option("host", *host, "daemon HOST[:PORT]")->capture_default_str();
    add_format_option(*cmd, *format, {output_format::table, output_format::json});
    return [host, format, &common] {
        const auto info = daemon_client(*host, client_credentials(common.token_file, common.tls)).get("/v1/info");
        write_output("", render(*format, {.table = [&] { return render_info(info); }, .json = [&] { return core::json_text(info, 2) + "\n"; }}));
        return exit_ok;
    };
}

/// Up to `limit` runs, newest first, following the daemon's `next` cursor page by page
/// (GET /v1/runs answers at most run_page_limit per page).
nlohmann::json fetch_run_pages(const daemon_client& daemon, unsigned limit, const std::string& peer) {
    // MESHPERF_TEST_RUNS_PAGE (a test hook) asks for smaller pages, so a test follows the cursor.
    unsigned run_page_limit = 1000;
    if (const char* hook = std::getenv("MESHPERF_TEST_RUNS_PAGE"); hook && std::atoi(hook) > 0)
        run_page_limit = std::min(run_page_limit, static_cast<unsigned>(std::atoi(hook)));
    nlohmann::json runs = nlohmann::json::array();
    std::string before;
    while (runs.size() < limit) {
        const auto want = std::min<std::size_t>(run_page_limit, limit - runs.size());
        std::string target = fmt::format("/v1/runs?limit={}", want);
        if (!peer.empty()) target += "&peer=" + peer;
        if (!before.empty()) target += "&before=" + before;
        const auto page = daemon.get(target);
        const auto it = page.find("runs");
        if (it == page.end() || !it->is_array()) break;
        for (const auto& r : *it) runs.push_back(r);
        const auto next = page.find("next");
        if (it->empty() || next == page.end() || !next->is_string() || next->get<std::string>().empty()) break;
        before = next->get<std::string>();
    }
    return {{"runs", std::move(runs)}};
}

command_runner add_runs_command(CLI::App& app, const common_options& common) {
    auto host = std::make_shared<std::string>("localhost:7470");
    auto limit = std::make_shared<unsigned>(20);
    auto peer = std::make_shared<std::string>();
    auto format = std::make_shared<output_format>();
    auto* cmd = app.add_subcommand("runs", "list a daemon's recent runs, newest first");
    cmd->add_option("host", *host, "daemon HOST[:PORT]")->capture_default_str();
    cmd->add_option("--limit", *limit, "how many (the daemon answers pages of up to 1000; more are fetched page by page)")
        ->capture_default_str()
        ->check(CLI::Range(1u, 10'000'000u));
    cmd->add_option("--peer", *peer, "only runs against this peer HOST:PORT");
    add_format_option(*cmd, *format, {output_format::table, output_format::json});
    return [=, &common] {
        const auto list = fetch_run_pages(daemon_client(*host, client_credentials(common.token_file, common.tls)), *limit, *peer);
        write_output("", render(*format, {.table = [&] { return render_run_list(list); },
                                          .json = [&] { return core::json_text(list, 2) + "\n"; }}));
        return exit_ok;
    };
}

command_runner add_show_command(CLI::App& app, const common_options& common) {
    auto host = std::make_shared<std::string>();
    auto id = std::make_shared<std::string>();
    auto format = std::make_shared<output_format>();
    auto output = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("show", "show one stored run (a sweep or a collective), from a daemon or a saved JSON file");
    cmd->add_option("host", *host, "daemon HOST[:PORT], or a saved result FILE (sweep, show or collective --format json, "
                                   "collective -o)")
        ->required();
    cmd->add_option("run_id", *id, "run id (see meshperf runs); not with a FILE");
    add_format_option(*cmd, *format, {output_format::table, output_format::json, output_format::csv});
    cmd->add_option("-o,--output", *output, "write to FILE instead of stdout");
    return [=, &common] {
        const auto doc = id->empty() ? read_shown_file(*host) : fetch_shown_run(*host, *id, client_credentials(common.token_file, common.tls));
        if (doc.value("schema", "") == core::collective_result_schema) {
            const auto run = read_collective(doc);
            write_output(*output, render_collective(*format, run, doc, predictions_from_json(doc)));
            return run.state == core::run_state::failed ? exit_run_failed : exit_ok;
        }
        const auto run = core::run_result_from_json(doc);
        write_output(*output, render_run(*format, run, doc));
        return run.state == core::run_state::failed ? exit_run_failed : exit_ok;
    };
}

command_runner add_cancel_command(CLI::App& app, const common_options& common) {
    auto host = std::make_shared<std::string>();
    auto id = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("cancel", "cancel a queued or running run");
    cmd->add_option("host", *host, "daemon HOST[:PORT]")->required();
    cmd->add_option("run_id", *id, "run id")->required();
    return [=, &common] {
        daemon_client(*host, client_credentials(common.token_file, common.tls)).del("/v1/runs/" + *id);
        write_output("", fmt::format("cancelling {}\n", *id));
        return exit_ok;
    };
}

}  // namespace meshperf::client
