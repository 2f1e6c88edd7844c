// meshperf local without a HOST, in a meshperf built without the CUDA toolkit: says why it
// cannot sweep here (a HOST's daemon still can).
#include "client/support/daemon_client.hpp"
#include "client/support/local_here.hpp"

namespace meshperf::client {

nlohmann::json sweep_here(const core::local_copy_spec&, bool) {
    throw client_error(exit_run_failed, "this meshperf was built without CUDA (nvcc was not found at build time), so it cannot "
                                        "sweep copies here: give a HOST whose meshperfd has GPU support (meshperf local HOST), "
                                        "or rebuild with -DMESHPERF_WITH_CUDA=ON on a machine with the CUDA toolkit");
}

}  // namespace meshperf::client
