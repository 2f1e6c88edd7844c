#include "transport/rdma/pd.hpp"

#include "transport/rdma/error.hpp"

#include <cerrno>

namespace meshperf::transport::rdma {

protection_domain::protection_domain(const device_context& ctx) {
    errno = 0;
    pd_ = ibv_alloc_pd(ctx.get());
    if (!pd_) throw_errno(errno ? errno : ENOMEM, ctx.name() + ": ibv_alloc_pd");
}

protection_domain::~protection_domain() {
    if (pd_) ibv_dealloc_pd(pd_);
}

}  // namespace meshperf::transport::rdma
