#include "gpu/error.hpp"

#include "gpu/detail/driver_api.hpp"
#include "gpu/availability.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

namespace meshperf::gpu {
namespace {

class cuda_error_category final : public std::error_category {
public:
    const char* name() const noexcept override { return "cuda"; }
    std::string message(int ev) const override {
        // The availability errors get the classified sentence: error 35 means "no driver" or
        // "driver too old" depending on whether a driver is there, which the runtime's own
        // text ("driver version is insufficient") does not tell.
        if (ev == cudaErrorInsufficientDriver || ev == cudaErrorNoDevice || ev == cudaErrorSystemDriverMismatch ||
            ev == cudaErrorInitializationError) {
            const auto& s = cuda_availability();
            if (!s.ok()) return s.message;
        } else if (ev != cudaSuccess) {
            const auto& s = cuda_availability();
            if (!s.ok() && ev == s.error) return s.message;  // the probe's own failure
        }
        const auto e = static_cast<cudaError_t>(ev);
        return fmt::format("{} ({})", cudaGetErrorString(e), cudaGetErrorName(e));
    }
};

class cu_error_category final : public std::error_category {
public:
    const char* name() const noexcept override { return "cuda driver"; }
    std::string message(int ev) const override {
        const auto& api = detail::driver();
        const char* text = nullptr;
        const char* name = nullptr;
        if (api.get_error_string) api.get_error_string(static_cast<CUresult>(ev), &text);
        if (api.get_error_name) api.get_error_name(static_cast<CUresult>(ev), &name);
        if (text && name) return fmt::format("{} ({})", text, name);
        return fmt::format("CUDA driver error {}", ev);
    }
};

}  // namespace

const std::error_category& cuda_category() noexcept {
    static const cuda_error_category c;
    return c;
}

const std::error_category& cu_category() noexcept {
    static const cu_error_category c;
    return c;
}

void throw_cuda_error(int cuda_error, const std::string& what) {
    throw std::system_error(make_cuda_error_code(cuda_error), what);
}

void throw_cu_error(int cu_result, const std::string& what) {
    throw std::system_error(make_cu_error_code(cu_result), what);
}

}  // namespace meshperf::gpu
