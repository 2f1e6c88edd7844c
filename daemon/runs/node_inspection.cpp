#include "daemon/runs/node_inspection.hpp"

#include "daemon/runs/run_manager.hpp"
#include "daemon/runtime/gpu_support.hpp"
#include "daemon/runtime/inspection_state.hpp"
#include "node/gpu_copy_check.hpp"
#include "node/host_addresses.hpp"
#include "node/loopback_check.hpp"
#include "node/read_inventory.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>
#include <vector>

namespace meshperf::daemon {

using nlohmann::json;

namespace {

/// The measurement gate for the inspection's measurements (loopback, GPU copies), so that they
/// neither disturb nor are disturbed by a run; a busy daemon (measuring, or runs waiting)
/// gets an empty lease and `busy` says why, rather than waiting or making a run wait.
measurement_gate::lease gate_when_idle(daemon_context& ctx, const std::string& who, const run_manager* runs, std::string& busy) {
    if (runs && runs->queued() > 0) {
        busy = fmt::format("{} run(s) wait on this daemon: not measured, so as not to delay them", runs->queued());
        return {};
    }
    std::string holder;
    auto lease = ctx.gate.try_acquire(who, holder);
    if (!lease) busy = fmt::format("this daemon is measuring ({}): ask again when it is done", holder);
    return lease;
}

/// The parts of sysfs the inventory lists. read_inventory takes an absent folder as "none",
/// which would judge a node without GPUs or rails; when one cannot be listed, those
/// findings mean nothing, and the inspection is UNKNOWN, saying which part and why.
void require_listable(const std::filesystem::path& root, node::inspect_result& r) {
    std::vector<node::finding> unlisted;
    for (const auto* part : {"bus/pci/devices", "class/net"}) {
        std::error_code ec;
        std::filesystem::directory_iterator it(root / part, ec);
        if (ec)
            unlisted.push_back({core::check_state::unknown, "sysfs", (root / part).string(),
                                fmt::format("cannot be listed ({}): the node's devices are unknown", ec.message())});
    }
    if (unlisted.empty()) return;
    r.findings = std::move(unlisted);
    r.state = core::check_state::unknown;
}

}  // namespace

std::vector<std::pair<int, std::string>> cuda_ordinals(const json& gpus) {
    std::vector<std::pair<int, std::string>> out;
    if (!gpus.is_object()) return out;
    const auto inv = gpus.find("inventory");
    const json& holder = inv != gpus.end() && inv->is_object() ? *inv : gpus;
    const auto devices = holder.find("devices");
    if (devices == holder.end() || !devices->is_array()) return out;
    for (const auto& d : *devices)
        if (d.is_object() && d.value("index", json()).is_number_integer() && d.value("pci_bus_id", json()).is_string())
            out.emplace_back(d["index"].get<int>(), d["pci_bus_id"].get<std::string>());
    return out;
}

node::node_inventory read_node_inventory(const daemon_context& ctx, const std::string& control_address, const json& gpus) {
    node::inventory_input in;
    in.sysfs_root = ctx.sysfs_root;
    in.addresses = node::host_addresses();
    in.selection = ctx.rails;
    in.control_address = control_address;
    in.cuda_devices = cuda_ordinals(gpus);  // CUDA's numbering, when the driver answers; the GPUs come from the PCI bus
    return node::read_inventory(in);
}

namespace {

constexpr const char* abandoned_text = "the client that asked for this inspection left: stopped";

/// Throws when the client has left (caught below, like any failure of the inspection).
struct client_left {};

void stop_if_abandoned(const node_inspection_request& req) {
    if (req.abandoned && req.abandoned()) throw client_left{};
}

}  // namespace

node::inspect_result inspect_node(daemon_context& ctx, const node_inspection_request& req, const run_manager* runs) {
    const auto host = ctx.host.hostname.empty() ? ctx.host.address : ctx.host.hostname;
    node::inspect_result r;
    try {
        stop_if_abandoned(req);
        std::unique_lock<std::mutex> one_at_a_time;
        if (ctx.inspections) one_at_a_time = ctx.inspections->exclusive();
        stop_if_abandoned(req);
        auto inventory = read_node_inventory(ctx, req.control_address, gpu_info());
        stop_if_abandoned(req);
        r = node::inspect(std::move(inventory), req.expect, host);
        require_listable(ctx.sysfs_root, r);
        if (req.loopback || req.gpu_copies) {
            stop_if_abandoned(req);
            std::string busy;
            const auto lease = gate_when_idle(ctx, req.who, runs, busy);
            if (req.loopback)
                node::add_loopback_findings(r, lease ? transport::measure_rnic_loopback({}) : transport::rnic_loopback_survey{{}, busy},
                                            req.expect);
            if (req.gpu_copies) {
                stop_if_abandoned(req);
                node::add_gpu_copy_findings(r, lease ? node::survey_gpu_copies() : node::gpu_copy_survey{nullptr, busy, false},
                                            req.expect);
            }
        }
    } catch (const client_left&) {
        r.host = host;
        r.findings.push_back({core::check_state::unknown, "inspect", "node", abandoned_text});
        r.state = core::worst(r.state, core::check_state::unknown);
    } catch (const std::exception& e) {
        r.host = host;
        r.findings.push_back({core::check_state::unknown, "inspect", "node", fmt::format("the inspection failed: {}", e.what())});
        r.state = core::worst(r.state, core::check_state::unknown);
    }
    return r;
}

bool was_abandoned(const node::inspect_result& r) {
    return std::any_of(r.findings.begin(), r.findings.end(),
                       [](const auto& f) { return f.check == "inspect" && f.message == abandoned_text; });
}

}  // namespace meshperf::daemon
