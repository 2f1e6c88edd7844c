#pragma once
/// RNIC loopback: each RDMA device of this node moves data to itself, two endpoints on one
/// port with their QPs connected to each other, RDMA WRITE for a fraction of a second. The
/// data crosses the host's PCIe link to the NIC and back (on Soft-RoCE, the kernel's rxe
/// loop), so a NIC that cannot reach its own port rate here, or fails, is faulty before any
/// switch is involved (MegaScale's and Azure's node checks run it before a job). `meshperf
/// inspect --loopback` judges the readings against the manifest's floor (node/loopback_check.hpp).
/// Without RDMA in the build, every call says so.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::transport {

/// How each device is exercised.
struct rnic_loopback_options {
    std::uint64_t message_bytes = 65536;  ///< RDMA WRITE size
    double seconds = 0.5;                 ///< per device
    std::uint32_t qps = 2;                ///< QPs per endpoint, one thread each side
};

/// One device's loopback.
struct rnic_loopback_reading {
    std::string device;                   ///< "mlx5_0", "rxe0"
    unsigned port = 1;
    std::optional<double> port_rate_gbit; ///< the port's signalling rate, when known
    std::optional<double> gbit_per_s;     ///< measured (positive, finite); empty when it could not be
    std::uint64_t bytes = 0;              ///< written and completed in `seconds`
    double seconds = 0;                   ///< first post to last completion
    std::string error;                    ///< why there is no figure, or what went wrong
    /// The error is the device's (it failed, or corrupted data): CRITICAL. Otherwise the
    /// circumstances' (the daemon was measuring, the memlock limit): UNKNOWN.
    bool device_fault = false;
};

/// Every device with an ACTIVE port, one port each (the first active one), one after another.
struct rnic_loopback_survey {
    std::vector<rnic_loopback_reading> readings;
    std::string none_because;  ///< set when there is no reading: no device, RDMA not built
};

/// Runs the loopback on every device (about `seconds` each). Never throws for a device's
/// failure (its reading says it); throws core::spec_error for options out of range.
rnic_loopback_survey measure_rnic_loopback(const rnic_loopback_options&);

/// {"device", "port", "port_rate_gbit", "gbit_per_s", "bytes", "seconds", "error", "device_fault"}
/// (the CLI prints a daemon's inspection as it comes, so nothing reads it back).
nlohmann::json to_json(const rnic_loopback_reading&);

}  // namespace meshperf::transport
