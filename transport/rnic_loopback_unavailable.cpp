// RNIC loopback in a build without libibverbs: nothing to measure, and it says why.
#include "transport/rnic_loopback.hpp"

namespace meshperf::transport {

rnic_loopback_survey measure_rnic_loopback(const rnic_loopback_options&) {
    return {{}, "RDMA support is not built into this meshperf (libibverbs was not found at build time; install "
                "libibverbs-dev and rebuild with -DMESHPERF_WITH_RDMA=ON)"};
}

}  // namespace meshperf::transport
