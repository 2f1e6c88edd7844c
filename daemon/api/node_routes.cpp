#include "daemon/api/node_routes.hpp"

#include "core/error.hpp"
#include "daemon/runtime/gpu_support.hpp"
#include "daemon/runtime/metrics.hpp"
#include "node/host_addresses.hpp"
#include "node/inspect.hpp"
#include "node/inspect_textfile.hpp"
#include "node/loopback_check.hpp"
#include "node/read_inventory.hpp"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>

namespace meshperf::daemon {

using nlohmann::json;

namespace {

node::node_inventory read_node(const api_state& s, const json& gpus) {
    node::inventory_input in;
    in.sysfs_root = s.ctx.sysfs_root;
    in.addresses = node::host_addresses();
    in.selection = s.ctx.rails;
    in.control_address = s.listening.address;
    // CUDA ordinals, when the driver answers; the GPUs themselves come from the PCI bus.
    if (gpus.is_object() && gpus.contains("devices") && gpus["devices"].is_array())
        for (const auto& d : gpus["devices"])
            if (d.is_object() && d.value("index", json()).is_number_integer() && d.value("pci_bus_id", json()).is_string())
                in.cuda_devices.emplace_back(d["index"].get<int>(), d["pci_bus_id"].get<std::string>());
    return node::read_inventory(in);
}

/// Every RDMA device's loopback, holding the measurement gate so that it neither disturbs
/// nor is disturbed by a run; a busy daemon measures nothing and says why.
transport::rnic_loopback_survey loop_back_devices(const api_state& s) {
    std::string holder;
    const auto lease = s.ctx.gate.try_acquire("inspect --loopback", holder);
    if (!lease)
        return {{}, fmt::format("this daemon is measuring ({}): ask again when it is done", holder)};
    return transport::measure_rnic_loopback({});
}

}  // namespace

json node_info(const api_state& s, const json& gpus) {
    // /v1/info is answered on the I/O thread and polled (matrix probes, dashboards): the
    // sysfs walk (milliseconds on an 8-rail node) is done at most once a second.
    static std::mutex m;
    static const daemon_context* cached_for = nullptr;
    static std::filesystem::path cached_root;
    static std::chrono::steady_clock::time_point cached_at;
    static json cached;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(m);
    if (cached_for != &s.ctx || cached_root != s.ctx.sysfs_root || now - cached_at > std::chrono::seconds(1)) {
        const auto inv = read_node(s, gpus);
        cached = {{"rails", node::rails_json(inv)}, {"gpu_rail_pairs", node::pairing_json(inv)}};
        cached_for = &s.ctx;
        cached_root = s.ctx.sysfs_root;
        cached_at = now;
    }
    return cached;
}

api_reply handle_inspect(const api_state& s, const std::string& body, bool post) {
    std::optional<node::node_manifest> expect;
    bool loopback = false;
    if (post && !body.empty()) {
        const auto j = json::parse(body, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            return api_error(400, "the request body is not a JSON object: send {\"expect\": {\"gpus\": 8, \"rails\": 8}, "
                                  "\"loopback\": true} or nothing");
        for (const auto& [key, _] : j.items())
            if (key != "expect" && key != "loopback")
                return api_error(400, fmt::format("unknown key '{}' (known: expect, loopback)", key));
        if (j.contains("loopback")) {
            if (!j["loopback"].is_boolean()) return api_error(400, "'loopback' must be true or false");
            loopback = j["loopback"].get<bool>();
        }
        if (j.contains("expect")) {
            try {
                expect = node::manifest_from_json(j["expect"]);
            } catch (const core::spec_error& e) {
                return api_error(400, e.what());
            }
        }
    }
    const auto host = s.ctx.host.hostname.empty() ? s.ctx.host.address : s.ctx.host.hostname;
    auto result = node::inspect(read_node(s, gpu_info()), expect, host);
    if (loopback) node::add_loopback_findings(result, loop_back_devices(s), expect);
    auto doc = node::to_json(result);
    if (s.ctx.metrics) {
        const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
        s.ctx.metrics->record_inspection(node::inspect_textfile(doc, now));
    }
    return {200, std::move(doc)};
}

}  // namespace meshperf::daemon
