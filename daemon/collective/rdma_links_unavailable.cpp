// Collectives over RDMA in a meshperfd built without libibverbs: every entry point says so.
#include "daemon/collective/rdma_links.hpp"
#include "daemon/collective/step_fault.hpp"
#include "daemon/session/frame_channel.hpp"

namespace meshperf::daemon {

namespace {
constexpr const char* why = "RDMA support is not built into this meshperfd (libibverbs was not found at build time; "
                            "install libibverbs-dev and rebuild with -DMESHPERF_WITH_RDMA=ON)";
}

std::shared_ptr<transport::rdma::mesh_links> connect_rdma_links(const transport::mesh::connections&, const core::collective_spec&,
                                                                transport::clock::time_point,
                                                                std::shared_ptr<const transport::rdma::device_memory>) {
    throw session_error(why);
}

std::string rdma_memory_note(const transport::rdma::mesh_links&) { return {}; }

void count_rdma_port(const transport::rdma::mesh_links&, transport::link_counter_target&) {}

std::unique_ptr<transport::mesh::step_runner> open_rdma_step_runner(transport::mesh::connections&, const std::atomic<bool>&,
                                                                    core::dtype, const std::vector<std::span<std::byte>>&,
                                                                    transport::mesh::device_memory*) {
    throw collective_fault(why, std::nullopt);
}

}  // namespace meshperf::daemon
