// Collectives over RDMA in a meshperfd built without libibverbs: every entry point says so.
#include "daemon/collective/rdma_steps.hpp"
#include "daemon/session/frame_channel.hpp"

namespace meshperf::daemon {

namespace {
constexpr const char* why = "RDMA support is not built into this meshperfd (libibverbs was not found at build time; "
                            "install libibverbs-dev and rebuild with -DMESHPERF_WITH_RDMA=ON)";
}

std::shared_ptr<collective_rdma_links> connect_rdma_links(const collective_mesh&, const core::collective_spec&,
                                                          transport::clock::time_point,
                                                          std::shared_ptr<const transport::rdma::device_memory>) {
    throw session_error(why);
}

std::string rdma_memory_note(const collective_rdma_links&) { return {}; }

std::unique_ptr<step_runner> make_rdma_step_runner(collective_mesh&, const std::atomic<bool>&, core::dtype,
                                                   const std::vector<std::span<std::byte>>&, collective_device_memory*) {
    throw collective_fault(why, std::nullopt);
}

}  // namespace meshperf::daemon
