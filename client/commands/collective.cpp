// meshperf collective: one collective run over N daemons, submitted to the
// coordinator, followed on stderr, rendered with client/render/collective, and, with
// --predict, set against the α–β model of the ring's links (client/collective/predict).
#include "client/collective/links.hpp"
#include "core/json_text.hpp"
#include "client/render/collective.hpp"
#include "client/collective/run.hpp"
#include "client/collective/spec_options.hpp"
#include "client/commands/commands.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/output_format.hpp"
#include "client/support/progress.hpp"
#include "client/support/progress_printer.hpp"
#include "client/render/svg_collective.hpp"
#include "core/sizes.hpp"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// collective's command line as given.
struct collective_cli {
    collective_options spec;
    output_format format = output_format::table;
    std::string output;
    std::string svg;
    bool quiet = false, progress = false;
};

/// Registers collective's options on `cmd`, parsed into `o` (which must outlive the parse).
void add_collective_options(CLI::App& cmd, collective_cli& o) {
    auto& s = o.spec;
    cmd.add_option("--hosts", s.hosts, "the daemons, one per rank: a file (one HOST[:PORT] per line, # comments) or a comma "
                                       "list")
        ->required();
    cmd.add_option("--op", s.ops, "comma list of allreduce, allgather, reduce-scatter, alltoall, broadcast, incast")
        ->capture_default_str();
    cmd.add_option("--algo", s.algo, "ring, tree or direct for every op (default: ring where it runs, else direct)");
    cmd.add_option("--sizes", s.sizes, "sizes S as nccl-tests counts them: range 1K..1G (powers of two, rounded to what the "
                                       "ops can cut), list 64K,1M; IEC suffixes")
        ->capture_default_str();
    cmd.add_option("--transport", s.transport, "tcp or rdma")->capture_default_str();
    cmd.add_option("--rdma-device", s.rdma_device, "RDMA device on every rank (default: the one that holds the daemon's address)");
    cmd.add_option("--port", s.rdma_port, "RDMA port number on every rank")->capture_default_str();
    cmd.add_option("--gid-index", s.gid_index, "RDMA GID index on every rank (default: the RoCE v2 GID of the daemon's address)");
    cmd.add_option("--memory", s.memory, "every rank's buffers: host or cuda:N")->capture_default_str();
    cmd.add_option("--dtype", s.dtype, "element type: float32 (fp32), bfloat16 (bf16) or float16 (fp16)")->capture_default_str();
    cmd.add_flag("--verify", s.verify, "every rank checks its result and counts wrong elements (#wrong)");
    cmd.add_option("--iterations", s.iterations, "measured iterations per size (nccl-tests -n)")->capture_default_str();
    cmd.add_option("--duration", s.duration, "measured seconds per size instead of a count of iterations");
    cmd.add_option("--warmup", s.warmup, "warm-up iterations before every size (nccl-tests -w)")->capture_default_str();
    cmd.add_option("--coordinator", s.coordinator, "the host that takes the run and runs the barrier (default: the first)");
    cmd.add_flag("--predict", s.predict, "the α–β prediction and its error next to each size (links probed first, or --model)");
    cmd.add_option("--model", s.model, "with --predict: the link fits of a matrix (meshperf matrix --format json), a model "
                                       "(meshperf model --format json) or a sweep result, instead of probing the ring");
    add_format_option(cmd, o.format, {output_format::table, output_format::json, output_format::csv});
    cmd.add_option("-o,--output", o.output, "also write the JSON result document to FILE (meshperf show FILE reads it back)");
    cmd.add_option("--svg", o.svg, "also draw time and busbw per op against size (predictions dashed) to FILE.svg");
    auto* progress = cmd.add_flag("--progress", o.progress, "progress on stderr even when it is not a terminal, for logs");
    cmd.add_flag("-q,--quiet,--no-progress", o.quiet, "no progress display (the default when stderr is not a terminal)")
        ->excludes(progress);
}

/// The progress of a collective on stderr: queue states, the start, one line per point.
class collective_progress {
public:
    collective_progress(const collective_cli& o, const core::collective_spec& spec)
        : spec_(spec), out_(o.progress, o.quiet) {}

    void on_event(const json& ev) {
        // Ctrl-C stops this client, not the run (as for sweep): say how to cancel it.
        if (!announced_ && ev.contains("run_id") && ev["run_id"].is_string()) {
            announced_ = true;
            out_.line(fmt::format("collective {} on {} (meshperf cancel {} {} stops it)", ev["run_id"].get<std::string>(),
                                  core::coordinator_of(spec_), core::coordinator_of(spec_), ev["run_id"].get<std::string>()));
        }
        out_.on_event(ev, [this] { on_started(); }, [this](const json& point) { on_point(point); });
    }
    void line(const std::string& text) { out_.line(text); }
    void finish() { out_.finish(); }

private:
    void on_started() {
        started_ = std::chrono::steady_clock::now();
        std::vector<std::string_view> ops;
        for (auto op : spec_.ops) ops.push_back(core::to_string(op));
        const auto total = spec_.ops.size() * spec_.sizes.size();
        out_.line(fmt::format("measuring {} over {} ranks ({}, coordinator {}): {} point{}", fmt::join(ops, ", "),
                              spec_.hosts.size(), spec_.transport, core::coordinator_of(spec_), total,
                              total == 1 ? "" : "s"));
    }
    void on_point(const json& ev) {
        if (!started_) started_ = std::chrono::steady_clock::now();
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - *started_).count();
        const auto index = ev.value("index", std::size_t{0}), total = ev.value("total", std::size_t{0});
        std::string text;
        try {
            text = collective_progress_line(core::collective_point_from_json(ev.at("point")), index, total);
        } catch (const std::exception& e) {
            text = fmt::format("[{:>3}/{}] (a point this meshperf cannot read: {})", index, total, e.what());
        }
        if (const auto left = estimate_seconds_left(index, total, elapsed, std::nullopt); left && index < total)
            text += fmt::format("  {} left", about_duration(*left));
        out_.line(text);
    }

    const core::collective_spec& spec_;
    progress_printer out_;
    std::optional<std::chrono::steady_clock::time_point> started_;
    bool announced_ = false;
};

/// The link fits of --predict: --model's file, or probes of the ring (before the run, so they
/// do not share the links with it).
prediction_links prediction_links_for(const core::collective_spec& spec, const credentials& creds, collective_progress& progress) {
    if (spec.model_file) return links_from_file(*spec.model_file, spec);
    progress.line(fmt::format("probing the {} ring links for --predict (a few seconds each)", spec.hosts.size()));
    return probe_ring(spec, creds, [&](const std::string& text) { progress.line(text); });
}

}  // namespace

command_runner add_collective_command(CLI::App& app, const common_options& common) {
    auto o = std::make_shared<collective_cli>();
    auto* cmd = app.add_subcommand("collective", "measure collectives (all-reduce, all-gather, ...) over N daemons, as "
                                                 "nccl-tests reports them: time, algbw, busbw, #wrong");
    add_collective_options(*cmd, *o);
    return [cmd, o, &common]() -> int {
        const auto built = build_collective_spec(o->spec, [cmd](std::string_view name) { return cmd->count(std::string(name)) > 0; });
        for (const auto& note : built.notes) std::fprintf(stderr, "%s\n", note.c_str());
        const auto& spec = built.spec;
        const auto creds = client_credentials(common.token_file, common.tls);
        collective_progress progress(*o, spec);
        std::optional<prediction_links> links;
        if (spec.predict) links = prediction_links_for(spec, creds, progress);
        auto out = run_collective(spec, creds, [&](const json& ev) { progress.on_event(ev); });
        progress.finish();
        run_predictions preds;
        if (links) {
            preds = predict_run(out.run, *links);
            out.doc = with_predictions(std::move(out.doc), preds);
        }
        if (!o->output.empty()) write_output(o->output, core::json_text(out.doc, 2) + "\n");
        if (!o->svg.empty() && !out.run.points.empty())
            write_output(o->svg, render_collective_svg(out.run, predicted_times(preds)));
        write_output("", render_collective(o->format, out.run, out.doc, preds));
        if (out.run.state != core::run_state::completed)
            std::fprintf(stderr, "meshperf: collective %s %s: %s\n", out.run.id.c_str(), std::string(out.run.state.text()).c_str(),
                         out.run.error.empty() ? "(no error given)" : out.run.error.c_str());
        if (out.run.state == core::run_state::completed && report_not_stored(out.doc, "collective " + out.run.id, std::string(core::coordinator_of(spec))))
            return exit_run_failed;
        return collective_exit_code(out.run);
    };
}

}  // namespace meshperf::client
