#pragma once
/// How this transport registers memory with a provider, from the provider's mr_mode bits
/// (fi_mr(3)) alone: no provider is special-cased by name. Pure functions, unit tested on
/// hand-made fi_info structures.
#include <cstdint>
#include <string>
#include <vector>

namespace meshperf::transport::ofi {

/// The mr_mode bits meshperf can honour; the fi_getinfo hints offer these, so a provider
/// that needs another one (FI_MR_RAW, FI_MR_MMU_NOTIFY) is never returned.
std::uint64_t supported_mr_mode(bool device_memory);

/// What a provider's mr_mode asks of the buffers an endpoint uses.
struct registration_plan {
    /// Buffers must be registered, and their descriptors passed, to send or receive from
    /// them (FI_MR_LOCAL; also FI_MR_HMEM for device memory).
    bool register_local = false;
    /// Buffers the peer reads or writes must be registered (any RMA op).
    bool register_remote = false;
    /// A region must be bound to the endpoint and enabled before use (FI_MR_ENDPOINT).
    bool bind_to_endpoint = false;
    /// The peer addresses a region by its virtual address (FI_MR_VIRT_ADDR), else by offset 0.
    bool remote_virtual_address = false;
    /// The provider picks each region's key (FI_MR_PROV_KEY), else meshperf requests one.
    bool provider_keys = false;
};

/// The plan for buffers in host (or, `device_memory`, GPU) memory used with or without RMA.
registration_plan plan_registration(std::uint64_t mr_mode, bool rma, bool device_memory);

/// The mr_mode bits by name, as fi_info prints them: ["FI_MR_LOCAL", "FI_MR_VIRT_ADDR"].
std::vector<std::string> mr_mode_names(std::uint64_t mr_mode);

}  // namespace meshperf::transport::ofi
