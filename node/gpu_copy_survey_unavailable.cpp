// inspect --gpu-copies where meshperf is built without the CUDA toolkit: says why nothing
// is measured (a daemon built with it still can: meshperf inspect HOST --gpu-copies).
#include "node/gpu_copy_check.hpp"

namespace meshperf::node {

gpu_copy_survey survey_gpu_copies(std::stop_token) {
    return {nullptr,
            "this meshperf was built without CUDA (nvcc was not found at build time), so it cannot copy to the GPUs: "
            "rebuild with -DMESHPERF_WITH_CUDA=ON, or inspect through a meshperfd built with it",
            false};
}

}  // namespace meshperf::node
