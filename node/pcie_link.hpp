#pragma once
/// A PCI function's link as sysfs shows it: current_link_width / max_link_width (lanes) and
/// current_link_speed / max_link_speed ("16.0 GT/s PCIe"). A value the kernel does not give
/// (no file, "Unknown", unreadable) stays empty: it is reported as unknown, never as a pass.
#include <filesystem>
#include <optional>
#include <string>

namespace meshperf::node {

/// One PCI function's link.
struct pcie_link {
    std::optional<int> current_width;  ///< lanes, e.g. 8
    std::optional<int> max_width;      ///< lanes the link can train to, e.g. 16
    std::optional<double> current_gts; ///< GT/s per lane, e.g. 32
    std::optional<double> max_gts;
    /// Whether sysfs has any of the four files. The kernel shows them for every PCIe
    /// function, so none at all means a conventional PCI or virtual function (a virtio NIC
    /// in a VM): no link to check, which is not the same as a link it cannot read.
    bool has_attributes = false;
};

/// Reads SYSFS/bus/pci/devices/BUS_ID/{current,max}_link_{width,speed}.
pcie_link read_pcie_link(const std::filesystem::path& sysfs_root, const std::string& bus_id);

/// "x16 at 32 GT/s (can do x16 at 32 GT/s)", with "?" for what is unknown.
std::string describe(const pcie_link&);

/// "x16 at 32 GT/s": what the link can train to, with "?" for what is unknown.
std::string describe_max(const pcie_link&);

/// The link as far as both of its ends allow: `l` with its max width and speed lowered to
/// those of `partner` (the port at the other end of the same link) where both are known.
/// A link trains to the widest width and fastest rate both ports support (PCIe Base
/// Specification, link training), so a GPU that can do x16 below a port that can do x8
/// is not downgraded at x8. An end whose own max is unknown stays unknown.
pcie_link capped_by(pcie_link l, const pcie_link& partner);

/// Whether `partner` lowers `l`'s max width or speed (capped_by changes something).
bool capped(const pcie_link& l, const pcie_link& partner);

/// Whether all four values are known.
bool complete(const pcie_link&);

/// Whether fewer lanes are trained than the link can do (false when either is unknown).
bool width_downgraded(const pcie_link&);

/// Whether the link runs slower than it can (false when either is unknown).
bool speed_downgraded(const pcie_link&);

}  // namespace meshperf::node
