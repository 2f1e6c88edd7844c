#include "core/gpu_registration.hpp"

#include "core/error.hpp"

#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <system_error>

namespace meshperf::core {
namespace {

constexpr std::string_view peermem_fix =
    "load nvidia-peermem (modprobe nvidia-peermem; it ships with the NVIDIA driver)";
constexpr std::string_view dmabuf_fix =
    "use a dma-buf capable stack (NVIDIA open kernel modules R515 or newer, Linux 5.12 or "
    "newer, rdma-core 34 or newer)";

// Why dma-buf cannot be used, or "" when it can.
std::string dmabuf_gap(const gpu_registration_caps& c) {
    std::vector<std::string_view> missing;
    if (!c.gpu_dmabuf)
        missing.push_back("the GPU driver does not export dma-buf (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED "
                          "is 0: proprietary kernel module, or a driver older than R515)");
    if (!c.kernel_dmabuf) missing.push_back("the kernel is older than 5.12");
    if (!c.verbs_dmabuf) missing.push_back("rdma-core lacks ibv_reg_dmabuf_mr (needs rdma-core 34)");
    return fmt::format("{}", fmt::join(missing, "; "));
}

// Why nvidia-peermem cannot be used, or "" when it can.
std::string peermem_gap(const gpu_registration_caps& c) {
    std::vector<std::string_view> missing;
    if (!c.peermem_loaded) missing.push_back("the nvidia_peermem module is not loaded");
    if (!c.gpudirect_rdma)
        missing.push_back("the GPU does not support GPUDirect RDMA (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED is 0)");
    return fmt::format("{}", fmt::join(missing, "; "));
}

std::string_view call_of(gpu_registration_path p) {
    return p == gpu_registration_path::dmabuf ? "ibv_reg_dmabuf_mr" : "ibv_reg_mr on the device pointer";
}

}  // namespace

std::string_view to_string(gpu_registration_path p) {
    return p == gpu_registration_path::dmabuf ? "dmabuf" : "peermem";
}

gpu_registration_preference parse_gpu_registration_preference(std::string_view s) {
    if (s == "auto") return gpu_registration_preference::automatic;
    if (s == "dmabuf") return gpu_registration_preference::dmabuf;
    if (s == "peermem") return gpu_registration_preference::peermem;
    throw spec_error(fmt::format("unknown GPU registration '{}': use auto, dmabuf or peermem", s));
}

bool kernel_supports_rdma_dmabuf(std::string_view release) {
    int major = 0, minor = 0;
    const char* p = release.data();
    const char* end = release.data() + release.size();
    auto r = std::from_chars(p, end, major);
    if (r.ec != std::errc{} || r.ptr == end || *r.ptr != '.') return false;
    r = std::from_chars(r.ptr + 1, end, minor);
    if (r.ec != std::errc{}) return false;
    return major > 5 || (major == 5 && minor >= 12);
}

gpu_registration_plan plan_gpu_registration(const gpu_registration_caps& caps,
                                            gpu_registration_preference preference) {
    gpu_registration_plan plan;
    const std::string no_dmabuf = dmabuf_gap(caps);
    const std::string no_peermem = peermem_gap(caps);
    const bool want_dmabuf = preference != gpu_registration_preference::peermem;
    const bool want_peermem = preference != gpu_registration_preference::dmabuf;

    if (want_dmabuf) {
        if (no_dmabuf.empty()) plan.attempts.push_back(gpu_registration_path::dmabuf);
        else plan.notes.push_back("dma-buf registration not possible: " + no_dmabuf);
    }
    if (want_peermem) {
        if (no_peermem.empty()) plan.attempts.push_back(gpu_registration_path::peermem);
        else plan.notes.push_back("nvidia-peermem registration not possible: " + no_peermem);
    }
    if (!plan.attempts.empty()) return plan;

    switch (preference) {
    case gpu_registration_preference::dmabuf:
        plan.error = fmt::format("GPU memory cannot be registered through dma-buf: {}. Fix: {}, "
                                 "or allow the nvidia-peermem path (--gpu-registration auto)",
                                 no_dmabuf, dmabuf_fix);
        break;
    case gpu_registration_preference::peermem:
        plan.error = fmt::format("GPU memory cannot be registered through nvidia-peermem: {}. Fix: {}, "
                                 "or allow the dma-buf path (--gpu-registration auto)",
                                 no_peermem, peermem_fix);
        break;
    case gpu_registration_preference::automatic:
        plan.error = fmt::format("GPU memory cannot be registered with the RDMA NIC: dma-buf is not "
                                 "available ({}) and nvidia-peermem is not available ({}). Fix: {}, "
                                 "or {}; or measure with --memory host",
                                 no_dmabuf, no_peermem, peermem_fix, dmabuf_fix);
        break;
    }
    return plan;
}

std::string explain_registration_failure(const gpu_registration_caps& caps,
                                         const std::vector<gpu_registration_failure>& failures) {
    std::vector<std::string> parts;
    bool tried_dmabuf = false, tried_peermem = false;
    for (const auto& f : failures) {
        (f.path == gpu_registration_path::dmabuf ? tried_dmabuf : tried_peermem) = true;
        parts.push_back(f.error_number != 0
                            ? fmt::format("{} failed: {} (errno {})", call_of(f.path),
                                          std::generic_category().message(f.error_number), f.error_number)
                            : fmt::format("{} failed", call_of(f.path)));
    }
    std::string msg = "GPU memory could not be registered with the RDMA NIC";
    if (!parts.empty()) msg += fmt::format(": {}", fmt::join(parts, "; "));
    // Name the fix for the path that was not there, then for the one that failed.
    std::vector<std::string_view> fixes;
    if (!tried_peermem || !caps.peermem_loaded) fixes.push_back(peermem_fix);
    if (!tried_dmabuf) fixes.push_back(dmabuf_fix);
    if (tried_peermem && caps.peermem_loaded)
        fixes.push_back("check that nvidia-peermem matches the running NVIDIA driver (dmesg)");
    if (tried_dmabuf)
        fixes.push_back("check that the NIC driver supports dma-buf (mlx5 with Linux 5.12+) and that "
                        "RLIMIT_MEMLOCK is unlimited");
    msg += fmt::format(". Fix: {}; or measure with --memory host", fmt::join(fixes, ", or "));
    return msg;
}

gpu_registration_outcome try_registration_paths(const gpu_registration_plan& plan,
                                                const std::function<int(gpu_registration_path)>& attempt) {
    gpu_registration_outcome out;
    for (const auto path : plan.attempts) {
        const int err = attempt(path);
        if (err == 0) {
            out.used = path;
            break;
        }
        out.failures.push_back({path, err});
    }
    return out;
}

}  // namespace meshperf::core
