// to_json, verdict_line, perfdata and render_text of inspect.hpp.
#include "node/inspect.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::node {

using core::check_state;

namespace {

std::string label_safe(std::string s) {
    for (auto& c : s)
        if (c == '=' || c == '\'' || c == ' ' || c == '|') c = '_';
    return s;
}

std::size_t count(const inspect_result& r, check_state s) {
    return static_cast<std::size_t>(std::count_if(r.findings.begin(), r.findings.end(), [&](const finding& f) { return f.state == s; }));
}

/// "1 critical, 2 warnings, 3 unknown".
std::string tally(const inspect_result& r) {
    std::string out;
    const auto add = [&](check_state s, const char* one, const char* many) {
        if (const auto n = count(r, s)) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, n == 1 ? one : many);
    };
    add(check_state::critical, "critical", "critical");
    add(check_state::warning, "warning", "warnings");
    add(check_state::unknown, "unknown", "unknown");
    return out;
}

std::string or_q(const std::optional<int>& v) { return v ? std::to_string(*v) : "?"; }

std::string table(const inspect_result& r) {
    const auto& inv = r.inventory;
    std::string out = fmt::format("{:<14} {:<5} {:<4} {:<38} {:<14} {}\n", "GPU", "cuda", "numa", "pcie", "nearest rail", "path");
    for (const auto& g : inv.gpus)
        out += fmt::format("{:<14} {:<5} {:<4} {:<38} {:<14} {}\n", g.bus_id, or_q(g.cuda_index),
                           g.pci && g.pci->numa_node >= 0 ? std::to_string(g.pci->numa_node) : "?", describe(g.link),
                           g.nearest_rail ? inv.rails[*g.nearest_rail].name : "-", to_string(g.nearest_path));
    out += fmt::format("\n{:<14} {:<9} {:<6} {:<10} {:<6} {:<4} {:<14} {:<38} {}\n", "rail", "rdma", "state", "rate",
                       "mtu", "numa", "pci", "pcie", "nearest GPUs");
    for (const auto& rl : inv.rails) {
        std::string gpus;
        for (const auto gi : rl.nearest_gpus)
            gpus += fmt::format("{}{} ({})", gpus.empty() ? "" : ", ", inv.gpus[gi].bus_id, to_string(inv.gpus[gi].nearest_path));
        out += fmt::format("{:<14} {:<9} {:<6} {:<10} {:<6} {:<4} {:<14} {:<38} {}\n", rl.name,
                           rl.rdma_device.empty() ? "-" : fmt::format("{}/{}", rl.rdma_device, rl.rdma_port),
                           !rl.link_up ? "?" : *rl.link_up ? "up" : "down",
                           rl.rate_gbit ? fmt::format("{:g} Gb/s", *rl.rate_gbit) : "?", or_q(rl.mtu),
                           rl.pci && rl.pci->numa_node >= 0 ? std::to_string(rl.pci->numa_node) : "?",
                           rl.pci ? rl.pci->bus_id : "-", rl.pci ? describe(rl.link) : "-", gpus.empty() ? "-" : gpus);
    }
    // Versions in a table of their own: the rail table is wide already.
    out += fmt::format("\n{:<14} {:<14} {}\n", "rail", "firmware", "driver");
    for (const auto& rl : inv.rails) {
        const auto driver = rl.driver.empty()            ? std::string("?")
                            : rl.driver_version.empty() ? rl.driver + " (no module version)"
                                                        : rl.driver + " " + rl.driver_version;
        out += fmt::format("{:<14} {:<14} {}\n", rl.name, rl.firmware.empty() ? "-" : rl.firmware, driver);
    }
    return out;
}

}  // namespace

std::vector<std::string> perfdata(const inspect_result& r) {
    const auto& inv = r.inventory;
    std::vector<std::string> out{core::perfdata_item("gpus", static_cast<double>(inv.gpus.size()), "", "", "0"),
                                 core::perfdata_item("rails", static_cast<double>(inv.rails.size()), "", "", "0")};
    for (const auto& rl : inv.rails)
        out.push_back(core::perfdata_item(label_safe("rail_" + rl.name + "_gbit"), rl.rate_gbit ? *rl.rate_gbit : NAN, "", "", "0"));
    // Each link's max is what both of its ends can do (the port above may do less).
    const auto link = [&](const std::string& who, const pcie_link& own) {
        if (!own.has_attributes) return;  // not a PCIe function: no link to measure
        const auto l = as_far_as_port_allows(inv.path_links, who, own);
        const auto max = l.max_width ? std::to_string(*l.max_width) : std::string();
        out.push_back(core::perfdata_item(label_safe("pcie_" + who + "_lanes"), l.current_width ? *l.current_width : NAN, "",
                                          max.empty() ? "" : max + ":", "0", max));
    };
    for (const auto& g : inv.gpus) link(g.bus_id, g.link);
    for (const auto& rl : inv.rails)
        if (rl.pci) link(rl.pci->bus_id, rl.link);
    for (const auto& hop : inv.path_links)
        if (hop.bridge_below) link(hop.below, hop.below_link);  // the switches' uplinks
    for (const auto& l : r.loopback)
        out.push_back(core::perfdata_item(label_safe("loopback_" + l.device + "_gbit"), l.gbit_per_s ? *l.gbit_per_s : NAN, "",
                                          "", "0"));
    for (const auto& g : r.gpu_copies) {
        auto gpu = g.gpu;  // "cuda:3" -> "cuda3"
        std::erase(gpu, ':');
        out.push_back(core::perfdata_item(label_safe(g.copy + "_" + gpu + "_gbyte"), g.gb_per_s > 0 ? g.gb_per_s : NAN, "", "",
                                          "0"));
    }
    return out;
}

std::string verdict_line(const inspect_result& r) {
    const auto& inv = r.inventory;
    std::string line = fmt::format("MESHPERF INSPECT {} - {}: {} GPUs, {} rails", core::to_string(r.state), r.host,
                                   inv.gpus.size(), inv.rails.size());
    if (const auto t = tally(r); !t.empty()) line += "; " + t;
    const auto p = perfdata(r);
    const auto tail = " | " + p[0] + " " + p[1];
    for (const auto& f : r.findings)
        if (f.state == r.state && f.state != check_state::ok) {
            auto first = fmt::format(": {}: {}", f.subject, f.message);
            const auto used = line.size() + tail.size();
            const std::size_t room = used + 1 < core::nagios_first_line_max ? core::nagios_first_line_max - used - 1 : 0;
            if (first.size() > room) first = first.substr(0, room > 3 ? room - 3 : 0) + "...";
            line += first;
            break;
        }
    for (auto& c : line)
        if (c == '|' || c == '\n') c = '/';
    return line + tail;
}

std::string render_text(const inspect_result& r, bool with_table) {
    std::string out = verdict_line(r) + "\n";
    for (const auto s : {check_state::critical, check_state::warning, check_state::unknown})
        for (const auto& f : r.findings)
            if (f.state == s) out += fmt::format("{}: {}: {}\n", core::to_string(f.state), f.subject, f.message);
    for (const auto& n : r.inventory.notes) out += "note: " + n + "\n";
    if (with_table) out += "\n" + table(r);
    const auto p = perfdata(r);
    for (std::size_t i = 2; i < p.size(); ++i) out += (i == 2 ? "| " : "") + p[i] + "\n";
    return out;
}

nlohmann::json to_json(const inspect_result& r) {
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& f : r.findings)
        findings.push_back({{"state", core::to_string(f.state)}, {"check", f.check}, {"subject", f.subject}, {"message", f.message}});
    std::string perf;
    for (const auto& p : perfdata(r)) perf += (perf.empty() ? "" : " ") + p;
    nlohmann::json loopback = nlohmann::json::array();
    for (const auto& l : r.loopback) loopback.push_back(transport::to_json(l));
    nlohmann::json gpu_copies = nlohmann::json::array();
    for (const auto& g : r.gpu_copies)
        gpu_copies.push_back({{"copy", g.copy},
                              {"gpu", g.gpu},
                              {"size_bytes", g.size_bytes},
                              {"gb_per_s", g.gb_per_s > 0 ? nlohmann::json(g.gb_per_s) : nlohmann::json()},
                              {"verify_failed", g.verify_failed}});
    return {{"host", r.host},
            {"state", core::to_string(r.state)},
            {"exit_code", core::exit_code(r.state)},
            {"summary", verdict_line(r)},
            {"findings", std::move(findings)},
            {"node", to_json(r.inventory)},
            {"perfdata", perf},
            {"loopback", loopback},
            {"gpu_copies", gpu_copies},
            {"text", render_text(r, true)},
            {"nagios_text", render_text(r, false)}};
}

}  // namespace meshperf::node
