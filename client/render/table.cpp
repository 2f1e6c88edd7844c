#include "client/render/table.hpp"
#include "core/json_text.hpp"

#include "client/support/cli_wording.hpp"
#include "client/render/figure_text.hpp"
#include "client/render/point_warnings.hpp"
#include "client/render/rail_table.hpp"
#include "client/support/run_model.hpp"
#include "core/placement_summary.hpp"
#include "core/sizes.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace meshperf::client {

using nlohmann::json;

namespace {

std::string us(double ns) {
    const double v = ns / 1000.0;
    if (v >= 1000) return fmt::format("{:.0f}", v);
    if (v >= 100) return fmt::format("{:.1f}", v);
    return fmt::format("{:.2f}", v);
}

// Three significant digits, never "1.23e-05" (client/render/figure_text.hpp, as in the HTML report).
std::string gbit(double g) { return significant_text(g, 3); }

std::string rate(double per_s) {
    if (per_s >= 1e6) return fmt::format("{} M", core::plain_number(per_s / 1e6, 3));
    if (per_s >= 1e3) return fmt::format("{} k", core::plain_number(per_s / 1e3, 3));
    return fmt::format("{}", core::plain_number(per_s, 3));
}

// Marker after the precision figure for the interval it is (results written before the
// method was recorded have none): "b" the between-block interval, "?" too few blocks to
// check the variation between them, "d" the sweep's drift.
const char* method_marker(const core::precision_info& p) {
    if (!p.method) return "";
    switch (*p.method) {
        case core::precision_method::blocks: return "b";
        case core::precision_method::too_few_blocks: return "?";
        case core::precision_method::drift: return "d";
        case core::precision_method::samples: return "";
    }
    return "";
}

std::string precision(const core::precision_info& p) {
    if (!std::isfinite(p.achieved)) return "-";
    return fmt::format("±{}%{}{}", core::plain_number(p.achieved * 100, 2), method_marker(p), p.adaptive && !p.met ? "*" : "");
}

bool numeric(const std::string& s) {
    return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s.rfind("±", 0) == 0);
}

std::size_t display_width(const std::string& s) {
    // UTF-8: count code points, not bytes (µ, ±).
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

std::string format_table(const std::vector<std::vector<std::string>>& rows) {
    if (rows.empty()) return {};
    std::vector<std::size_t> width;
    for (const auto& r : rows)
        for (std::size_t i = 0; i < r.size(); ++i) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], display_width(r[i]));
        }
    std::string out;
    for (std::size_t ri = 0; ri < rows.size(); ++ri) {
        const auto& r = rows[ri];
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i) {
            const auto pad = std::string(width[i] - display_width(r[i]), ' ');
            const bool right = ri > 0 && numeric(r[i]);
            line += (i ? "  " : "") + (right ? pad + r[i] : r[i] + (i + 1 < r.size() ? pad : ""));
        }
        out += line + "\n";
        if (ri == 0) {
            std::string rule;
            for (std::size_t i = 0; i < width.size(); ++i) rule += (i ? "  " : "") + std::string(width[i], '-');
            out += rule + "\n";
        }
    }
    return out;
}

std::string render_run_table(const core::run_result& run) {
    std::string out = fmt::format("run {}  {}  {} -> {}  transport {}\n", run.id, run.state.text(),
                                  run.initiator.address.empty() ? "?" : run.initiator.address, run.spec.peer,
                                  run.spec.transport);
    if (!run.peer.hostname.empty())
        out += fmt::format("initiator {} ({}, {}), peer {} ({}, {})\n", run.initiator.hostname, run.initiator.kernel,
                           run.initiator.cpu_model, run.peer.hostname, run.peer.kernel, run.peer.cpu_model);
    for (const auto& line : core::placement_lines(run)) out += line + "\n";
    // iperf3's Retr: retransmitted TCP segments of the point; only where some point has the
    // counters, so results of older daemons print as they always did.
    const bool retr = std::any_of(run.points.begin(), run.points.end(), [](const auto& p) { return p.tcp_counters.has_value(); });
    for (auto test : run.spec.tests) {
        std::vector<std::vector<std::string>> rows;
        if (test == core::test_kind::latency) {
            rows.push_back({"size", "p50 µs", "min", "p90", "p99", "p99.9", "max", "mean", "stdev", "samples", "precision"});
            for (const auto& p : run.points) {
                if (p.test != test || !p.lat_ns) continue;
                const auto& l = *p.lat_ns;
                rows.push_back({core::format_size(p.size_bytes), us(l.p50), us(l.min), us(l.p90), us(l.p99), us(l.p999), us(l.max),
                                us(l.mean), us(l.stdev), std::to_string(l.count), precision(p.precision)});
            }
            out += "\nlatency (one-way = RTT/2, µs)\n";
        } else {
            const bool bidir = test == core::test_kind::bidir;
            if (bidir) rows.push_back({"size", "Gbit/s", "->peer", "<-peer", "GB/s", "msg/s", "precision", "CPU % init/peer"});
            else rows.push_back({"size", "Gbit/s", "GB/s", "msg/s", "interval min..max", "precision", "CPU % init/peer"});
            if (retr) rows.back().push_back("retr");
            for (const auto& p : run.points) {
                if (p.test != test) continue;
                const auto cpu = fmt::format("{:.0f}/{:.0f}", p.cpu.local_percent, p.cpu.remote_percent);
                if (bidir) {
                    std::string fwd = "-", rev = "-";
                    for (const auto& f : p.flows) (f.direction == "initiator->peer" ? fwd : rev) = gbit(f.gbit_per_s);
                    rows.push_back({core::format_size(p.size_bytes), gbit(p.gbit_per_s), fwd, rev, gbit(core::gbyte_from_gbit(p.gbit_per_s)),
                                    rate(p.msg_per_s), precision(p.precision), cpu});
                } else {
                    double lo = 0, hi = 0;
                    if (!p.flows.empty()) { lo = p.flows[0].interval_min_gbit; hi = p.flows[0].interval_max_gbit; }
                    rows.push_back({core::format_size(p.size_bytes), gbit(p.gbit_per_s), gbit(core::gbyte_from_gbit(p.gbit_per_s)), rate(p.msg_per_s),
                                    fmt::format("{}..{}", gbit(lo), gbit(hi)), precision(p.precision), cpu});
                }
                if (retr) rows.back().push_back(p.tcp_counters ? std::to_string(p.tcp_counters->retransmits) : "-");
            }
            const auto streams = core::streams_per_direction(run.spec, test);
            out += fmt::format("\n{} ({}{}, {} stream{})\n", core::to_string(test),
                               bidir ? "both directions" : (run.spec.reverse ? "peer -> initiator" : "initiator -> peer"),
                               run.spec.rails.empty() ? "" : fmt::format(", {} rails", run.spec.rails.size()), streams,
                               streams == 1 ? "" : "s");
        }
        if (rows.size() > 1) out += format_table(rows);
        else out += "(no points)\n";
        if (test != core::test_kind::latency)
            if (const auto rails = rail_table_rows(run, test); !rails.rows.empty()) out += rails.heading + format_table(rails.rows);
    }
    if (!run.points.empty()) out += render_model_text(fit_run_model(run));
    bool any_missed = false;
    for (const auto& p : run.points) any_missed |= p.precision.adaptive && !p.precision.met;
    std::string legend;
    if (any_missed) legend += "* precision target not met within the time cap (raise --max-time or accept the wider interval)\n";
    bool any_blocks = false, any_few = false, any_drift = false;
    for (const auto& p : run.points) {
        any_blocks |= p.precision.method == core::precision_method::blocks;
        any_few |= p.precision.method == core::precision_method::too_few_blocks;
        any_drift |= p.precision.method == core::precision_method::drift;
    }
    if (any_blocks)
        legend += fmt::format("b the blocks of consecutive samples disagree: the interval shown is the one between blocks, more "
                              "than {:.1f}× the one the samples alone give (the figure moved during the point)\n",
                              core::block_dominance_ratio);
    if (any_few)
        legend += fmt::format("? fewer than {} blocks of consecutive samples: the variation between blocks was not checked, so "
                              "the interval may be too narrow\n",
                              core::min_blocks_to_assess);
    if (any_drift)
        legend += "d the path's latency moved during the sweep by more than this point's own interval: the interval shown "
                  "is the spread of the reference size measured again every few points\n";
    if (retr)
        legend += "retr TCP segments retransmitted in the point's measured window, by every stream that sent (\"-\": not "
                  "recorded); see docs/counters.md\n";
    if (!legend.empty()) out += "\n" + legend;
    // Each warning once, with the points it applies to (client/render/point_warnings.hpp); the
    // precision ones are the '*' above.
    std::vector<std::string> warnings;
    for (const auto& g : group_point_warnings(run).groups)
        if (g.text.rfind("precision target not met", 0) != 0) warnings.push_back(fmt::format("{} ({})", g.text, g.where));
    for (const auto& w : run.warnings) warnings.push_back(w);
    if (!warnings.empty()) {
        out += "\nwarnings:\n";
        for (const auto& w : warnings) out += "  - " + w + "\n";
    }
    if (!run.error.empty()) out += fmt::format("\nerror: {}\n", run.error);
    return out;
}

std::string point_progress_line(const core::point_result& p, std::size_t index, std::size_t total) {
    std::string fig = p.lat_ns ? fmt::format("p50 {} µs", us(p.lat_ns->p50)) : fmt::format("{} Gbit/s", gbit(p.gbit_per_s));
    return fmt::format("[{:>3}/{}] {:<9} {:>9}  {}", index, total, core::to_string(p.test), core::format_size(p.size_bytes), fig);
}

namespace {

/// What a run list row measured: a sweep's peer, or a collective's count of hosts ("4 hosts"),
/// from its "hosts" (an array or a count) or "ranks".
std::string run_list_target(const json& r) {
    if (r.value("kind", "sweep") != "collective") return r.value("peer", "");
    std::size_t hosts = 0;
    if (const auto it = r.find("hosts"); it != r.end() && it->is_array()) hosts = it->size();
    else if (it != r.end() && it->is_number_unsigned()) hosts = it->get<std::size_t>();
    else if (const auto ranks = r.find("ranks"); ranks != r.end() && ranks->is_number_unsigned()) hosts = ranks->get<std::size_t>();
    return hosts ? fmt::format("{} hosts", hosts) : std::string("?");
}

}  // namespace

std::string render_run_list(const json& list) {
    std::vector<std::vector<std::string>> rows{{"id", "kind", "state", "peer / hosts", "created", "points", "error"}};
    for (const auto& r : list.value("runs", json::array())) {
        const auto error = r.find("error");
        rows.push_back({r.value("id", ""), r.value("kind", "sweep"), r.value("state", ""), run_list_target(r),
                        r.value("created_at", ""), std::to_string(r.value("points", 0)),
                        // the whole error is in --format json; a long one would make the table hundreds wide
                        error != r.end() && error->is_string() ? shortened(error->get<std::string>(), run_list_error_width) : ""});
    }
    return rows.size() > 1 ? format_table(rows) : "no runs\n";
}

namespace {

/// A /v1/info field as text: a string as it is, a number or true/false as JSON writes it,
/// "?" for null, a missing key or another type (the daemon's JSON is not trusted here).
std::string info_text(const json& j, const char* key) {
    const auto it = j.is_object() ? j.find(key) : j.end();
    if (it == j.end() || it->is_null() || it->is_object() || it->is_array()) return "?";
    return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace

std::string render_info_rails(const json& info) {
    const auto it = info.is_object() ? info.find("rails") : info.end();
    if (it == info.end() || !it->is_array()) return {};
    if (it->empty()) return "rails: none\n";
    std::vector<std::vector<std::string>> rows{{"rail", "RDMA", "addresses", "Gbit/s", "MTU", "link", "nearest GPUs"}};
    for (const auto& r : *it) {
        if (!r.is_object()) continue;
        std::string addresses, gpus;
        for (const auto& a : r.value("addresses", json::array()))
            if (a.is_string()) addresses += (addresses.empty() ? "" : ",") + a.get<std::string>();
        for (const auto& g : r.value("nearest_gpus", json::array()))
            if (g.is_object())
                gpus += fmt::format("{}{} {}", gpus.empty() ? "" : ", ", info_text(g, "cuda_index") == "?" ? info_text(g, "pci_bus_id")
                                                                                                       : "cuda:" + info_text(g, "cuda_index"),
                                    info_text(g, "path"));
        const auto up = r.value("link_up", json());
        rows.push_back({info_text(r, "name"), info_text(r, "rdma_device"), addresses.empty() ? "-" : addresses,
                        info_text(r, "rate_gbit_per_s"), info_text(r, "mtu"),
                        up.is_boolean() ? (up.get<bool>() ? "up" : "DOWN") : "?", gpus.empty() ? "-" : gpus});
    }
    std::string out = "rails:\n";
    const auto table = format_table(rows);
    std::size_t start = 0;
    while (start < table.size()) {  // indented as the other sections
        const auto end = table.find('\n', start);
        out += "  " + table.substr(start, end == std::string::npos ? std::string::npos : end - start + 1);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

std::string render_info(const json& info) {
    const auto& h = info.value("host", json::object());
    std::string out = fmt::format("meshperfd {} at {}\n  host {}  kernel {}  CPU {} ({} cores)\n", h.value("version", "?"),
                                  h.value("address", "?"), h.value("hostname", "?"), h.value("kernel", "?"),
                                  h.value("cpu_model", "?"), h.value("cpu_count", 0));
    out += "transports:\n";
    for (const auto& t : info.value("transports", json::array()))
        out += fmt::format("  {:<6} {}\n", t.value("name", "?"),
                           t.value("available", false) ? "available" : "unavailable: " + t.value("reason", std::string("?")));
    const auto devices = info.value("rdma_devices", json::array());
    if (!devices.empty()) {
        out += "RDMA devices:\n";
        for (const auto& d : devices) {
            out += fmt::format("  {}  fw {}\n", d.value("name", "?"), d.value("fw_ver", "?"));
            for (const auto& p : d.value("ports", json::array())) {
                out += fmt::format("    port {}: {}, {}, active MTU {}, {}\n", p.value("port", 0), p.value("state", "?"),
                                   p.value("link_layer", "?"), p.value("active_mtu", 0), p.value("rate", std::string("?")));
                for (const auto& g : p.value("gids", json::array()))
                    out += fmt::format("      GID[{}] {} {}{}\n", g.value("index", 0), g.value("gid", "?"), g.value("type", "?"),
                                       g.contains("netdev") ? " " + g.value("netdev", "") : "");
            }
        }
    }
    if (info.contains("gpus")) {
        const auto& g = info["gpus"];
        if (!g.value("available", false)) out += "GPUs: unavailable: " + g.value("reason", std::string("?")) + "\n";
        else {
            out += "GPUs:\n";
            const auto& inv = g["inventory"];
            out = out.substr(0, out.size() - 1) + fmt::format(" driver {}, runtime {}, nvidia-peermem {}\n", core::json_text(inv.value("driver_version", json("?"))),
                                                              core::json_text(inv.value("runtime_version", json("?"))), inv.value("nvidia_peermem_loaded", false) ? "loaded" : "not loaded");
            for (const auto& d : inv.value("devices", json::array()))
                out += fmt::format("  {} {}  {}  PCIe {}  NUMA {}  dma-buf {}\n", d.value("memory", "?"), d.value("name", "?"),
                                   core::format_size(d.value("memory_bytes", std::uint64_t{0})), d.value("pci_bus_id", "?"),
                                   core::json_text(d["numa_node"]), core::json_text(d["dma_buf_supported"]));
        }
    }
    out += render_info_rails(info);
    const auto& q = info.value("queue", json::object());
    out += fmt::format("queue: {} waiting{}\n", q.value("queued", 0),
                       q.value("measuring", "").empty() ? "" : ", measuring: " + q.value("measuring", ""));
    return out;
}

std::string render_csv(const core::run_result& run) {
    std::string out = core::csv_header() + "\n";
    for (const auto& p : run.points) out += core::to_csv_row(run, p) + "\n";
    return out;
}

}  // namespace meshperf::client
