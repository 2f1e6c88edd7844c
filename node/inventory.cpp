#include "node/inventory.hpp"

#include <nlohmann/json.hpp>

namespace meshperf::node {

using nlohmann::json;

namespace {

template <class T>
json or_null(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

json link_json(const pcie_link& l) {
    return {{"current_width", or_null(l.current_width)}, {"max_width", or_null(l.max_width)},
            {"current_gt_per_s", or_null(l.current_gts)}, {"max_gt_per_s", or_null(l.max_gts)},
            {"pcie", l.has_attributes}};
}

json place_json(const std::optional<gpu::pci_location>& p) {
    if (!p) return {{"pci_bus_id", nullptr}, {"numa_node", nullptr}, {"root_complex", nullptr}};
    return {{"pci_bus_id", p->bus_id}, {"numa_node", p->numa_node < 0 ? json(nullptr) : json(p->numa_node)},
            {"root_complex", p->root_complex}};
}

json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json rail_json(const node_inventory& inv, const rail& r) {
    json j{{"name", r.name},
           {"netdev", text_or_null(r.netdev)},
           {"rdma_device", text_or_null(r.rdma_device)},
           {"rdma_port", r.rdma_port == 0 ? json(nullptr) : json(r.rdma_port)},
           {"link_layer", text_or_null(r.link_layer)},
           {"addresses", r.addresses},
           {"mtu", or_null(r.mtu)},
           {"rate_gbit_per_s", or_null(r.rate_gbit)},
           {"rate_source", text_or_null(r.rate_source)},
           {"link_up", or_null(r.link_up)},
           {"state", text_or_null(r.state_text)},
           {"firmware", text_or_null(r.firmware)},
           {"driver", text_or_null(r.driver)},
           {"driver_version", text_or_null(r.driver_version)},
           {"pcie_link", r.pci ? link_json(r.link) : json(nullptr)}};
    j.update(place_json(r.pci));
    json near = json::array();
    for (const auto gi : r.nearest_gpus) {
        const auto& g = inv.gpus[gi];
        near.push_back({{"pci_bus_id", g.bus_id}, {"cuda_index", or_null(g.cuda_index)}, {"path", to_string(g.nearest_path)}});
    }
    j["nearest_gpus"] = std::move(near);
    return j;
}

}  // namespace

json rails_json(const node_inventory& inv) {
    json out = json::array();
    for (const auto& r : inv.rails) out.push_back(rail_json(inv, r));
    return out;
}

json pairing_json(const node_inventory& inv) {
    json out = json::array();
    for (const auto& g : inv.gpus) {
        json equally = json::array();
        for (const auto ri : g.equally_near) equally.push_back(inv.rails[ri].name);
        out.push_back({{"gpu", g.bus_id},
                       {"cuda_index", or_null(g.cuda_index)},
                       {"rail", g.nearest_rail ? json(inv.rails[*g.nearest_rail].name) : json(nullptr)},
                       {"path", to_string(g.nearest_path)},
                       {"equally_near", std::move(equally)}});
    }
    return out;
}

json to_json(const node_inventory& inv) {
    json gpus = json::array();
    for (const auto& g : inv.gpus) {
        json j{{"pci_bus_id", g.bus_id},
               {"device_id", text_or_null(g.device_id)},
               {"cuda_index", or_null(g.cuda_index)},
               {"pcie_link", link_json(g.link)},
               {"nearest_rail", g.nearest_rail ? json(inv.rails[*g.nearest_rail].name) : json(nullptr)},
               {"nearest_path", to_string(g.nearest_path)}};
        const auto place = place_json(g.pci);
        j["numa_node"] = place["numa_node"];
        j["root_complex"] = place["root_complex"];
        gpus.push_back(std::move(j));
    }
    json path_links = json::array();
    for (const auto& l : inv.path_links)
        path_links.push_back({{"above", l.above},
                              {"below", l.below},
                              {"bridge_below", l.bridge_below},
                              {"above_link", link_json(l.above_link)},
                              {"below_link", link_json(l.below_link)},
                              {"behind", l.behind}});
    return {{"sysfs_root", inv.sysfs_root.string()},
            {"gpus", std::move(gpus)},
            {"rails", rails_json(inv)},
            {"gpu_rail_pairs", pairing_json(inv)},
            {"gpu_driver", text_or_null(inv.gpu_driver)},
            {"pcie_path_links", std::move(path_links)},
            {"control_interface", text_or_null(inv.control_interface)},
            {"notes", inv.notes}};
}

}  // namespace meshperf::node
