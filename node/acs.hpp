#pragma once
/// PCIe Access Control Services on a bridge, from its configuration space
/// (SYSFS/bus/pci/devices/BUS_ID/config). With any of the redirect bits set, peer-to-peer
/// requests and completions below the bridge are sent up to the root complex, so GPUDirect
/// RDMA between a GPU and a NIC under one switch crosses the CPU (NCCL's troubleshooting
/// guide: disable ACS for GPUDirect). The extended configuration space (past byte 256)
/// is readable by root only; what cannot be read is `unknown`, never a pass.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace meshperf::node {

/// PCIe extended capability id of ACS.
inline constexpr std::uint16_t acs_capability_id = 0x000D;
/// ACS Control register bits that redirect traffic upstream.
inline constexpr std::uint16_t acs_p2p_request_redirect = 1u << 2;
inline constexpr std::uint16_t acs_p2p_completion_redirect = 1u << 3;
inline constexpr std::uint16_t acs_upstream_forwarding = 1u << 4;

/// What one bridge's ACS says.
struct acs_state {
    enum class kind {
        unknown,   ///< the configuration space could not be read far enough: `why` says why
        absent,    ///< no ACS capability: nothing redirects
        disabled,  ///< ACS present, no redirect bit set
        redirects, ///< ACS present with a redirect bit set
    } state = kind::unknown;
    std::uint16_t control = 0;     ///< the ACS Control register, when present
    std::uint16_t cap_offset = 0;  ///< where the capability sits, when present
    std::string why;               ///< for unknown
};

/// Walks the extended capability list of a configuration space image from offset 0x100.
/// Shorter than 0x104 bytes (what a non-root reader gets: 64 or 256 bytes) is unknown; a
/// list that loops or points outside the image is unknown.
acs_state parse_acs(std::span<const std::uint8_t> config);

/// Reads SYSFS/bus/pci/devices/BUS_ID/config and parses it.
acs_state read_acs(const std::filesystem::path& sysfs_root, const std::string& bus_id);

/// "P2P Request Redirect, P2P Completion Redirect" for the redirect bits set in `control`.
std::string redirect_bits(std::uint16_t control);

}  // namespace meshperf::node
