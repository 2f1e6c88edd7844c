// meshperf inspect [HOST]: the node's own health before a job (node/inspect.hpp): PCIe
// link width and speed of every GPU and rail NIC, ACS on the bridges between a GPU and its
// nearest rail, GPU↔NIC affinity, rail links, and --expect's manifest. One Nagios verdict
// line with perfdata, exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN; the table below it, or
// the JSON document. With HOST its daemon inspects its node (POST /v1/inspect); without,
// this process inspects this machine. --loopback adds each RDMA device's loopback,
// --gpu-copies host<->GPU copies on every GPU at once.
#include "client/commands/commands.hpp"
#include "core/json_text.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/nagios_check.hpp"
#include "client/support/output_format.hpp"
#include "core/error.hpp"
#include "node/gpu_copy_check.hpp"
#include "node/host_addresses.hpp"
#include "node/inspect.hpp"
#include "node/inspect_textfile.hpp"
#include "node/loopback_check.hpp"
#include "node/read_inventory.hpp"

#include <cstdio>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <unistd.h>

namespace meshperf::client {

using nlohmann::json;

namespace {

struct inspect_options {
    std::string host;        ///< empty: this machine, in-process
    std::string expect;      ///< --expect node.toml
    std::string sysfs_root = "/sys";
    std::string prom_file;   ///< --prom-file: node_exporter textfile
    node::rail_selection rails;  ///< without HOST: --rails-include / --rails-exclude
    output_format format = output_format::table;
    bool loopback = false;   ///< --loopback: each RDMA device writes to itself
    bool gpu_copies = false; ///< --gpu-copies: host<->GPU copies on every GPU at once
};

std::string this_host() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
    return name;
}

/// The inspection document of this machine, made here.
json inspect_here(const inspect_options& o, const std::optional<node::node_manifest>& expect) {
    node::inventory_input in;
    in.sysfs_root = o.sysfs_root;
    in.addresses = node::host_addresses();
    in.selection = o.rails;
    auto result = node::inspect(node::read_inventory(in), expect, this_host());
    if (o.loopback) node::add_loopback_findings(result, transport::measure_rnic_loopback({}), expect);
    if (o.gpu_copies) node::add_gpu_copy_findings(result, node::survey_gpu_copies(), expect);
    return node::to_json(result);
}

/// The inspection document of HOST's node. Throws client_error when HOST does not resolve,
/// cannot be reached or answers something else (the command reports UNKNOWN, as `check`).
json inspect_remote(const inspect_options& o, const std::optional<node::node_manifest>& expect, const credentials& creds) {
    const daemon_client daemon(o.host, creds);
    json body = json::object();
    if (expect) body["expect"] = node::to_json(*expect);
    if (o.loopback) body["loopback"] = true;
    if (o.gpu_copies) body["gpu_copies"] = true;
    auto doc = daemon.post("/v1/inspect", body, call_timeout);
    if (!doc.is_object() || !doc.contains("exit_code") || !doc.contains("text"))
        throw client_error(exit_unreachable, fmt::format("{} answered /v1/inspect with something that is not an inspection "
                                                         "(an older meshperfd?)",
                                                         daemon.address().to_string()));
    return doc;
}

/// The verdict of an inspection that could not run for a reason of the caller's own (a bad
/// option, a manifest that cannot be read, no token, a daemon that cannot be reached):
/// UNKNOWN, exit 3, never CRITICAL. A health check's CRITICAL drains the node, so one bad
/// configuration rolled out to a fleet would otherwise drain every node.
json unknown_inspection(const std::string& why) {
    auto one_line = why;
    for (auto& c : one_line)
        if (c == '\n' || c == '|') c = c == '|' ? '/' : ' ';
    const auto line = fmt::format("MESHPERF INSPECT UNKNOWN - {}\n", one_line);
    return {{"state", "UNKNOWN"}, {"exit_code", 3}, {"error", why}, {"text", line}, {"nagios_text", line}};
}

int print_verdict(const json& doc, output_format format, const std::string& prom_file) {
    const auto text = render(format, {.table = [&] { return doc.value("text", std::string()); },
                                      .json = [&] { return core::json_text(doc, 2) + "\n"; },
                                      .nagios = [&] { return doc.value("nagios_text", std::string()); }});
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    const auto rc = doc.value("exit_code", 3);
    // A textfile that could not be written must not pass as OK (as for check).
    if (!write_textfile(prom_file, [&](double now) { return node::inspect_textfile(doc, now); }) && rc == 0) return 3;
    return rc >= 0 && rc <= 3 ? rc : 3;
}

/// The inspection, printed: its exit code. Throws for a failure that is not the node's.
int run_inspect(const inspect_options& o, const CLI::App& cmd, const common_options& common) {
    if (!o.host.empty() && cmd.count("--sysfs-root"))
        throw client_error(exit_usage, "--sysfs-root is for this machine; with HOST the daemon reads its own "
                                       "(meshperfd --sysfs-root)");
    if (!o.host.empty() && (cmd.count("--rails-include") || cmd.count("--rails-exclude")))
        throw client_error(exit_usage, "--rails-include/--rails-exclude are for this machine; with HOST the "
                                       "daemon's [rails] table picks the rails");
    if (const auto bad = prom_file_problem(o.prom_file); !bad.empty()) throw client_error(exit_usage, bad);
    for (const auto* patterns : {&o.rails.include, &o.rails.exclude})
        for (const auto& p : *patterns)
            if (const auto why = node::rail_pattern_problem(p); !why.empty())
                throw client_error(exit_usage, fmt::format("--rails-{}: {}", patterns == &o.rails.include ? "include" : "exclude", why));
    std::optional<node::node_manifest> expect;
    if (!o.expect.empty()) expect = node::load_manifest(o.expect);  // a bad manifest: UNKNOWN, as any option's mistake
    if (o.host.empty()) return print_verdict(inspect_here(o, expect), o.format, o.prom_file);
    return print_verdict(inspect_remote(o, expect, client_credentials(common.token_file, common.tls)), o.format, o.prom_file);
}

}  // namespace

command_runner add_inspect_command(CLI::App& app, const common_options& common) {
    auto o = std::make_shared<inspect_options>();
    auto* cmd = app.add_subcommand("inspect", "check a node before a job: PCIe links, ACS, GPU-NIC affinity, rails, "
                                              "--expect manifest, --loopback, --gpu-copies; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN");
    cmd->add_option("host", o->host, "daemon HOST[:PORT] whose node to inspect (default: this machine, in this process)");
    cmd->add_option("--expect", o->expect, "the node's manifest (TOML: gpus, rails, rail_rate_gbit, mtu, nic_firmware, "
                                           "gpu_driver); each difference is named");
    cmd->add_option("--sysfs-root", o->sysfs_root, "without HOST: where sysfs is mounted (a fixture tree in tests)")
        ->capture_default_str();
    cmd->add_option("--rails-include", o->rails.include, "without HOST: the rails are the NICs these globs match (netdev "
                                                         "or RDMA name), as the daemon's [rails] include")
        ->delimiter(',');
    cmd->add_option("--rails-exclude", o->rails.exclude, "without HOST: NICs these globs match are not rails")->delimiter(',');
    cmd->add_option("--prom-file", o->prom_file, "also write a node_exporter textfile here (atomically: temporary file, then "
                                                 "rename): verdict, findings, rail rates, PCIe links, GPU-rail pairs");
    cmd->add_flag("--loopback", o->loopback, "also loop each RDMA device back to itself (two endpoints on its first "
                                             "active port, RDMA WRITE for 0.5 s): failed or below the manifest's "
                                             "loopback_floor_gbit is CRITICAL, no device UNKNOWN");
    cmd->add_flag("--gpu-copies", o->gpu_copies,
                  "also copy host->GPU and GPU->host on every GPU at once (64 MiB, verified, as local --copy h2d,d2h "
                  "--all-gpus): corrupted, failed or below the manifest's h2d_floor_gb_per_s/d2h_floor_gb_per_s is "
                  "CRITICAL, no GPU or no CUDA UNKNOWN");
    add_format_option(*cmd, o->format, {output_format::table, output_format::json, output_format::nagios});
    return [o, cmd, &common]() -> int {
        // Every failure that is not the node's (options, manifest, token, an unreachable
        // daemon) is UNKNOWN with its Nagios line, in the asked format; stderr says it too.
        try {
            return run_inspect(*o, *cmd, common);
        } catch (const std::exception& e) {
            // The verdict first: scripts that merge stderr into stdout read its first line.
            const int rc = print_verdict(unknown_inspection(e.what()), o->format, "");
            std::fprintf(stderr, "meshperf: inspect: %s\n", e.what());
            return rc;
        }
    };
}

}  // namespace meshperf::client
