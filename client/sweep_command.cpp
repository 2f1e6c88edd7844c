#include "client/commands.hpp"
#include "client/daemon_client.hpp"
#include "client/render_table.hpp"
#include "client/run_model.hpp"
#include "client/svg_plot.hpp"
#include "core/error.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"
#include "core/sizes.hpp"

#include <cstdio>
#include <fmt/format.h>
#include <memory>
#include <unistd.h>

namespace meshperf::client {

using nlohmann::json;

namespace {

struct sweep_options {
    std::string initiator = "localhost:7470";
    std::string peer;
    std::string transport = "tcp";
    std::string tests = "latency,bandwidth";
    std::string sizes = "1..4M";
    std::uint32_t streams = 1;
    bool reverse = false;
    std::uint64_t iterations = 0;
    double duration = 0;
    double precision = 0.01;
    double max_time = 1.0;
    double warmup = 0.1;
    bool verify = false, busy_poll = false;
    std::string window;
    std::string cpus;
    std::string op = "write";
    std::uint32_t tx_depth = 128;
    std::uint32_t qps = 0;
    std::string device;
    std::uint32_t port = 1;
    int gid_index = -1;
    std::string memory, local_memory, remote_memory;
    std::string format = "table";
    std::string output;
    std::string svg;
    bool quiet = false;
};

/// Builds and validates the spec here, so bad options fail before anything is sent.
core::run_spec build_spec(const sweep_options& o) {
    core::run_spec s;
    s.peer = o.peer;
    s.transport = core::parse_transport_kind(o.transport);
    s.tests = core::parse_test_list(o.tests);
    s.sizes = core::parse_size_list(o.sizes);
    s.streams = o.qps ? o.qps : o.streams;
    s.reverse = o.reverse;
    if (o.iterations) s.iterations = o.iterations;
    if (o.duration > 0) s.duration_s = o.duration;
    s.precision = o.precision;
    s.max_point_s = o.max_time;
    s.warmup_s = o.warmup;
    s.verify = o.verify;
    s.busy_poll = o.busy_poll;
    if (!o.window.empty()) s.window_bytes = core::parse_size(o.window);
    if (!o.cpus.empty()) {
        const auto pins = core::parse_cpu_option(o.cpus);
        s.initiator_cpus = pins.initiator;
        s.peer_cpus = pins.peer;
    }
    s.op = core::parse_rdma_op(o.op);
    s.tx_depth = o.tx_depth;
    s.rdma_device = o.device;
    s.rdma_port = o.port;
    if (o.gid_index >= 0) s.gid_index = o.gid_index;
    s.local_memory = !o.local_memory.empty() ? o.local_memory : (!o.memory.empty() ? o.memory : "host");
    s.remote_memory = !o.remote_memory.empty() ? o.remote_memory : (!o.memory.empty() ? o.memory : "host");
    // The peer is named as the initiator will reach it; default its port like everywhere else.
    s.peer = transport::parse_endpoint(o.peer).to_string();
    core::validate(s);
    return s;
}

std::string render(const std::string& format, const core::run_result& run, const json& doc) {
    if (format == "json") return with_model(doc, run).dump(2) + "\n";
    if (format == "csv") return render_csv(run);
    return render_run_table(run);
}

}  // namespace

void write_output(const std::string& path, const std::string& text) {
    if (path.empty() || path == "-") {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
        return;
    }
    const auto tmp = path + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) throw client_error(exit_usage, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw client_error(exit_run_failed, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
}

command_runner add_sweep_command(CLI::App& app, const common_options& common) {
    auto o = std::make_shared<sweep_options>();
    auto* cmd = app.add_subcommand("sweep", "measure latency, bandwidth and message rate over a range of message sizes");
    cmd->add_option("peer", o->peer, "peer daemon HOST[:PORT] (the initiator measures the path to it)")->required();
    cmd->add_option("--initiator", o->initiator, "daemon that runs the measurement, HOST[:PORT]")->capture_default_str();
    cmd->add_option("--transport", o->transport, "tcp or rdma")->capture_default_str();
    cmd->add_option("--test", o->tests, "comma list of latency, bandwidth, bidir")->capture_default_str();
    cmd->add_option("--sizes", o->sizes, "sizes: range 1..4M (powers of two), list 64,4K,1M; IEC suffixes")->capture_default_str();
    cmd->add_option("--streams", o->streams, "parallel TCP streams per direction (bandwidth, bidir)")->capture_default_str();
    cmd->add_flag("--reverse", o->reverse, "bandwidth from the peer to the initiator");
    cmd->add_option("--iterations", o->iterations, "fixed messages (or round trips) per point instead of adaptive length");
    cmd->add_option("--duration", o->duration, "fixed measured seconds per point instead of adaptive length");
    cmd->add_option("--precision", o->precision, "adaptive target: 95% CI half-width as a fraction (0.01 = 1%)")->capture_default_str();
    cmd->add_option("--max-time", o->max_time, "adaptive time cap per point, seconds (after warm-up)")->capture_default_str();
    cmd->add_option("--warmup", o->warmup, "warm-up seconds before every point (not counted)")->capture_default_str();
    cmd->add_flag("--verify", o->verify, "receiver checks a byte pattern; corruption fails the point");
    cmd->add_flag("--busy-poll", o->busy_poll, "latency: spin on receive instead of sleeping");
    cmd->add_option("--window", o->window, "socket buffer size, e.g. 4M");
    cmd->add_option("--cpu", o->cpus,
                    "pin the measuring threads: A,B = initiator on CPU A, peer on CPU B; A = both on A; a side may be "
                    "a range (0-3) its streams spread over. Default: each daemon picks its CPUs once per run");
    cmd->add_option("--op", o->op, "RDMA operation: write, read or send")->capture_default_str();
    cmd->add_option("--tx-depth", o->tx_depth, "RDMA send-queue window")->capture_default_str();
    cmd->add_option("--qps", o->qps, "RDMA queue pairs (same as --streams)");
    cmd->add_option("--device", o->device, "RDMA device name (default: the one owning the session address)");
    cmd->add_option("--port", o->port, "RDMA port number")->capture_default_str();
    cmd->add_option("--gid-index", o->gid_index, "RDMA GID index (default: RoCE v2 IPv4-mapped GID of the session address)");
    cmd->add_option("--memory", o->memory, "memory on both sides: host or cuda:N");
    cmd->add_option("--local-memory", o->local_memory, "initiator's memory: host or cuda:N");
    cmd->add_option("--remote-memory", o->remote_memory, "peer's memory: host or cuda:N");
    cmd->add_option("--format", o->format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
    cmd->add_option("-o,--output", o->output, "write the result to FILE instead of stdout");
    cmd->add_option("--svg", o->svg, "also draw latency and bandwidth against size, with the fitted model, to FILE.svg");
    cmd->add_flag("-q,--quiet", o->quiet, "no progress display");
    return [cmd, o, &common]() -> int {
        (void)cmd;
        core::run_spec spec;
        try {
            spec = build_spec(*o);
        } catch (const core::spec_error& e) {
            throw client_error(exit_usage, e.what());
        }
        daemon_client daemon(o->initiator, client_credentials(common.token_file, common.tls));
        const bool tty = ::isatty(STDERR_FILENO) && !o->quiet;
        const auto result_doc = daemon.run_streaming(core::to_json(spec), [&](const json& ev) {
            if (!tty) return;
            const auto kind = ev.value("event", "");
            if (kind == "queued")
                std::fprintf(stderr, "\r\033[Kqueued at position %d%s", ev.value("position", 0),
                             ev.value("running", "").empty() ? "" : (" (measuring: " + ev.value("running", "") + ")").c_str());
            else if (kind == "waiting")
                std::fprintf(stderr, "\r\033[Kwaiting: %s", ev.value("reason", "").c_str());
            else if (kind == "started")
                std::fprintf(stderr, "\r\033[Kmeasuring %s -> %s\n", daemon.address().to_string().c_str(), spec.peer.c_str());
            else if (kind == "point") {
                const auto p = core::point_result_from_json(ev["point"]);
                std::fprintf(stderr, "%s\n", point_progress_line(p, ev.value("index", 0), ev.value("total", 0)).c_str());
            }
        });
        core::run_result run;
        try {
            run = core::run_result_from_json(result_doc);
        } catch (const std::exception& e) {
            throw client_error(exit_unreachable, fmt::format("the daemon returned a result this meshperf cannot read: {}", e.what()));
        }
        write_output(o->output, render(o->format, run, result_doc));
        if (!o->svg.empty() && !run.points.empty()) write_output(o->svg, render_sweep_svg(run));
        if (run.state != "completed") {
            std::fprintf(stderr, "meshperf: run %s %s: %s\n", run.id.c_str(), run.state.c_str(), run.error.c_str());
            return exit_run_failed;
        }
        return exit_ok;
    };
}

}  // namespace meshperf::client
