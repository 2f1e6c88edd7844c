#include "transport/rdma/comp_channel.hpp"

#include "transport/rdma/error.hpp"

#include <cerrno>
#include <fcntl.h>
#include <fmt/format.h>

namespace meshperf::transport::rdma {

completion_channel::completion_channel(const device_context& ctx) {
    errno = 0;
    ch_ = ibv_create_comp_channel(ctx.get());
    if (!ch_) throw_errno(errno ? errno : ENOMEM, fmt::format("{}: ibv_create_comp_channel", ctx.name()));
    const int flags = fcntl(ch_->fd, F_GETFL);
    if (flags < 0 || fcntl(ch_->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        const int err = errno;
        ibv_destroy_comp_channel(ch_);
        ch_ = nullptr;
        throw_errno(err, fmt::format("{}: making the completion channel non-blocking", ctx.name()));
    }
}

completion_channel::~completion_channel() {
    if (ch_) ibv_destroy_comp_channel(ch_);
}

int completion_channel::drain() noexcept {
    int n = 0;
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    while (ibv_get_cq_event(ch_, &cq, &context) == 0) {
        ibv_ack_cq_events(cq, 1);
        ++n;
    }
    return n;
}

}  // namespace meshperf::transport::rdma
