#include "client/commands/commands.hpp"
#include "core/transport_rules.hpp"
#include "core/json_text.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/output_format.hpp"
#include "client/support/progress.hpp"
#include "client/support/progress_printer.hpp"
#include "client/support/rail_lookup.hpp"
#include "client/render/run_output.hpp"
#include "client/render/table.hpp"
#include "client/render/svg_plot.hpp"
#include "core/error.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"
#include "core/sizes.hpp"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <memory>
#include <optional>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// sweep's command line as given.
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
    std::string ofi_provider, ofi_op = "tagged";
    std::uint32_t tx_depth = 128;
    std::uint32_t qps = 0;
    std::string device;
    std::uint32_t port = 1;
    int gid_index = -1;
    std::string memory, local_memory, remote_memory;
    output_format format = output_format::table;
    std::string output;
    std::string svg;
    bool quiet = false;     ///< -q, --no-progress
    bool progress = false;  ///< --progress: also when stderr is not a terminal
    rail_options rails;     ///< --rails, --rail-map, --rails-serial
};

/// Registers sweep's options on `cmd`, parsed into `o` (which must outlive the parse).
void add_sweep_options(CLI::App& cmd, sweep_options& o) {
    cmd.add_option("peer", o.peer, "peer daemon HOST[:PORT] (the initiator measures the path to it)")->required();
    cmd.add_option("--initiator", o.initiator, "daemon that runs the measurement, HOST[:PORT]")->capture_default_str();
    cmd.add_option("--transport", o.transport, "tcp, rdma or ofi (libfabric)")->capture_default_str();
    cmd.add_option("--test", o.tests, "comma list of latency, bandwidth, bidir")->capture_default_str();
    cmd.add_option("--sizes", o.sizes, "sizes: range 1..4M (powers of two), list 64,4K,1M; IEC suffixes")->capture_default_str();
    cmd.add_option("--streams", o.streams, "parallel TCP streams per direction (bandwidth, bidir)")->capture_default_str();
    cmd.add_flag("--reverse", o.reverse, "bandwidth from the peer to the initiator");
    cmd.add_option("--iterations", o.iterations, "fixed messages (or round trips) per point instead of adaptive length");
    cmd.add_option("--duration", o.duration, "fixed measured seconds per point instead of adaptive length");
    cmd.add_option("--precision", o.precision, "adaptive target: 95% CI half-width as a fraction (0.01 = 1%)")->capture_default_str();
    cmd.add_option("--max-time", o.max_time, "adaptive time cap per point, seconds (after warm-up)")->capture_default_str();
    cmd.add_option("--warmup", o.warmup, "warm-up seconds before every point (not counted)")->capture_default_str();
    cmd.add_flag("--verify", o.verify, "receiver checks a byte pattern; corruption fails the point");
    cmd.add_flag("--busy-poll", o.busy_poll, "latency: spin on receive instead of sleeping");
    cmd.add_option("--window", o.window, "socket buffer size, e.g. 4M");
    cmd.add_option("--cpu", o.cpus,
                    "pin the measuring threads: A,B = initiator on CPU A, peer on CPU B; A = both on A; a side may be "
                    "a range (0-3) its streams spread over. Default: each daemon picks its CPUs once per run");
    cmd.add_option("--op", o.op, "RDMA operation: write, read or send")->capture_default_str();
    cmd.add_option("--tx-depth", o.tx_depth, "RDMA send-queue window (ofi: sends in flight per endpoint)")->capture_default_str();
    cmd.add_option("--ofi-provider", o.ofi_provider,
                   "libfabric provider (ofi): efa, cxi, verbs, tcp, shm, ... (default: the best of efa, cxi, verbs, tcp both "
                   "daemons have)");
    cmd.add_option("--ofi-op", o.ofi_op, "libfabric operation (ofi): tagged or msg")->capture_default_str();
    cmd.add_option("--qps", o.qps, "RDMA queue pairs (same as --streams)");
    cmd.add_option("--device", o.device, "RDMA device name (default: the one owning the session address)");
    cmd.add_option("--port", o.port, "RDMA port number")->capture_default_str();
    cmd.add_option("--gid-index", o.gid_index, "RDMA GID index (default: RoCE v2 IPv4-mapped GID of the session address)");
    cmd.add_option("--memory", o.memory, "memory on both sides: host, cuda:N, or with --rails cuda:auto (each rail's nearest GPU)");
    cmd.add_option("--local-memory", o.local_memory, "initiator's memory: host, cuda:N or cuda:auto");
    cmd.add_option("--remote-memory", o.remote_memory, "peer's memory: host, cuda:N or cuda:auto");
    add_format_option(cmd, o.format, {output_format::table, output_format::json, output_format::csv});
    add_rail_options(cmd, o.rails);
    cmd.add_option("-o,--output", o.output, "write the result to FILE instead of stdout");
    cmd.add_option("--svg", o.svg, "also draw latency and bandwidth against size, with the fitted model, to FILE.svg");
    auto* progress = cmd.add_flag("--progress", o.progress,
                                   "progress on stderr even when it is not a terminal: one line per point with the time left, for logs");
    cmd.add_flag("-q,--quiet,--no-progress", o.quiet, "no progress display (the default when stderr is not a terminal)")
        ->excludes(progress);
}

/// Builds and validates the spec here, so bad options fail before anything is sent. An
/// option is taken when it was given (`cmd.count`), never by its value: `--duration 0` or
/// `--iterations 0` must be refused by validate(), not read as "not given".
/// `size_note` receives what sorting did to --sizes (size_order_note), or "".
core::run_spec build_spec(const sweep_options& o, const CLI::App& cmd, std::string& size_note) {
    const auto given = [&](const char* name) { return cmd.count(name) > 0; };
    core::run_spec s;
    s.peer = o.peer;
    s.transport = std::string(core::transport_rules_of(o.transport).name);
    s.tests = core::parse_test_list(o.tests);
    const auto sizes = core::parse_size_list_as_written(o.sizes);
    s.sizes = sizes.sizes;
    size_note = core::size_order_note("--sizes", o.sizes, sizes);
    if (given("--qps") && given("--streams") && o.qps != o.streams)
        throw core::spec_error(fmt::format("--qps {} and --streams {} disagree: they are the same setting, give one", o.qps, o.streams));
    s.streams = given("--qps") ? o.qps : o.streams;
    s.reverse = o.reverse;
    if (given("--iterations")) s.iterations = o.iterations;
    if (given("--duration")) s.duration_s = o.duration;
    s.precision = o.precision;
    s.max_point_s = o.max_time;
    s.warmup_s = o.warmup;
    s.verify = o.verify;
    s.busy_poll = o.busy_poll;
    if (given("--window")) s.window_bytes = core::parse_size(o.window);
    if (given("--cpu")) {
        const auto pins = core::parse_cpu_option(o.cpus);
        s.initiator_cpus = pins.initiator;
        s.peer_cpus = pins.peer;
    }
    s.op = core::parse_rdma_op(o.op);
    s.tx_depth = o.tx_depth;
    if (given("--ofi-provider")) s.ofi_provider = o.ofi_provider;
    if (given("--ofi-op")) s.ofi_op = core::parse_ofi_op(o.ofi_op);
    s.rdma_device = o.device;
    s.rdma_port = o.port;
    if (given("--gid-index")) s.gid_index = o.gid_index;
    s.local_memory = given("--local-memory") ? o.local_memory : (given("--memory") ? o.memory : "host");
    s.remote_memory = given("--remote-memory") ? o.remote_memory : (given("--memory") ? o.memory : "host");
    // The peer is named as the initiator will reach it; default its port like everywhere else.
    s.peer = transport::parse_endpoint(o.peer).to_string();
    // cuda:auto becomes each rail's GPU once the rails are matched (with_rails checks it
    // then); until then the rest is checked with a GPU in its place. Without --rails,
    // validate says it needs them.
    auto checked = s;
    if (o.rails.given)
        for (auto* m : {&checked.local_memory, &checked.remote_memory})
            if (*m == core::nearest_gpu_memory) *m = "cuda:0";
    core::validate(checked);
    return s;
}

/// build_spec, with a bad option as a usage error (exit 2) and the note on --sizes on stderr.
core::run_spec spec_or_usage(const sweep_options& o, const CLI::App& cmd) {
    core::run_spec spec;
    std::string size_note;
    try {
        spec = build_spec(o, cmd, size_note);
    } catch (const core::spec_error& e) {
        throw client_error(exit_usage, e.what());
    }
    if (!size_note.empty()) std::fprintf(stderr, "%s\n", size_note.c_str());
    return spec;
}

/// "at most 3.2 s", "at most about 4 min": the sweep's time bound as the start line says it.
std::string all_duration(double seconds) {
    if (seconds < 90) return fmt::format("at most {:.1f} s", seconds);
    return "at most " + about_duration(seconds);
}

/// The progress display of a sweep on stderr (client/support/progress_printer.hpp), fed with the
/// events of a streamed run.
class sweep_progress {
public:
    /// `initiator` is the measuring daemon's address, as the "measuring" line names it.
    sweep_progress(const sweep_options& o, const core::run_spec& spec, std::string initiator)
        : spec_(spec), initiator_(std::move(initiator)), out_(o.progress, o.quiet), bound_(point_time_bound_s(spec)) {}

    /// Shows one event of the run (queued, waiting, started, point); ignores the others.
    void on_event(const json& ev) {
        out_.on_event(ev, [this] { on_started(); }, [this](const json& point) { on_point(point); });
    }

    /// Ends a status line that still waits for its newline.
    void finish() { out_.finish(); }

private:
    void on_started() {
        started_ = std::chrono::steady_clock::now();
        const auto total = spec_.tests.size() * spec_.sizes.size();
        const auto refs = reference_point_count(spec_);
        const auto all = sweep_time_bound_s(spec_);
        const auto at_most = bound_ && all ? fmt::format(", up to about {} s each, {} in all", fmt::format("{:.2f}", *bound_),
                                                         all_duration(*all))
                                           : std::string();
        out_.line(fmt::format("measuring {} -> {}: {} point{}{}{}", initiator_, spec_.peer, total, total == 1 ? "" : "s",
                              refs ? fmt::format(" and {} reference reading{}", refs, refs == 1 ? "" : "s") : std::string(),
                              at_most));
    }
    void on_point(const json& ev) {
        if (!started_) started_ = std::chrono::steady_clock::now();
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - *started_).count();
        const auto p = core::point_result_from_json(ev["point"]);
        const auto index = ev.value("index", std::size_t{0}), total = ev.value("total", std::size_t{0});
        out_.line(progress_line(point_progress_line(p, index, total), index, total, elapsed, bound_));
    }

    const core::run_spec& spec_;
    std::string initiator_;
    progress_printer out_;
    std::optional<double> bound_;
    std::optional<std::chrono::steady_clock::time_point> started_;
};

/// The run of the daemon's result document; one this meshperf cannot read is exit_unreachable.
core::run_result read_run(const json& doc) {
    try {
        return core::run_result_from_json(doc);
    } catch (const std::exception& e) {
        throw client_error(exit_unreachable, fmt::format("the daemon returned a result this meshperf cannot read: {}", e.what()));
    }
}

/// A run whose stream was lost (the initiator froze or went away): the points that arrived,
/// printed and saved as the run would have been, marked failed with the reason, so what
/// was measured is not lost with the daemon. Returns whether it saved any; never throws
/// (a failure to save is said on stderr): the reason the stream was lost is reported anyway.
bool save_lost_run(const sweep_options& o, const core::run_spec& spec, const daemon_client& daemon, const stream_lost& e) {
    if (e.points().empty()) return false;
    try {
        core::run_result run;
        run.id = e.run_id();
        run.state = core::run_state::failed;
        run.spec = spec;
        run.initiator.address = daemon.address().to_string();
        run.peer.address = spec.peer;
        run.error = e.what();
        for (const auto& p : e.points()) run.points.push_back(core::point_result_from_json(p));
        const auto doc = core::to_json(run);
        write_output(o.output, render_run(o.format, run, doc));
        if (!o.svg.empty()) write_output(o.svg, render_sweep_svg(run, measured_panels(std::span(&run, 1))));
        return true;
    } catch (const std::exception& x) {
        std::fprintf(stderr, "meshperf: the %zu points measured could not be saved: %s\n", e.points().size(), x.what());
        return false;
    }
}


/// One run of the sweep: streamed with its progress, read back. A lost stream saves what
/// was measured and becomes client_error.
struct measured_run {
    core::run_result run;
    json doc;
};

measured_run run_sweep(const sweep_options& o, const core::run_spec& spec, const daemon_client& daemon) {
    sweep_progress progress(o, spec, daemon.address().to_string());
    json result_doc;
    try {
        result_doc = daemon.run_streaming(core::to_json(spec), [&](const json& ev) { progress.on_event(ev); });
    } catch (const stream_lost& e) {
        progress.finish();
        if (!save_lost_run(o, spec, daemon, e)) throw;
        throw client_error(e.code(), fmt::format("{}; measured points kept ({})", e.what(),
                                                 o.output.empty() || o.output == "-" ? "printed above" : "in " + o.output));
    }
    progress.finish();
    return {read_run(result_doc), std::move(result_doc)};
}

/// The runs of --rails-serial, one per rail, as one output: the tables one after the other,
/// a JSON array of the result documents, or the CSV rows under one header.
std::string render_serial(output_format format, const std::vector<measured_run>& runs) {
    std::string table, csv = core::csv_header() + "\n";
    json docs = json::array();
    for (const auto& m : runs) {
        table += fmt::format("{}rail {} ({} -> {})\n", table.empty() ? "" : "\n", m.run.spec.rails.at(0).name,
                             m.run.spec.rails.at(0).local_address, m.run.spec.rails.at(0).peer_address);
        table += render_run(output_format::table, m.run, m.doc);
        for (const auto& p : m.run.points) csv += core::to_csv_row(m.run, p) + "\n";
        docs.push_back(json::parse(render_run(output_format::json, m.run, m.doc)));
    }
    return render(format, {.table = [&] { return table; }, .json = [&] { return core::json_text(docs, 2) + "\n"; }, .csv = [&] { return csv; }});
}

/// Exit code of a finished run: 0, or 1 when it failed or its daemon could not store it.
int run_exit_code(const measured_run& m, const daemon_client& daemon) {
    if (m.run.state != core::run_state::completed) {
        std::fprintf(stderr, "meshperf: run %s %s: %s\n", m.run.id.c_str(), std::string(m.run.state.text()).c_str(), m.run.error.c_str());
        return exit_run_failed;
    }
    // The daemon measured it but could not keep it (full disk): the result above is the
    // only copy until the daemon's retry succeeds.
    if (report_not_stored(m.doc, "run " + m.run.id, daemon.address().to_string())) return exit_run_failed;
    return exit_ok;
}

/// Adds the matched rails to the spec and checks it again (latency over concurrent rails,
/// streams × rails against the limit): a usage error, exit 2.
core::run_spec with_rails(core::run_spec spec, std::vector<core::rail_pair> rails) {
    spec.rails = std::move(rails);
    try {
        core::validate(spec);
    } catch (const core::spec_error& e) {
        throw client_error(exit_usage, e.what());
    }
    return spec;
}

}  // namespace

command_runner add_sweep_command(CLI::App& app, const common_options& common) {
    auto o = std::make_shared<sweep_options>();
    auto* cmd = app.add_subcommand("sweep", "measure latency, bandwidth and message rate over a range of message sizes");
    add_sweep_options(*cmd, *o);
    return [cmd, o, &common]() -> int {
        finish_rail_options(*cmd, o->rails);
        auto spec = spec_or_usage(*o, *cmd);
        if (o->rails.given && !o->device.empty())
            throw client_error(exit_usage, "--rails and --device both choose the path: give --rails (every rail's device is its "
                                           "own) or --device, not both");
        const auto creds = client_credentials(common.token_file, common.tls);
        daemon_client daemon(o->initiator, creds);
        if (o->rails.given) {
            auto rails = look_up_rails(daemon, spec.peer, creds, o->rails,
                                       {spec.local_memory == core::nearest_gpu_memory, spec.remote_memory == core::nearest_gpu_memory});
            if (o->rails.serial) {
                std::vector<core::run_spec> specs;  // all checked before the first run
                for (auto& r : rails) specs.push_back(with_rails(spec, {r}));
                std::vector<measured_run> runs;
                int code = exit_ok;
                for (const auto& s : specs) {
                    runs.push_back(run_sweep(*o, s, daemon));
                    code = std::max(code, run_exit_code(runs.back(), daemon));
                }
                write_output(o->output, render_serial(o->format, runs));
                return code;
            }
            spec = with_rails(spec, std::move(rails));
        }
        const auto m = run_sweep(*o, spec, daemon);
        write_output(o->output, render_run(o->format, m.run, m.doc));
        if (!o->svg.empty() && !m.run.points.empty())
            write_output(o->svg, render_sweep_svg(m.run, measured_panels(std::span(&m.run, 1))));
        return run_exit_code(m, daemon);
    };
}

}  // namespace meshperf::client
