// RDMA sessions in a meshperfd built without libibverbs: every entry point says so.
#include "core/error.hpp"
#include "daemon/rdma_session.hpp"

namespace meshperf::daemon {

namespace {
constexpr const char* why = "RDMA support is not built into this meshperfd (libibverbs was not found at build time; "
                            "install libibverbs-dev and rebuild with -DMESHPERF_WITH_RDMA=ON)";
}

nlohmann::json rdma_info() { return {{"available", false}, {"reason", why}, {"devices", nlohmann::json::array()}}; }

void execute_rdma_points(daemon_context&, frame_channel&, core::run_result&, const event_sink&, const std::atomic<bool>&,
                         std::uint64_t, const run_placement&) {
    throw core::spec_error(why);
}

void serve_rdma_points(daemon_context&, frame_channel&, const core::run_spec&, std::uint64_t, const run_placement&) {
    throw session_error(why);
}

}  // namespace meshperf::daemon
