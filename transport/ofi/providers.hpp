#pragma once
/// What libfabric offers on this host (fi_getinfo), for GET /v1/info and for choosing the
/// provider two daemons share.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::transport::ofi {

/// One fi_getinfo answer for a reliable-datagram endpoint.
struct provider_domain {
    std::string provider;  ///< "tcp;ofi_rxm", "efa", "shm"
    std::string fabric;    ///< "127.0.0.1/32", "efa", "cxi"
    std::string domain;    ///< "lo", "rdmap16s27-rdm", "cxi0"
    std::string endpoint_type;              ///< "FI_EP_RDM"
    std::vector<std::string> capabilities;  ///< of MSG, TAGGED, RMA, HMEM
    std::vector<std::string> mr_mode;       ///< mr_mode_names
    std::string device;  ///< the EFA, CXI or RDMA device behind the domain where sysfs names it; else empty
};
nlohmann::json to_json(const provider_domain&);

/// Every provider domain with FI_EP_RDM and FI_MSG or FI_TAGGED here, shm included (which
/// fi_getinfo lists only when asked by name). Empty when libfabric finds none.
std::vector<provider_domain> list_provider_domains();

/// The core provider of a (possibly layered) provider name: "tcp;ofi_rxm" -> "tcp".
std::string core_provider(std::string_view provider);

/// The distinct core providers of `domains`, in the order the default choice prefers them
/// (efa, cxi, verbs, tcp, then the others by name).
std::vector<std::string> provider_names(const std::vector<provider_domain>& domains);

/// Providers the default choice may take: those of a network between hosts (efa, cxi,
/// verbs, tcp), best first. shm, udp, sockets and the others are used only when asked by name.
const std::vector<std::string_view>& preferred_providers();

/// The provider a run uses: `requested` when both sides have it, else (requested empty) the
/// first of preferred_providers() both have. Throws core::spec_error naming both lists.
std::string choose_provider(std::string_view requested, const std::vector<std::string>& initiator,
                            const std::vector<std::string>& peer);

/// The device behind a provider's domain name where sysfs under `sysfs_root` names it: the
/// domain itself or the domain less a "-rdm"/"-dgram"/"-xrc" suffix, under class/infiniband
/// (EFA, verbs) or class/cxi (Slingshot). Empty when none is there.
std::string device_of_domain(std::string_view domain, const std::filesystem::path& sysfs_root = "/sys");

}  // namespace meshperf::transport::ofi
