// The RDMA transport's registry entry: available where an RDMA device is found (rdma_info),
// its devices in GET /v1/info's "rdma_devices"; sweeps over RC queue pairs (rdma_points), a
// collective over a queue pair per mesh peer (rdma_links).
#include "daemon/transports/rdma/rdma_links.hpp"
#include "daemon/transports/rdma/rdma_points.hpp"
#include "daemon/transports/registry.hpp"

namespace meshperf::daemon {

transport_entry rdma_transport() {
    transport_entry e;
    e.name = "rdma";
    e.inventory = [] {
        const auto info = rdma_info();
        return transport_inventory{info.value("available", false), info.value("reason", std::string()),
                                   {{"rdma_devices", info.value("devices", nlohmann::json::array())}}};
    };
    e.sweep.initiator = [](const daemon_context& ctx, transport::endpoint_address, const core::run_spec& spec,
                           std::uint64_t byte_cap, std::vector<int> cpus) {
        return make_rdma_initiator_transport(spec, byte_cap, std::move(cpus), ctx.sweep_hooks);
    };
    e.sweep.responder = [](daemon_context& ctx, const frame_channel&, const core::run_spec& spec, std::uint64_t byte_cap,
                           std::vector<int> cpus) {
        return make_rdma_responder_transport(spec, byte_cap, std::move(cpus), ctx.sweep_hooks);
    };
    e.collective.connect_links = connect_rdma_links;
    return e;
}

}  // namespace meshperf::daemon
