// meshperf plan: collective and data-parallel step times from a measured (or given) link.
// The arithmetic is core/collectives.*; this file reads plan's options and inputs (the link
// from --from, --matrix or --alpha-us/--beta-gbit), runs the model and renders the answer,
// in that order.
#include "client/commands/commands.hpp"
#include "core/json_text.hpp"
#include "core/figure_text.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/output_format.hpp"
#include "client/render/table.hpp"
#include "client/support/result_files.hpp"
#include "client/support/run_model.hpp"
#include "analysis/collective/predictions.hpp"
#include "core/error.hpp"
#include "analysis/model_warnings.hpp"
#include "core/sizes.hpp"
#include "core/units.hpp"

#include <charconv>
#include <cstdio>
#include <cmath>
#include <fmt/format.h>
#include <memory>
#include <variant>

namespace meshperf::client {

using nlohmann::json;

namespace {

// ---- options

/// plan's command line as given. Whether an option was given is asked of the command
/// (given()), never read from its value: `--nodes 0` is refused, not taken as "not given".
struct plan_options {
    std::string from, matrix;
    double alpha_us = 0, beta_gbit = 0;
    unsigned nodes = 0, gpus_per_node = 1, nics_per_node = 0;
    double intra_alpha_us = 0, intra_beta_gbit = 0;
    std::string bytes, params, dtype = "bf16", bucket = "25M";
    double compute_ms = 0;
    output_format format = output_format::table;
    std::string output;
    const CLI::App* cmd = nullptr;  ///< the subcommand these were parsed by

    /// True when option `name` ("--from") was on the command line.
    bool given(const char* name) const { return cmd->count(name) > 0; }
};

/// Registers plan's options on `cmd`, parsed into `o` (which must outlive the parse).
void add_plan_options(CLI::App& cmd, plan_options& o) {
    o.cmd = &cmd;
    cmd.add_option("--from", o.from, "RESULT.json: fit the model of this sweep (meshperf sweep --format json)");
    cmd.add_option("--matrix", o.matrix, "MATRIX.json: the slowest link of this matrix (meshperf matrix --format json)");
    cmd.add_option("--alpha-us", o.alpha_us, "link latency α, µs (with --beta-gbit)");
    cmd.add_option("--beta-gbit", o.beta_gbit, "link bandwidth β, Gbit/s (with --alpha-us)");
    cmd.add_option("--nodes", o.nodes, "p, nodes joined by the link (default with --matrix: its hosts)");
    cmd.add_option("--gpus-per-node", o.gpus_per_node, "G, ranks per node")->capture_default_str();
    cmd.add_option("--nics-per-node", o.nics_per_node, "NICs per node carrying the link (default: one per GPU)");
    cmd.add_option("--intra-alpha-us", o.intra_alpha_us, "intra-node link (NVLink) α, µs (default: intra-node is free)");
    cmd.add_option("--intra-beta-gbit", o.intra_beta_gbit, "intra-node link β, Gbit/s");
    cmd.add_option("--bytes", o.bytes, "S, bytes per collective as nccl-tests' size (25M, 1G, 1.5T: IEC, 1G = 2^30)");
    cmd.add_option("--params", o.params, "N, parameters of a data-parallel model (70e9, 7B, 350M)");
    cmd.add_option("--dtype", o.dtype, "gradient type: bf16, fp16 or fp32")->capture_default_str();
    cmd.add_option("--bucket", o.bucket, "gradient bucket size (IEC; DDP default 25M)")->capture_default_str();
    cmd.add_option("--step-compute-ms", o.compute_ms, "forward + backward time of one step, ms: scaling efficiency");
    add_format_option(cmd, o.format, {output_format::table, output_format::json, output_format::csv});
    cmd.add_option("-o,--output", o.output, "write to FILE instead of stdout");
}

// ---- inputs

/// A usage error of plan (exit 2).
client_error plan_usage(const std::string& message) { return client_error(exit_usage, message); }

/// The largest --bytes or --bucket: 2^60 bytes (1 EiB).
constexpr std::uint64_t max_plan_bytes = std::uint64_t{1} << 60;

/// A byte amount (--bytes, --bucket): core/sizes, the one parser of sizes.
std::uint64_t parse_plan_bytes(const std::string& text, const char* what) {
    try {
        return core::parse_byte_count(text, max_plan_bytes);
    } catch (const core::spec_error& e) {
        throw core::spec_error(fmt::format("{}: {}", what, e.what()));
    }
}

/// A count with an optional decimal multiplier (K, M, B or G, T = 10^3..): "70e9", "7B", "350M".
double parse_count(const std::string& text, const char* what) {
    const auto usage = [&] {
        return core::spec_error(fmt::format("{} \"{}\": expected a positive number with an optional suffix (K, M, B or G, T = 10^3..)",
                                            what, text));
    };
    double v = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc() || p == text.data()) throw usage();
    std::string suffix(p, end);
    for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    double mult = 1;
    if (suffix.empty()) mult = 1;
    else if (suffix == "K") mult = 1e3;
    else if (suffix == "M") mult = 1e6;
    else if (suffix == "G" || suffix == "B") mult = 1e9;
    else if (suffix == "T") mult = 1e12;
    else throw usage();
    v *= mult;
    if (!std::isfinite(v) || v < 1 || v > 1e18) throw usage();
    return v;
}

/// A time in µs, ms or s, for the table.
std::string fmt_time(double s) {
    if (s < 1e-3) return fmt::format("{} µs", core::plain_number(s * 1e6, 3));
    if (s < 1) return fmt::format("{} ms", core::plain_number(s * 1e3, 4));
    return fmt::format("{} s", core::plain_number(s, 4));
}
/// Gbit/s with three significant digits (whole numbers from 100).
std::string fmt_gbit(double g) { return g >= 100 ? fmt::format("{:.0f}", g) : fmt::format("{}", core::plain_number(g, 3)); }

/// Where the inter-node link came from.
struct link_source {
    std::variant<analysis::link_model, analysis::model_fit> link;
    json info;          ///< for JSON: source, figures, file
    std::string text;   ///< for the table: one or more lines
};

/// From a matrix: the link whose per-step time of a ring (α + m/β at the ring's step
/// message m) is largest bounds every ring that crosses it.
link_source from_matrix(const report_matrix& m, std::uint64_t bytes, const analysis::topology& topo) {
    struct cand { const analysis::link_verdict* v; analysis::link_model l; double step_s; };
    std::vector<cand> c;
    const double msg = analysis::step_message_bytes(core::collective_op::allreduce, core::model_algo::ring, bytes, topo);
    std::size_t skipped = 0;
    for (const auto& v : m.analysis.links) {
        if (!v.link.reachable || !v.link.gbit_per_s || !v.link.lat_us || *v.link.gbit_per_s <= 0) { ++skipped; continue; }
        const auto l = analysis::link_model::from_us_gbit(*v.link.lat_us, *v.link.gbit_per_s);
        c.push_back({&v, l, l.alpha_s + msg / l.beta_bytes_per_s});
    }
    if (c.empty())
        throw core::spec_error("the matrix has no link with both a bandwidth and a latency figure; measure it with "
                               "meshperf matrix --test latency,bandwidth");
    const auto worst = std::max_element(c.begin(), c.end(), [](const cand& a, const cand& b) { return a.step_s < b.step_s; });
    std::vector<double> steps;
    for (const auto& x : c) steps.push_back(x.step_s);
    std::nth_element(steps.begin(), steps.begin() + steps.size() / 2, steps.end());
    const double median_step = steps[steps.size() / 2];
    const auto name = [&](std::size_t h) { return h < m.hosts.size() ? m.hosts[h] : std::to_string(h); };
    link_source s;
    s.link = worst->l;
    const auto& v = *worst->v;
    s.info = {{"source", "matrix"},
              {"bounding_link", {{"from", name(v.link.from)}, {"to", name(v.link.to)}, {"bad", v.bad}, {"reason", v.reason}}},
              {"alpha_us", *v.link.lat_us},
              {"beta_gbit_per_s", *v.link.gbit_per_s},
              {"ring_step_message_bytes", msg},
              {"ring_step_s", worst->step_s},
              {"median_ring_step_s", median_step},
              {"links_used", c.size()},
              {"links_skipped", skipped}};
    s.text = fmt::format("link: from the matrix, the slowest of {} links bounds a ring{}:\n"
                         "  {} -> {}: α {} µs (one-way p50), β {} Gbit/s; a ring step of {} takes {} there, {} on the "
                         "median link ({:.2f}×){}\n",
                         c.size(), skipped ? fmt::format(" ({} without both figures left out)", skipped) : "", name(v.link.from),
                         name(v.link.to), core::plain_number(*v.link.lat_us, 3), fmt_gbit(*v.link.gbit_per_s),
                         core::format_size(static_cast<std::uint64_t>(msg)), fmt_time(worst->step_s), fmt_time(median_step),
                         worst->step_s / median_step, v.bad ? "\n  (a bad link: " + v.reason + ")" : "");
    return s;
}

/// Refuses options that contradict or miss each other, before any file is read.
void check_plan_options(const plan_options& o) {
    const bool alpha = o.given("--alpha-us"), beta = o.given("--beta-gbit");
    const int sources = o.given("--from") + o.given("--matrix") + (alpha || beta);
    if (sources != 1) throw plan_usage("plan needs exactly one link: --from RESULT.json, --matrix MATRIX.json, or --alpha-us and --beta-gbit");
    if (alpha != beta) throw plan_usage("--alpha-us and --beta-gbit go together");
    if (o.given("--bytes") == o.given("--params")) throw plan_usage("plan needs exactly one of --bytes S or --params N");
    const bool compute = o.given("--step-compute-ms");
    if (compute && !o.given("--params")) throw plan_usage("--step-compute-ms needs --params (it plans a data-parallel step)");
    if (o.given("--intra-alpha-us") != o.given("--intra-beta-gbit")) throw plan_usage("--intra-alpha-us and --intra-beta-gbit go together");
    if (compute && !(o.compute_ms > 0 && std::isfinite(o.compute_ms))) throw plan_usage("--step-compute-ms must be positive");
}

/// The matrix of --matrix, when given.
std::optional<report_matrix> load_plan_matrix(const plan_options& o) {
    if (!o.given("--matrix")) return std::nullopt;
    auto f = load_result_file(o.matrix);
    if (f.is_run()) throw plan_usage(o.matrix + " is a run result; use --from for it");
    return f.matrix();
}

/// Nodes (--nodes, else the matrix's hosts), GPUs, NICs and the intra-node link; not yet
/// validated (read_plan_sizes does that).
analysis::topology plan_topology(const plan_options& o, const std::optional<report_matrix>& mat) {
    analysis::topology topo;
    const bool nodes = o.given("--nodes");
    topo.nodes = nodes ? o.nodes : (mat ? static_cast<unsigned>(mat->hosts.size()) : 0);
    if (!topo.nodes) throw plan_usage(nodes ? "--nodes must be at least 1" : "plan needs --nodes P");
    topo.gpus_per_node = o.gpus_per_node;
    // 0 means "one NIC per GPU" inside the model; given, it is a mistake, not that default.
    if (o.given("--nics-per-node") && o.nics_per_node == 0)
        throw plan_usage("--nics-per-node must be at least 1 (leave it out for one NIC per GPU)");
    topo.nics_per_node = o.nics_per_node;
    if (o.given("--intra-alpha-us")) topo.intra = analysis::link_model::from_us_gbit(o.intra_alpha_us, o.intra_beta_gbit);
    return topo;
}

/// What the model is run on: the topology, the message size and the link.
struct plan_inputs {
    analysis::topology topo;
    analysis::dp_step_spec step;  ///< params 0: no data-parallel step (--bytes)
    std::uint64_t size = 0;   ///< bytes per collective: --bytes, or one gradient bucket
    link_source link;
};

/// Validates `in.topo`, then reads --bytes, or --params with --dtype, --bucket and
/// --step-compute-ms, into `in.size` and `in.step`.
void read_plan_sizes(const plan_options& o, plan_inputs& in) {
    try {
        analysis::validate(in.topo);
        if (o.given("--bytes")) {
            in.size = parse_plan_bytes(o.bytes, "--bytes");
            return;
        }
        auto& step = in.step;
        step.params = static_cast<std::uint64_t>(std::llround(parse_count(o.params, "--params")));
        step.type = core::parse_dtype(o.dtype);
        step.bucket_bytes = parse_plan_bytes(o.bucket, "--bucket");
        if (o.given("--step-compute-ms")) step.compute_s = o.compute_ms * 1e-3;
        const auto grad = step.params * core::dtype_bytes(step.type);
        in.size = std::min(step.bucket_bytes, grad);  // the collectives table shows one bucket
    } catch (const core::spec_error& e) {
        throw plan_usage(e.what());
    }
}

/// --from: the fitted model of a run result.
link_source link_from_run(const plan_options& o) {
    auto f = load_result_file(o.from);
    if (!f.is_run()) throw plan_usage(o.from + " is a matrix; use --matrix for it");
    auto m = fit_run_model(f.run());
    if (!m.fit) throw plan_usage(fmt::format("cannot plan from {}: no model: {}", o.from, m.why_not));
    // A β above every measured bandwidth is not used silently: the measured one is, with a
    // warning (analysis::with_measured_beta, docs/capacity-planning.md).
    m.fit = analysis::with_measured_beta(*m.fit);
    link_source src;
    src.link = *m.fit;
    src.info = {{"source", "result"}, {"file", o.from}, {"run_id", f.run().id}, {"model", analysis::to_json(*m.fit)}};
    src.text = fmt::format("link: model of run {} ({}){}", f.run().id, o.from, render_model_text(m));
    return src;
}

/// --alpha-us and --beta-gbit: a link as given.
link_source given_link(const plan_options& o) {
    if (!(o.alpha_us >= 0 && std::isfinite(o.alpha_us)) || !(o.beta_gbit > 0 && std::isfinite(o.beta_gbit)))
        throw plan_usage("--alpha-us must be >= 0 and --beta-gbit > 0");
    const auto l = analysis::link_model::from_us_gbit(o.alpha_us, o.beta_gbit);
    link_source src;
    src.link = l;
    src.info = analysis::to_json(l);
    src.info["source"] = "given";
    src.text = fmt::format("link: α {} µs, β {} Gbit/s ({} GB/s) as given\n", core::plain_number(o.alpha_us, 4), fmt_gbit(o.beta_gbit),
                           core::plain_number(core::gbyte_from_gbit(o.beta_gbit), 4));
    return src;
}

/// The link of whichever of --from, --matrix (`mat`) or --alpha-us/--beta-gbit was given.
link_source plan_link(const plan_options& o, const std::optional<report_matrix>& mat, const plan_inputs& in) {
    if (o.given("--from")) return link_from_run(o);
    if (!mat) return given_link(o);
    link_source src;
    try {
        src = from_matrix(*mat, in.size, in.topo);
    } catch (const core::spec_error& e) {
        throw plan_usage(fmt::format("{}: {}", o.matrix, e.what()));
    }
    src.info["file"] = o.matrix;
    return src;
}

/// Everything plan reads, checked, in the order its errors are reported.
plan_inputs read_plan_inputs(const plan_options& o) {
    check_plan_options(o);
    const auto mat = load_plan_matrix(o);
    plan_inputs in;
    in.topo = plan_topology(o, mat);
    read_plan_sizes(o, in);
    in.link = plan_link(o, mat, in);
    return in;
}

// ---- model

std::vector<analysis::prediction> predict(const link_source& s, std::uint64_t bytes, const analysis::topology& t) {
    return std::visit([&](const auto& l) { return analysis::predict_all(bytes, t, l); }, s.link);
}
analysis::dp_step_plan plan_step(const link_source& s, const analysis::dp_step_spec& spec, const analysis::topology& t) {
    return std::visit([&](const auto& l) { return analysis::plan_dp_step(spec, t, l); }, s.link);
}

/// What each prediction asks of the modelled link: one message of its inter-node phase.
std::vector<analysis::model_use> model_uses(const std::vector<analysis::prediction>& preds,
                                        std::initializer_list<const analysis::dp_step_plan*> steps, const analysis::topology& topo) {
    std::vector<analysis::model_use> uses;
    const auto add = [&](const analysis::prediction& p, const std::string& prefix) {
        if (p.bytes == 0) return;
        uses.push_back({fmt::format("{}{} {}", prefix, analysis::model_name(p.coll), core::to_string(p.algo)),
                        analysis::step_message_bytes(p.coll, p.algo, p.bytes, topo)});
    };
    for (const auto& p : preds) add(p, "");
    for (const auto* d : steps)
        if (d) {
            add(d->bucket, "step bucket ");
            add(d->last_bucket, "step last bucket ");
        }
    return uses;
}

/// What plan predicts.
struct plan_outcome {
    std::vector<analysis::prediction> preds;             ///< every collective and algorithm at inputs.size
    std::optional<analysis::dp_step_plan> best, ring, tree;  ///< the data-parallel step (with --params)
    std::vector<analysis::model_warning> warnings;       ///< a fitted model used outside its sizes
};

/// Runs the model on `in`. Throws client_error(exit_usage) when core refuses the inputs.
plan_outcome compute_plan(const plan_inputs& in) {
    plan_outcome out;
    try {
        out.preds = predict(in.link, in.size, in.topo);
        if (in.step.params) {
            auto step = in.step;
            out.best = plan_step(in.link, step, in.topo);
            step.algo = core::model_algo::ring;
            out.ring = plan_step(in.link, step, in.topo);
            step.algo = core::model_algo::tree;
            out.tree = plan_step(in.link, step, in.topo);
        }
    } catch (const core::spec_error& e) {
        throw plan_usage(e.what());
    }
    // Warnings on the model's use: only a fitted model knows the sizes it was measured at.
    if (const auto* fit = std::get_if<analysis::model_fit>(&in.link.link)) {
        const auto step_of = [](const std::optional<analysis::dp_step_plan>& d) { return d ? &*d : nullptr; };
        const auto uses = model_uses(out.preds, {step_of(out.best), step_of(out.ring), step_of(out.tree)}, in.topo);
        out.warnings = analysis::model_use_warnings(*fit, uses);
    }
    return out;
}

// ---- rendering

std::string csv(const std::vector<analysis::prediction>& ps) {
    std::string out = "collective,algorithm,bytes,nodes,gpus_per_node,ranks,time_s,latency_s,bandwidth_s,algbw_gbit_per_s,"
                      "busbw_gbit_per_s,bottleneck\n";
    for (const auto& p : ps)
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", analysis::model_name(p.coll), core::to_string(p.algo), p.bytes, p.nodes,
                           p.gpus_per_node, p.ranks, core::plain_number(p.time_s, 6), core::plain_number(p.latency_s, 6),
                           core::plain_number(p.bandwidth_s, 6), core::plain_number(p.algbw_gbit_per_s, 6),
                           core::plain_number(p.busbw_gbit_per_s, 6), p.bottleneck());
    return out;
}

std::string table(const std::vector<analysis::prediction>& ps) {
    std::vector<std::vector<std::string>> rows{
        {"collective", "algorithm", "time", "algbw Gbit/s", "busbw Gbit/s", "latency part", "bandwidth part", "bottleneck"}};
    for (const auto& p : ps)
        rows.push_back({std::string(analysis::model_name(p.coll)), std::string(core::to_string(p.algo)), fmt_time(p.time_s),
                        fmt_gbit(p.algbw_gbit_per_s), fmt_gbit(p.busbw_gbit_per_s), fmt_time(p.latency_s), fmt_time(p.bandwidth_s),
                        std::string(p.bottleneck())});
    return format_table(rows);
}

/// --format csv: the predictions; warnings go to stderr, which has room for them.
std::string plan_csv(const plan_outcome& out) {
    auto text = csv(out.preds);
    for (const auto& w : out.warnings) std::fprintf(stderr, "meshperf: warning: %s\n", w.message.c_str());
    return text;
}

/// --format json: the meshperf.plan/1 document.
std::string plan_json(const plan_inputs& in, const plan_outcome& out) {
    json doc{{"schema", "meshperf.plan/1"}, {"link", in.link.info}, {"topology", analysis::to_json(in.topo)}, {"bytes", in.size}};
    doc["predictions"] = json::array();
    for (const auto& p : out.preds) doc["predictions"].push_back(analysis::to_json(p));
    if (out.best) {
        doc["dp_step"] = analysis::to_json(*out.best);
        doc["dp_step"]["params"] = in.step.params;
        doc["dp_step"]["dtype"] = core::to_string(in.step.type);
        doc["dp_step_by_algorithm"] = {{"ring", analysis::to_json(*out.ring)}, {"tree", analysis::to_json(*out.tree)}};
    } else {
        doc["dp_step"] = nullptr;
    }
    doc["warnings"] = json::array();
    for (const auto& w : out.warnings) doc["warnings"].push_back(analysis::to_json(w));
    return core::json_text(doc, 2) + "\n";
}

/// The table's topology line: nodes, ranks, NICs and the intra-node link.
std::string topology_line(const analysis::topology& topo) {
    const auto intra = topo.intra ? fmt::format("α {} µs, β {} Gbit/s", core::plain_number(topo.intra->alpha_s * 1e6, 3),
                                                fmt_gbit(core::gbit_from_bytes_per_s_by_factor(topo.intra->beta_bytes_per_s)))
                       : topo.gpus_per_node > 1 ? "not given: free (intra_modelled false)"
                                                : "unused";
    return fmt::format("topology: {} node{} × {} GPU{} = {} ranks, {} NIC{} per node; intra-node link {}\n", topo.nodes,
                       topo.nodes == 1 ? "" : "s", topo.gpus_per_node, topo.gpus_per_node == 1 ? "" : "s", topo.ranks(),
                       topo.rails(), topo.rails() == 1 ? "" : "s", intra);
}

/// The table's data-parallel step: gradients and buckets, then the step per algorithm.
std::string dp_step_table(const analysis::dp_step_spec& step, const plan_outcome& out) {
    const auto& best = *out.best;
    auto text = fmt::format("\ndata-parallel step: {} parameters × {} = {} of gradients, {} bucket{} of {} (last {})\n",
                            core::plain_number(static_cast<double>(step.params), 4), core::to_string(step.type), core::format_size(best.gradient_bytes),
                            best.buckets, best.buckets == 1 ? "" : "s", core::format_size(best.bucket_bytes),
                            core::format_size(best.last_bucket_bytes));
    std::vector<std::vector<std::string>> rows{{"all-reduce", "comm per step", "bandwidth bound", "step (no overlap)",
                                                "efficiency (no overlap)", "efficiency (full overlap)"}};
    auto pct = [](const std::optional<double>& e) { return e ? fmt::format("{:.1f}%", *e * 100) : std::string("-"); };
    auto row = [&](const std::string& name, const analysis::dp_step_plan& d) {
        rows.push_back({name, fmt_time(d.comm_s), fmt_time(d.bandwidth_bound_s),
                        d.step_no_overlap_s ? fmt_time(*d.step_no_overlap_s) : "-", pct(d.efficiency_no_overlap),
                        pct(d.efficiency_full_overlap)});
    };
    row("best per bucket", best);
    row("ring", *out.ring);
    row("tree", *out.tree);
    text += format_table(rows);
    if (!best.compute_s) text += "(give --step-compute-ms for the scaling efficiency)\n";
    return text;
}

/// --format table: the link, the topology, the collectives, the step and the warnings.
std::string plan_table(const plan_inputs& in, const plan_outcome& out) {
    auto text = in.link.text + topology_line(in.topo);
    text += fmt::format("\ncollectives of {} ({} B){}:\n", core::format_size(in.size), in.size,
                        in.step.params ? ", one gradient bucket" : "");
    text += table(out.preds);
    if (out.best) text += dp_step_table(in.step, out);
    if (!out.warnings.empty()) {
        text += "\nwarnings:\n";
        for (const auto& w : out.warnings) text += "  - " + w.message + "\n";
    }
    return text;
}

}  // namespace

command_runner add_plan_command(CLI::App& app, const common_options&) {
    auto o = std::make_shared<plan_options>();
    auto* cmd = app.add_subcommand("plan", "predict collective times (all-reduce, all-gather, ...) and the gradient "
                                           "communication of a data-parallel step from a measured link "
                                           "(docs/capacity-planning.md)");
    add_plan_options(*cmd, *o);
    return [o]() -> int {
        const auto in = read_plan_inputs(*o);
        const auto out = compute_plan(in);
        write_output(o->output, render(o->format, {.table = [&] { return plan_table(in, out); },
                                                   .json = [&] { return plan_json(in, out); },
                                                   .csv = [&] { return plan_csv(out); }}));
        return exit_ok;
    };
}

}  // namespace meshperf::client
