// meshperf local [HOST]: copy-engine sweeps (host<->GPU, GPU<->GPU) on this node, in this
// process, or on HOST's node by its meshperfd (POST /v1/local). Built in every meshperf: the
// in-process sweep is local_here.cpp or, without CUDA, local_here_unavailable.cpp.
#include "client/support/cli_wording.hpp"
#include "core/json_text.hpp"
#include "client/commands/commands.hpp"
#include "client/support/output_format.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/local_here.hpp"
#include "client/render/local_copy.hpp"
#include "core/error.hpp"
#include "core/local_copy_spec.hpp"
#include "core/sizes.hpp"
#include "node/copy_floors.hpp"
#include "node/manifest.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <thread>
#include <unistd.h>

namespace meshperf::client {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

/// How long one POST /v1/local may take: the daemon stops a sweep at 600 s
/// (daemon/runs/local_copy_job.hpp), then answers.
constexpr auto local_call_timeout = 900s;
/// How long to keep asking a daemon that is busy measuring.
constexpr auto busy_patience = 300s;

struct local_options {
    std::string host;
    std::string copies = "h2d,d2h,d2d";
    std::string sizes = "4K..1G";
    int device = 0;
    bool verify = false;
    bool all_gpus = false;
    std::string expect;  ///< --expect node.toml: the copy floors
    output_format format = output_format::table;
    std::string output;
};

/// Asks HOST's daemon to sweep; waits (and says so on a terminal) while it is measuring.
json sweep_remote(const std::string& host, const core::local_copy_spec& spec, const credentials& creds, bool tty) {
    daemon_client daemon(host, creds);
    const auto give_up = std::chrono::steady_clock::now() + busy_patience;
    if (tty) std::fprintf(stderr, "sweeping %s on %s (the table comes when the sweep ends)\n", spec.copies.c_str(),
                          daemon.address().to_string().c_str());
    // Ends the "waiting" status line, however the loop ends.
    struct status_line {
        bool open = false;
        ~status_line() { if (open) std::fprintf(stderr, "\n"); }
    } line;
    while (true) {
        try {
            return daemon.post("/v1/local", core::to_json(spec), local_call_timeout);
        } catch (const daemon_busy& e) {
            if (std::chrono::steady_clock::now() > give_up)
                throw client_error(exit_run_failed, fmt::format("{} (gave up after {} s)", e.what(), busy_patience.count()));
            if (tty) std::fprintf(stderr, "\r\033[Kwaiting: %s", e.what());
            line.open = tty;
            std::this_thread::sleep_for(std::chrono::seconds(std::clamp(e.retry_after_s(), 1, 30)));
        }
    }
}

}  // namespace

command_runner add_local_command(CLI::App& app, const common_options& common) {
    auto o = std::make_shared<local_options>();
    auto* cmd = app.add_subcommand("local", "sweep copy-engine rates, host<->GPU and GPU<->GPU, on this node or on HOST's");
    cmd->add_option("host", o->host,
                    "HOST[:PORT] of a meshperfd that runs the sweep on its node (also localhost: this node's daemon); "
                    "without it, the sweep runs in this process");
    cmd->add_option("--copy", o->copies, "h2d, d2h, d2d, p2p (comma list)")->capture_default_str();
    cmd->add_option("--sizes", o->sizes, "sizes, e.g. 4K..1G (at most 64)")->capture_default_str();
    cmd->add_option("--device", o->device, "GPU index for h2d, d2h, d2d")->capture_default_str();
    cmd->add_flag("--verify", o->verify, "check the copied bytes");
    cmd->add_flag("--all-gpus", o->all_gpus,
                  "each copy on every GPU of the node at once (h2d, d2h, d2d): each GPU's rate and their sum, per size");
    cmd->add_option("--expect", o->expect,
                    "with --all-gpus: the node's manifest (TOML); its h2d_floor_gb_per_s and d2h_floor_gb_per_s judge each "
                    "GPU's rate at the largest size: exit 2 (CRITICAL) naming each GPU below");
    add_format_option(*cmd, o->format, {output_format::table, output_format::json});
    cmd->add_option("-o,--output", o->output, "write to FILE instead of stdout");
    return [o, cmd, &common]() -> int {
        if (o->all_gpus && cmd->count("--device"))
            throw client_error(exit_usage, "--all-gpus copies on every GPU: leave out --device (or drop --all-gpus to sweep one GPU)");
        if (!o->expect.empty() && !o->all_gpus)
            throw client_error(exit_usage, "--expect judges the copy floors with every GPU copying at once: add --all-gpus");
        std::optional<node::node_manifest> expect;
        if (!o->expect.empty()) {
            try {
                expect = node::load_manifest(o->expect);
            } catch (const core::spec_error& e) {
                throw client_error(exit_usage, e.what());
            }
            if (!expect->h2d_floor_gb_per_s && !expect->d2h_floor_gb_per_s)
                throw client_error(exit_usage, fmt::format("--expect {}: no h2d_floor_gb_per_s or d2h_floor_gb_per_s in it, so "
                                                           "there is nothing to judge the copies by",
                                                           o->expect));
        }
        core::local_copy_spec spec;
        spec.copies = o->copies;
        spec.device = o->device;
        spec.verify = o->verify;
        spec.all_gpus = o->all_gpus;
        std::string size_note;
        try {
            const auto sizes = core::parse_size_list_as_written(o->sizes);
            spec.sizes = sizes.sizes;
            size_note = core::size_order_note("--sizes", o->sizes, sizes);
            core::validate(spec);
        } catch (const core::spec_error& e) {
            throw client_error(exit_usage, with_option_name(with_option_name(e.what(), "copies", "--copy"), "sizes", "--sizes"));
        }
        if (!size_note.empty()) std::fprintf(stderr, "%s\n", size_note.c_str());
        const bool tty = ::isatty(STDERR_FILENO);
        const auto doc = o->host.empty() ? sweep_here(spec, tty)
                                         : sweep_remote(o->host, spec, client_credentials(common.token_file, common.tls), tty);
        std::string text;
        try {
            if (doc.value("schema", "") != "meshperf.local/1") throw std::runtime_error("its schema is not meshperf.local/1");
            text = render(o->format, {.table = [&] { return render_local_table(doc); }, .json = [&] { return core::json_text(doc, 2) + "\n"; }});
        } catch (const std::exception& e) {
            throw client_error(exit_unreachable, fmt::format("{} returned a copy sweep this meshperf cannot read: {}",
                                                             o->host.empty() ? "the sweep" : o->host,
                                                             e.what()));
        }
        // The floors' verdict goes to stderr, so --format json stays one document.
        const auto floors = expect ? node::copy_floor_text(node::judge_copy_floors(doc, *expect)) : node::copy_floor_verdict{};
        write_output(o->output, text);
        if (!floors.text.empty()) std::fprintf(stderr, "%s", floors.text.c_str());
        if (doc.contains("stopped") && doc["stopped"].is_string()) {
            std::fprintf(stderr, "meshperf: %s\n", doc["stopped"].get<std::string>().c_str());
            return exit_run_failed;
        }
        if (local_verify_failed(doc)) return exit_run_failed;
        return floors.exit_code;
    };
}

}  // namespace meshperf::client
