// meshperf local: copy-engine sweeps on this node (host<->GPU, GPU<->GPU), built where the
// CUDA toolkit is (client/CMakeLists.txt picks this file or local_command_unavailable.cpp).
#include "client/commands.hpp"
#include "client/daemon_client.hpp"
#include "client/render_table.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "gpu/copy_json.hpp"
#include "gpu/copy_sweep.hpp"
#include "gpu/status.hpp"

#include <fmt/format.h>
#include <memory>
#include <unistd.h>

namespace meshperf::client {

using nlohmann::json;

namespace {

struct local_options {
    std::string host;
    std::string copies = "h2d,d2h,d2d";
    std::string sizes = "4K..1G";
    int device = 0;
    bool verify = false;
    std::string format = "table";
    std::string output;
};

std::string render_local(const std::vector<gpu::copy_result>& results, const std::vector<gpu::copy_matrix>& matrices) {
    std::string out;
    for (const auto& r : results) {
        out += fmt::format("\n{} ({} -> {})\n", gpu::to_string(r.kind), r.src, r.dst);
        std::vector<std::vector<std::string>> rows{{"size", "GB/s", "min", "max", "copies/batch", "verified"}};
        for (const auto& p : r.points)
            rows.push_back({core::format_size(p.size_bytes), fmt::format("{:.2f}", p.gb_per_s), fmt::format("{:.2f}", p.gb_per_s_min),
                            fmt::format("{:.2f}", p.gb_per_s_max), std::to_string(p.copies_per_batch),
                            p.verify ? (p.verified() ? "yes" : "NO") : "-"});
        out += format_table(rows);
        for (const auto& w : r.warnings) out += "  warning: " + w + "\n";
    }
    for (const auto& m : matrices) {
        if (!m.waived.empty()) { out += "\np2p matrix: " + m.waived + "\n"; continue; }
        out += "\np2p matrix (GB/s at the largest size, row = source)\n";
        std::vector<std::vector<std::string>> rows{{"src\\dst"}};
        for (int d = 0; d < m.device_count; ++d) rows[0].push_back(fmt::format("cuda:{}", d));
        for (int s = 0; s < m.device_count; ++s) {
            std::vector<std::string> row{fmt::format("cuda:{}", s)};
            for (int d = 0; d < m.device_count; ++d) {
                std::string cell = "-";
                for (const auto& r : m.pairs)
                    if (r.src == fmt::format("cuda:{}", s) && r.dst == fmt::format("cuda:{}", d) && !r.points.empty())
                        cell = fmt::format("{:.1f}", r.points.back().gb_per_s);
                row.push_back(cell);
            }
            rows.push_back(row);
        }
        out += format_table(rows);
    }
    return out;
}

}  // namespace

command_runner add_local_command(CLI::App& app, const common_options&) {
    auto o = std::make_shared<local_options>();
    auto* cmd = app.add_subcommand("local", "sweep copy-engine rates on this node: host<->GPU and GPU<->GPU");
    cmd->add_option("host", o->host, "(reserved) a daemon to run the sweep on; today the sweep runs in this process");
    cmd->add_option("--copy", o->copies, "h2d, d2h, d2d, p2p (comma list)")->capture_default_str();
    cmd->add_option("--sizes", o->sizes, "sizes, e.g. 4K..1G")->capture_default_str();
    cmd->add_option("--device", o->device, "GPU index for h2d, d2h, d2d")->capture_default_str();
    cmd->add_flag("--verify", o->verify, "check the copied bytes");
    cmd->add_option("--format", o->format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
    cmd->add_option("-o,--output", o->output, "write to FILE instead of stdout");
    return [o]() -> int {
        if (!o->host.empty() && o->host != "localhost")
            throw client_error(exit_usage, "meshperf local runs on this node only: run it on the node you want to measure (no HOST)");
        gpu::copy_options opts;
        try {
            opts.sizes = core::parse_size_list(o->sizes);
        } catch (const core::spec_error& e) {
            throw client_error(exit_usage, e.what());
        }
        std::vector<gpu::copy_kind> kinds;
        try {
            kinds = gpu::parse_copy_kinds(o->copies);
        } catch (const core::spec_error& e) {
            throw client_error(exit_usage, e.what());
        }
        const auto& status = gpu::cuda_availability();
        if (!status.ok()) throw client_error(exit_run_failed, status.message);
        opts.device = o->device;
        opts.verify = o->verify;
        const bool tty = ::isatty(STDERR_FILENO);
        std::vector<gpu::copy_result> results;
        std::vector<gpu::copy_matrix> matrices;
        try {
            for (auto k : kinds) {
                if (k == gpu::copy_kind::p2p) {
                    matrices.push_back(gpu::run_p2p_matrix(opts));
                    continue;
                }
                opts.on_point = [&](const gpu::copy_point& p) {
                    if (tty) std::fprintf(stderr, "%s %s: %.2f GB/s\n", std::string(gpu::to_string(k)).c_str(),
                                          core::format_size(p.size_bytes).c_str(), p.gb_per_s);
                };
                results.push_back(gpu::run_copy_sweep(k, opts));
            }
        } catch (const std::system_error& e) {
            throw client_error(exit_run_failed, e.what());
        }
        if (o->format == "json") {
            json doc = {{"schema", "meshperf.local/1"}, {"copies", json::array()}, {"p2p", json::array()}};
            for (const auto& r : results) doc["copies"].push_back(gpu::to_json(r));
            for (const auto& m : matrices) doc["p2p"].push_back(gpu::to_json(m));
            write_output(o->output, doc.dump(2) + "\n");
        } else {
            write_output(o->output, render_local(results, matrices));
        }
        for (const auto& r : results)
            if (r.verify_failed()) return exit_run_failed;
        return exit_ok;
    };
}

}  // namespace meshperf::client
