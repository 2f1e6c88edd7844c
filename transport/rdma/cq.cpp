#include "transport/rdma/cq.hpp"

#include "transport/rdma/error.hpp"
#include "transport/rdma/memlock.hpp"

#include <cerrno>
#include <fmt/format.h>

namespace meshperf::transport::rdma {

completion_queue::completion_queue(const device_context& ctx, int entries, ibv_comp_channel* channel) {
    errno = 0;
    cq_ = ibv_create_cq(ctx.get(), entries, nullptr, channel, 0);
    if (!cq_) {
        const int err = errno ? errno : ENOMEM;
        const std::string advice = err == ENOMEM ? memlock_advice() : std::string();
        throw_errno(err, fmt::format("{}: ibv_create_cq of {} entries{}{}", ctx.name(), entries,
                                     advice.empty() ? "" : ": ", advice));
    }
}

completion_queue::~completion_queue() {
    if (cq_) ibv_destroy_cq(cq_);
}

}  // namespace meshperf::transport::rdma
