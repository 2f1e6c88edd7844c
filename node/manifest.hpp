#pragma once
/// A node's manifest (`meshperf inspect --expect node.toml`): what the node should have,
/// compared with what sysfs shows. Every key is optional; an unknown key is an error, so a
/// typo never turns into a check silently not made.
///
///     gpus = 8                  # NVIDIA GPUs on the PCI bus
///     rails = 8                 # rails selected (the daemon's [rails] table)
///     rail_rate_gbit = 400      # every rail's link rate, Gbit/s
///     mtu = 4200                # every rail's MTU
///     nic_firmware = "28.39.1002"   # every RDMA rail's fw_ver
///     nic_driver = "mlx5_core 24.10-1.1.4"  # every rail's driver and its module version
///     gpu_driver = "550.54.15"      # SYSFS/module/nvidia/version
///     loopback_floor_gbit = 350     # inspect --loopback: each RDMA device's floor, Gbit/s
///     h2d_floor_gb_per_s = 50       # local --all-gpus: each GPU's host->GPU copy floor, GB/s
///     d2h_floor_gb_per_s = 50       #   and GPU->host, with every GPU copying at once
#include "node/inventory.hpp"

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace meshperf::node {

/// What the node should have; an empty field is not checked.
struct node_manifest {
    std::optional<int> gpus;
    std::optional<int> rails;
    std::optional<double> rail_rate_gbit;
    std::optional<int> mtu;
    std::optional<std::string> nic_firmware;
    /// "NAME VERSION": the driver of every rail with a device (SYSFS/class/net/IF/device/driver)
    /// and its module's version (SYSFS/module/NAME/version), one space between.
    std::optional<std::string> nic_driver;
    std::optional<std::string> gpu_driver;
    std::optional<double> loopback_floor_gbit;  ///< inspect --loopback: below it, CRITICAL
    /// `local --all-gpus --expect`: each GPU's h2d / d2h figure at the largest size, every
    /// GPU copying at once, in GB/s (10^9 B/s); below it, CRITICAL (node/copy_floors.hpp).
    std::optional<double> h2d_floor_gb_per_s, d2h_floor_gb_per_s;
};

/// Parses TOML text; `origin` names it in messages. Throws core::spec_error naming the key
/// ("node.toml: unknown key 'gpu' (known: gpus, rails, ...)", "node.toml: gpus must be an
/// integer 0 to 1024, not \"8\"").
node_manifest parse_manifest(std::string_view text, const std::string& origin);

/// Reads and parses a file. Throws core::spec_error when it cannot be read.
node_manifest load_manifest(const std::filesystem::path& file);

/// The manifest as JSON, the body of POST /v1/inspect's "expect" (the same keys).
nlohmann::json to_json(const node_manifest&);

/// The reverse; throws core::spec_error naming the key for an unknown key or a wrong type.
node_manifest manifest_from_json(const nlohmann::json&);

}  // namespace meshperf::node
