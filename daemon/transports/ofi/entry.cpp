// The libfabric transport's registry entry: available where libfabric finds a reliable-
// datagram provider (ofi_info), its providers and domains in GET /v1/info's "ofi"; sweeps
// over FI_EP_RDM endpoints (ofi_points), a collective over one endpoint per rank (ofi_links).
#include "daemon/transports/ofi/ofi_links.hpp"
#include "daemon/transports/ofi/ofi_points.hpp"
#include "daemon/transports/registry.hpp"

namespace meshperf::daemon {

transport_entry ofi_transport() {
    transport_entry e;
    e.name = "ofi";
    // Asked in a child process: libfabric keeps the RDMA devices it enumerates (verbs, EFA)
    // open until the process exits, which would pin their drivers under an idle meshperfd.
    e.inventory = [] { return inventory_from_child("ofi", std::chrono::seconds{30}); };
    e.inventory_in_process = [] {
        auto info = ofi_info();
        const bool available = info.value("available", false);
        auto reason = info.value("reason", std::string());
        info.erase("available");
        info.erase("reason");
        return transport_inventory{available, std::move(reason), {{"ofi", std::move(info)}}};
    };
    e.check_spec = check_ofi_spec;
    e.sweep.initiator = [](const daemon_context& ctx, transport::endpoint_address, const core::run_spec& spec,
                           std::uint64_t byte_cap, std::vector<int> cpus) {
        return make_ofi_initiator_transport(spec, byte_cap, std::move(cpus), ctx.sweep_hooks);
    };
    e.sweep.responder = [](daemon_context& ctx, const frame_channel&, const core::run_spec& spec, std::uint64_t byte_cap,
                           std::vector<int> cpus) {
        return make_ofi_responder_transport(spec, byte_cap, std::move(cpus), ctx.sweep_hooks);
    };
    e.collective.connect_links = connect_ofi_links;
    return e;
}

}  // namespace meshperf::daemon
