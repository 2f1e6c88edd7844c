#include "transport/rdma/device_registration.hpp"

#include "core/error.hpp"
#include "transport/rdma/error.hpp"

#include <cerrno>
#include <fmt/format.h>
#include <system_error>

namespace meshperf::transport::rdma {
namespace {

// errno of a failed export, for the failure explanation (the driver's own words are lost;
// the export error is logged in the message's "export" part instead).
int errno_of(const std::system_error& e) {
    return e.code().category() == std::generic_category() || e.code().category() == std::system_category()
               ? e.code().value()
               : EOPNOTSUPP;
}

}  // namespace

bool verbs_support_dmabuf() noexcept {
#ifdef MESHPERF_HAVE_IBV_REG_DMABUF_MR
    return true;
#else
    return false;
#endif
}

device_registration register_device_memory(const protection_domain& pd, device_allocation& memory,
                                           core::gpu_registration_caps caps, int access, const std::string& where) {
    caps.verbs_dmabuf = verbs_support_dmabuf();
    const auto plan = core::plan_gpu_registration(caps, core::gpu_registration_preference::automatic);
    if (plan.attempts.empty()) throw core::spec_error(fmt::format("{}: {}", where, plan.error));
    device_registration out;
    out.notes = plan.notes;
    std::string export_error;
    const auto outcome = core::try_registration_paths(plan, [&](core::gpu_registration_path path) -> int {
        errno = 0;
        if (path == core::gpu_registration_path::peermem) {
            out.mr = ibv_reg_mr(pd.get(), memory.data(), memory.size(), access);
            return out.mr ? 0 : (errno ? errno : EFAULT);
        }
#ifdef MESHPERF_HAVE_IBV_REG_DMABUF_MR
        try {
            const auto r = memory.dmabuf();
            out.mr = ibv_reg_dmabuf_mr(pd.get(), r.offset, r.length, r.iova, r.fd, access);
            return out.mr ? 0 : (errno ? errno : EOPNOTSUPP);
        } catch (const std::system_error& e) {
            export_error = e.what();
            return errno_of(e);
        }
#else
        return EOPNOTSUPP;  // not reached: the plan leaves dma-buf out without verbs support
#endif
    });
    if (!outcome.used) {
        std::string msg = fmt::format("{}: {}", where, core::explain_registration_failure(caps, outcome.failures));
        if (!export_error.empty()) msg += fmt::format(" (dma-buf export: {})", export_error);
        throw_errno(outcome.failures.empty() ? EOPNOTSUPP : outcome.failures.back().error_number, msg);
    }
    out.path = *outcome.used;
    return out;
}

}  // namespace meshperf::transport::rdma
