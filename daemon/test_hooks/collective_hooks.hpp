#pragma once
/// What a test may ask of a daemon's collective ranks, from the daemon's environment
/// (daemon/main.cpp); all off in service.

namespace meshperf::daemon {

struct collective_test_hooks {
    /// MESHPERF_TEST_CORRUPT_COLLECTIVE=1: the ranks corrupt what they send, so tests can see
    /// --verify catch it.
    bool corrupt = false;
    /// MESHPERF_TEST_EMULATED_GPU=1: `--memory cuda:N` is served from a GPU emulated in host
    /// memory (daemon/test_hooks/emulated_gpu.hpp), so the device paths run where no GPU is.
    bool emulated_gpu = false;
};

}  // namespace meshperf::daemon
