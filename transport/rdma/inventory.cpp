#include "transport/rdma/inventory.hpp"

#include "transport/rdma/device.hpp"
#include "transport/rdma/gid.hpp"

#include <fmt/format.h>
#include <fstream>

namespace meshperf::transport::rdma {

namespace {

std::string guid_text(__be64 guid) {
    const std::uint64_t g = be64toh(guid);
    return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", (g >> 48) & 0xffff, (g >> 32) & 0xffff,
                       (g >> 16) & 0xffff, g & 0xffff);
}

nlohmann::json describe_port(const device_context& ctx, std::uint8_t port) {
    nlohmann::json j{{"port", port}};
    try {
        const ibv_port_attr pa = ctx.query_port(port);
        j["state"] = port_state_name(pa.state);
        j["link_layer"] = link_layer_name(pa.link_layer);
        j["active_mtu"] = mtu_bytes(pa.active_mtu);
        j["max_mtu"] = mtu_bytes(pa.max_mtu);
        j["lid"] = pa.lid;
        j["rate_gbit_per_s"] = port_rate_gbit(pa);
        std::ifstream rate(fmt::format("{}/ports/{}/rate", ctx.get()->device->ibdev_path, port));
        std::string text;
        if (std::getline(rate, text) && !text.empty()) j["rate"] = text;
        nlohmann::json gids = nlohmann::json::array();
        for (const auto& e : read_gid_table(ctx.get(), port)) {
            nlohmann::json g{{"index", e.index}, {"gid", format_gid(e.gid)},
                             {"type", to_string(e.type)}};
            if (!e.netdev.empty()) g["netdev"] = e.netdev;
            if (auto v4 = gid_ipv4(e.gid)) g["ipv4"] = *v4;
            gids.push_back(std::move(g));
        }
        j["gids"] = std::move(gids);
    } catch (const std::exception& e) {
        j["error"] = e.what();
    }
    return j;
}

nlohmann::json describe_device(ibv_device* dev) {
    nlohmann::json j{{"name", ibv_get_device_name(dev)}};
    try {
        device_context ctx(dev);
        const ibv_device_attr a = ctx.query();
        j["node_guid"] = guid_text(a.node_guid);
        j["fw_ver"] = a.fw_ver;
        j["vendor_id"] = a.vendor_id;
        j["vendor_part_id"] = a.vendor_part_id;
        j["max_qp"] = a.max_qp;
        j["max_mr_size"] = a.max_mr_size;
        nlohmann::json ports = nlohmann::json::array();
        for (int p = 1; p <= a.phys_port_cnt; ++p)
            ports.push_back(describe_port(ctx, static_cast<std::uint8_t>(p)));
        j["ports"] = std::move(ports);
    } catch (const std::exception& e) {
        j["error"] = e.what();
    }
    return j;
}

}  // namespace

nlohmann::json list_devices() noexcept {
    try {
        device_list list;
        nlohmann::json out{{"devices", nlohmann::json::array()}};
        if (list.empty()) {
            out["reason"] = list.reason();
            return out;
        }
        for (auto* dev : list.devices()) out["devices"].push_back(describe_device(dev));
        return out;
    } catch (const std::exception& e) {
        try {
            return nlohmann::json{{"devices", nlohmann::json::array()},
                                  {"reason", std::string("listing RDMA devices: ") + e.what()}};
        } catch (...) {
        }
    } catch (...) {
    }
    return nlohmann::json();  // only when even the error object cannot be allocated
}

}  // namespace meshperf::transport::rdma
