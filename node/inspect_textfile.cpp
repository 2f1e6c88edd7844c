#include "node/inspect_textfile.hpp"

#include "core/units.hpp"
#include "core/prometheus.hpp"

#include <array>
#include <nlohmann/json.hpp>

namespace meshperf::node {

using nlohmann::json;
using core::metric_type;

namespace {

std::string text(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void links(core::exposition& e, const std::string& host, const json& devices, const char* kind) {
    for (const auto& d : devices) {
        const auto it = d.find("pcie_link");
        if (it == d.end() || !it->is_object() || !it->value("pcie", false)) continue;
        const auto device = text(d, "pci_bus_id");
        for (const auto* bound : {"current", "max"}) {
            const auto width = (*it)[std::string(bound) + "_width"];
            const auto speed = (*it)[std::string(bound) + "_gt_per_s"];
            const std::array<core::metric_label, 4> labels{{{"host", host}, {"device", device}, {"kind", kind}, {"bound", bound}}};
            if (width.is_number()) e.add("meshperf_pcie_link_width_lanes", labels, width.get<double>());
            if (speed.is_number()) e.add("meshperf_pcie_link_speed_transfers_per_second", labels, core::transfers_per_s_from_gt(speed.get<double>()));
        }
    }
}

}  // namespace

std::string inspect_textfile(const json& doc, double unix_seconds) {
    core::exposition e;
    const auto host = text(doc, "host");
    e.declare("meshperf_inspect_state", metric_type::gauge,
              "meshperf inspect verdict as its exit code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN");
    e.declare("meshperf_inspect_findings", metric_type::gauge, "meshperf inspect findings by state");
    e.declare("meshperf_inspect_timestamp_seconds", metric_type::gauge, "when meshperf inspect ran (Unix time)");
    e.declare("meshperf_rail_link_rate_bits_per_second", metric_type::gauge, "each rail's link rate (RDMA port rate, else netdev speed)");
    e.declare("meshperf_pcie_link_width_lanes", metric_type::gauge, "PCIe link width of each GPU, rail NIC and switch uplink on their paths, current and max");
    e.declare("meshperf_pcie_link_speed_transfers_per_second", metric_type::gauge,
              "PCIe link speed per lane of each GPU, rail NIC and switch uplink on their paths, current and max");
    e.declare("meshperf_gpu_nearest_rail_info", metric_type::gauge, "each GPU's nearest rail and the PCIe path in NCCL's words");
    e.add("meshperf_inspect_state", {{"host", host}}, doc.value("exit_code", 3));
    for (const auto* state : {"OK", "WARNING", "CRITICAL", "UNKNOWN"}) {
        int n = 0;
        for (const auto& f : doc.value("findings", json::array())) n += text(f, "state") == state ? 1 : 0;
        e.add("meshperf_inspect_findings", {{"host", host}, {"state", state}}, n);
    }
    e.add("meshperf_inspect_timestamp_seconds", {{"host", host}}, unix_seconds);
    const auto node = doc.value("node", json::object());
    for (const auto& r : node.value("rails", json::array()))
        if (const auto rate = r.value("rate_gbit_per_s", json()); rate.is_number())
            e.add("meshperf_rail_link_rate_bits_per_second",
                  {{"host", host}, {"rail", text(r, "name")}, {"rdma_device", text(r, "rdma_device")}}, core::bit_per_s_from_gbit(rate.get<double>()));
    links(e, host, node.value("gpus", json::array()), "gpu");
    links(e, host, node.value("rails", json::array()), "nic");
    json uplinks = json::array();  // each switch uplink as its upstream port shows it
    for (const auto& l : node.value("pcie_path_links", json::array()))
        if (l.value("bridge_below", false)) uplinks.push_back({{"pci_bus_id", text(l, "below")}, {"pcie_link", l.value("below_link", json())}});
    links(e, host, uplinks, "bridge");
    for (const auto& p : node.value("gpu_rail_pairs", json::array()))
        if (!text(p, "rail").empty())
            e.add("meshperf_gpu_nearest_rail_info", {{"host", host}, {"gpu", text(p, "gpu")}, {"rail", text(p, "rail")}, {"path", text(p, "path")}}, 1);
    return e.render();
}

}  // namespace meshperf::node
