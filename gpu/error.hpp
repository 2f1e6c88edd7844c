#pragma once
/// Error categories for CUDA: cudaError_t values (runtime API) and CUresult values (driver
/// API). Setup errors are std::system_error with one of these and a what() naming the
/// operation: "cudaMalloc(1 GiB) on cuda:0: out of memory". Plain C++ (no CUDA headers).
#include <string>
#include <system_error>

namespace meshperf::gpu {

/// Category of cudaError_t values. message() of cudaErrorInsufficientDriver and
/// cudaErrorNoDevice is the classified sentence of cuda_status ("no NVIDIA driver: ...",
/// "NVIDIA driver too old for this CUDA runtime: ...", "no CUDA device: ...").
const std::error_category& cuda_category() noexcept;

/// Category of CUresult values (driver API reached through cudaGetDriverEntryPointByVersion).
const std::error_category& cu_category() noexcept;

/// An error code for a cudaError_t value.
inline std::error_code make_cuda_error_code(int cuda_error) noexcept { return {cuda_error, cuda_category()}; }

/// An error code for a CUresult value.
inline std::error_code make_cu_error_code(int cu_result) noexcept { return {cu_result, cu_category()}; }

/// Throws std::system_error(make_cuda_error_code(cuda_error), what).
[[noreturn]] void throw_cuda_error(int cuda_error, const std::string& what);

/// Throws std::system_error(make_cu_error_code(cu_result), what).
[[noreturn]] void throw_cu_error(int cu_result, const std::string& what);

}  // namespace meshperf::gpu
