#include "transport/rdma/mr.hpp"

#include "transport/rdma/error.hpp"
#include "transport/rdma/memlock.hpp"

#include <cerrno>
#include <fmt/format.h>

namespace meshperf::transport::rdma {

memory_region::memory_region(const protection_domain& pd, void* addr, std::size_t bytes,
                             int access, const std::string& device) {
    const std::string what = device + ": ibv_reg_mr";
    check_memlock(bytes, what);
    errno = 0;
    mr_ = ibv_reg_mr(pd.get(), addr, bytes, access);
    if (!mr_) {
        const int err = errno ? errno : ENOMEM;
        const std::string advice =
            (err == ENOMEM || err == EPERM || err == EAGAIN || err == EFAULT) ? memlock_advice()
                                                                              : std::string();
        throw_errno(err, advice.empty() ? fmt::format("{} of {} bytes", what, bytes)
                                        : fmt::format("{} of {} bytes: {}", what, bytes, advice));
    }
}

memory_region::~memory_region() {
    if (mr_) ibv_dereg_mr(mr_);
}

}  // namespace meshperf::transport::rdma
