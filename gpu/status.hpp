#pragma once
/// Whether CUDA can run on this node, and if not, why (the probe and its verdict:
/// availability.hpp, included here for the callers), and require_device, which turns a
/// verdict other than ok, or a device that does not exist, into an error of
/// cuda_category() (error.hpp). Plain C++ (no CUDA headers): the daemon and CLI include it.
#include "gpu/availability.hpp"

namespace meshperf::gpu {

/// Throws std::system_error (category cuda_category()) unless CUDA is usable and device
/// is an index below the device count. The message is cuda_availability().message, or
/// "cuda:N does not exist: this node has M CUDA devices".
void require_device(int device);

}  // namespace meshperf::gpu
