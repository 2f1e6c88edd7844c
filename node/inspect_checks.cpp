// inspect() and compare_manifest() of inspect.hpp: the checks.
#include "node/acs.hpp"
#include "node/inspect.hpp"

#include <fmt/format.h>
#include <set>
#include <utility>

namespace meshperf::node {

using core::check_state;

namespace {

/// A link's state and what to say about it, judged against what both of its ends can do:
/// `own` as this end shows it, `partner` the other end (null when unknown). Fewer lanes
/// than both ends can do: CRITICAL; slower: CRITICAL, or WARNING when `idle_slows` (a GPU
/// lowers its link speed when idle, so only under load is it a fault).
std::pair<check_state, std::string> judge_link(const pcie_link& own, const pcie_link* partner, const std::string& partner_name,
                                               bool idle_slows) {
    const auto l = partner ? capped_by(own, *partner) : own;
    auto text = describe(own);
    if (partner && capped(own, *partner)) text += fmt::format("; {} at the other end can do {}", partner_name, describe_max(*partner));
    if (width_downgraded(l)) return {check_state::critical, fmt::format("downgraded to x{} of x{} lanes: {}", *l.current_width, *l.max_width, text)};
    if (speed_downgraded(l))
        return {idle_slows ? check_state::warning : check_state::critical,
                fmt::format("at {:g} of {:g} GT/s: {}{}", *l.current_gts, *l.max_gts, text,
                            idle_slows ? " (an idle GPU lowers its link speed: check again under load)" : "")};
    if (!complete(l)) return {check_state::unknown, "not fully readable from sysfs: " + text};
    return {check_state::ok, text};
}

void check_link(std::vector<finding>& out, const node_inventory& inv, const std::string& subject, const std::string& bus_id,
                const pcie_link& l, bool gpu) {
    finding f{check_state::ok, "pcie_link", subject, ""};
    if (!l.has_attributes) {
        f.message = "no PCIe link: a conventional PCI or virtual function (sysfs has no link attributes)";
    } else {
        const auto* hop = link_below(inv.path_links, bus_id);
        const auto* port = hop && hop->above_link.has_attributes ? &hop->above_link : nullptr;
        const auto [state, text] = judge_link(l, port, hop ? "port " + hop->above : std::string(), gpu);
        f.state = state;
        f.message = "PCIe link " + text;
    }
    out.push_back(std::move(f));
}

/// Each switch uplink on a GPU's or rail NIC's path, once: judged as its lower end (the
/// switch's upstream port) shows it, against what both ends can do.
void check_bridge_links(std::vector<finding>& out, const node_inventory& inv) {
    for (const auto& hop : inv.path_links) {
        if (!hop.bridge_below) continue;
        const auto* port = hop.above_link.has_attributes ? &hop.above_link : nullptr;
        const auto [state, text] = judge_link(hop.below_link, port, "port " + hop.above, false);
        std::string behind;
        for (const auto& b : hop.behind) behind += (behind.empty() ? "" : ", ") + b;
        const bool bad = state == check_state::critical || state == check_state::warning;
        out.push_back({state, "pcie_link", "bridge " + hop.below,
                       fmt::format("PCIe link to {} {}; {}: {}", hop.above, text, bad ? "throttles" : "behind it", behind)});
    }
}

void check_affinity(std::vector<finding>& out, const node_inventory& inv) {
    bool any_rail_placed = false;
    for (const auto& r : inv.rails) any_rail_placed = any_rail_placed || r.pci.has_value();
    for (const auto& g : inv.gpus) {
        finding f{check_state::ok, "affinity", "GPU " + g.bus_id, ""};
        if (!g.nearest_rail) {
            f.state = check_state::unknown;
            f.message = any_rail_placed ? "no rail's PCIe path to this GPU is known (NUMA node unknown?)"
                                        : "no rail has a PCIe position (virtual interfaces only?)";
        } else {
            const auto& r = inv.rails[*g.nearest_rail];
            f.message = fmt::format("nearest rail {} ({})", r.name, to_string(g.nearest_path));
            if (crosses_cpu(g.nearest_path)) {
                f.state = check_state::warning;
                f.message += ": GPUDirect traffic between them crosses the CPU";
            }
        }
        out.push_back(std::move(f));
    }
}

void check_acs(std::vector<finding>& out, const node_inventory& inv) {
    std::set<std::string> seen;
    for (const auto& g : inv.gpus) {
        if (!g.nearest_rail || crosses_cpu(g.nearest_path)) continue;
        const auto& r = inv.rails[*g.nearest_rail];
        for (const auto& bridge : bridges_between(*g.pci, *r.pci)) {
            if (!seen.insert(bridge).second) continue;
            const auto acs = read_acs(inv.sysfs_root, bridge);
            finding f{check_state::ok, "acs", "bridge " + bridge, ""};
            const auto between = fmt::format("between GPU {} and rail {}", g.bus_id, r.name);
            switch (acs.state) {
            case acs_state::kind::unknown:
                f.state = check_state::unknown;
                f.message = fmt::format("ACS unknown {}: {}", between, acs.why);
                break;
            case acs_state::kind::absent: f.message = fmt::format("no ACS capability {}", between); break;
            case acs_state::kind::disabled:
                f.message = fmt::format("ACS redirects off {} (control 0x{:04x})", between, acs.control);
                break;
            case acs_state::kind::redirects:
                f.state = check_state::warning;
                f.message = fmt::format("ACS {} enabled {} (control 0x{:04x}): peer-to-peer traffic goes up to the root "
                                        "complex; disable ACS on this bridge for GPUDirect",
                                        redirect_bits(acs.control), between, acs.control);
                break;
            }
            out.push_back(std::move(f));
        }
    }
}

void check_rails(std::vector<finding>& out, const node_inventory& inv) {
    if (inv.rails.empty())
        out.push_back({check_state::warning, "rails", "node", "no rail found (see [rails] in the daemon's configuration)"});
    for (const auto& r : inv.rails) {
        finding f{check_state::ok, "rail_link", "rail " + r.name, "link up"};
        if (r.link_up && !*r.link_up) {
            f.state = check_state::critical;
            f.message = fmt::format("link down ({})", r.state_text);
        } else if (!r.link_up) {
            f.state = check_state::unknown;
            f.message = fmt::format("link state unknown ({})", r.state_text.empty() ? "not readable" : r.state_text);
        }
        out.push_back(std::move(f));
    }
}

/// nic_driver for one rail: the expected "NAME VERSION" against the driver bound to its
/// device and its module's version.
finding compare_driver(const rail& r, const std::string& expected) {
    finding f{check_state::ok, "manifest", "rail " + r.name, ""};
    const auto space = expected.find(' ');
    const auto name = expected.substr(0, space), version = expected.substr(space + 1);
    if (r.driver.empty()) {
        f.state = check_state::unknown;
        f.message = fmt::format("driver unknown (no driver link under its device), manifest expects {}", expected);
    } else if (r.driver != name) {
        f.state = check_state::warning;
        f.message = fmt::format("driver {}{}, manifest expects {}", r.driver, r.driver_version.empty() ? "" : " " + r.driver_version, expected);
    } else if (r.driver_version.empty()) {
        f.state = check_state::unknown;
        f.message = fmt::format("driver {} has no module version (module/{}/version absent: an in-tree driver has none), "
                                "manifest expects {}",
                                r.driver, r.driver, expected);
    } else {
        if (r.driver_version != version) f.state = check_state::warning;
        f.message = fmt::format("driver {} {}, manifest expects {}", r.driver, r.driver_version, expected);
    }
    return f;
}

}  // namespace

std::vector<finding> compare_manifest(const node_inventory& inv, const node_manifest& m) {
    std::vector<finding> out;
    const auto add = [&](bool ok, check_state bad_state, std::string subject, std::string message) {
        out.push_back({ok ? check_state::ok : bad_state, "manifest", std::move(subject), std::move(message)});
    };
    if (m.gpus)
        add(std::ssize(inv.gpus) == *m.gpus, check_state::critical, "gpus",
            fmt::format("{} GPUs, manifest expects {}", inv.gpus.size(), *m.gpus));
    if (m.rails)
        add(std::ssize(inv.rails) == *m.rails, check_state::critical, "rails",
            fmt::format("{} rails, manifest expects {}", inv.rails.size(), *m.rails));
    for (const auto& r : inv.rails) {
        const auto subject = "rail " + r.name;
        if (m.rail_rate_gbit) {
            if (!r.rate_gbit) add(false, check_state::unknown, subject, fmt::format("link rate unknown, manifest expects {:g} Gbit/s", *m.rail_rate_gbit));
            else add(*r.rate_gbit == *m.rail_rate_gbit, check_state::critical, subject,
                     fmt::format("link rate {:g} Gbit/s, manifest expects {:g}", *r.rate_gbit, *m.rail_rate_gbit));
        }
        if (m.mtu) {
            if (!r.mtu) add(false, check_state::unknown, subject, fmt::format("MTU unknown, manifest expects {}", *m.mtu));
            else add(*r.mtu == *m.mtu, check_state::critical, subject, fmt::format("MTU {}, manifest expects {}", *r.mtu, *m.mtu));
        }
        if (m.nic_firmware && !r.rdma_device.empty()) {
            if (r.firmware.empty()) add(false, check_state::unknown, subject, fmt::format("firmware unreadable, manifest expects {}", *m.nic_firmware));
            else add(r.firmware == *m.nic_firmware, check_state::warning, subject,
                     fmt::format("firmware {}, manifest expects {}", r.firmware, *m.nic_firmware));
        }
        if (m.nic_driver && r.pci) out.push_back(compare_driver(r, *m.nic_driver));
    }
    if (m.gpu_driver) {
        if (inv.gpu_driver.empty()) add(false, check_state::unknown, "gpu_driver", fmt::format("GPU driver version unreadable (module/nvidia/version), manifest expects {}", *m.gpu_driver));
        else add(inv.gpu_driver == *m.gpu_driver, check_state::warning, "gpu_driver",
                 fmt::format("GPU driver {}, manifest expects {}", inv.gpu_driver, *m.gpu_driver));
    }
    return out;
}

inspect_result inspect(node_inventory inv, const std::optional<node_manifest>& expect, std::string host) {
    inspect_result r;
    r.host = std::move(host);
    for (const auto& g : inv.gpus) check_link(r.findings, inv, "GPU " + g.bus_id, g.bus_id, g.link, true);
    for (const auto& rail : inv.rails)
        if (rail.pci) check_link(r.findings, inv, fmt::format("rail {} ({})", rail.name, rail.pci->bus_id), rail.pci->bus_id, rail.link, false);
    check_bridge_links(r.findings, inv);
    check_rails(r.findings, inv);
    check_affinity(r.findings, inv);
    check_acs(r.findings, inv);
    if (expect)
        for (auto& f : compare_manifest(inv, *expect)) r.findings.push_back(std::move(f));
    r.state = check_state::ok;
    for (const auto& f : r.findings) r.state = core::worst(r.state, f.state);
    r.inventory = std::move(inv);
    return r;
}

}  // namespace meshperf::node
