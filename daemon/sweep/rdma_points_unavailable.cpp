// RDMA sessions in a meshperfd built without libibverbs: every entry point says so.
#include "core/error.hpp"
#include "daemon/sweep/rdma_points.hpp"

namespace meshperf::daemon {

namespace {
constexpr const char* why = "RDMA support is not built into this meshperfd (libibverbs was not found at build time; "
                            "install libibverbs-dev and rebuild with -DMESHPERF_WITH_RDMA=ON)";
}

nlohmann::json rdma_info() { return {{"available", false}, {"reason", why}, {"devices", nlohmann::json::array()}}; }

std::unique_ptr<initiator_transport> make_rdma_initiator_transport(const core::run_spec&, std::uint64_t,
                                                                   std::vector<int>, const sweep_test_hooks&) {
    throw core::spec_error(why);
}

std::unique_ptr<responder_transport> make_rdma_responder_transport(const core::run_spec&, std::uint64_t,
                                                                   std::vector<int>, const sweep_test_hooks&) {
    throw session_error(why);
}

}  // namespace meshperf::daemon
