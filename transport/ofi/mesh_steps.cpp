// A collective step over libfabric (mesh_steps.hpp).
#include "transport/ofi/mesh_steps.hpp"

#include "core/collective/reduce_ops.hpp"
#include "transport/ofi/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <poll.h>
#include <rdma/fi_errno.h>
#include <sys/socket.h>
#include <thread>

namespace meshperf::transport::ofi {
namespace {

using clock = std::chrono::steady_clock;

/// How often the loop looks at the clock, the cancel flag and the peers' sockets (idle polls).
constexpr unsigned step_idle_check_mask = 0x3f;
/// After spinning spin_for with nothing completed, the loop naps this long between polls.
constexpr auto spin_for = std::chrono::microseconds{50};
constexpr auto nap = std::chrono::microseconds{20};
/// The longest sleep while sends are in flight: what a socket buffer covers at link speed.
constexpr auto send_nap = std::chrono::microseconds{200};
/// How long retiring an unfinished step's operations may take before the links are given up.
constexpr auto retire_limit = std::chrono::milliseconds{1000};

}  // namespace

mesh_steps::mesh_steps(std::shared_ptr<mesh_links> links, const std::atomic<bool>& cancel, core::dtype element)
    : links_(std::move(links)), cancel_(cancel), element_(element) {
    if (links_->ep().registration().register_local)
        throw mesh::step_setup_error(fmt::format("libfabric provider {} needs registered memory (FI_MR_LOCAL), which "
                                                 "collectives over libfabric do not do yet: use --transport tcp or rdma",
                                                 links_->ep().description().provider));
    if (links_->broken) throw mesh::step_setup_error("the libfabric endpoint failed in an earlier step and is unusable");
}

mesh_steps::chunk_op* mesh_steps::free_op() {
    for (auto& op : ops_)
        if (!op.busy) return &op;
    return nullptr;
}

bool mesh_steps::post(std::span<mesh::peer_io> ios, std::size_t k, mesh::step_status& st) {
    auto& io = ios[k];
    auto& pr = progress_[k];
    auto& ep = links_->ep();
    const auto fail = [&](mesh::step_end end, int rc) {
        st.end = end;
        st.peer = io.peer;
        st.error = -rc;
        st.detail = fmt::format("{}: {}", ep.description().provider, error_text(-rc));
        return false;
    };
    while (pr.send_posted < io.send.bytes && pr.sends_out < chunks_in_flight) {
        auto* op = free_op();
        const auto len = std::min(chunk_bytes, io.send.bytes - pr.send_posted);
        *op = chunk_op{{}, k, false, pr.send_posted, len, true};
        const int rc = ep.send_to(links_->handle(io.peer), io.send.data + pr.send_posted, len, links_->tag_to(io.peer), op->context);
        if (rc) op->busy = false;
        if (rc == -FI_EAGAIN) break;
        if (rc) return fail(mesh::step_end::send_failed, rc);
        pr.send_posted += len;
        ++pr.sends_out;
    }
    while (pr.recv_posted < io.recv.bytes && pr.recvs_out < chunks_in_flight) {
        auto* op = free_op();
        const auto len = std::min(chunk_bytes, io.recv.bytes - pr.recv_posted);
        *op = chunk_op{{}, k, true, pr.recv_posted, len, true};
        const int rc = ep.recv_tagged(io.recv.data + pr.recv_posted, len, io.peer, op->context);
        if (rc) op->busy = false;
        if (rc == -FI_EAGAIN) break;
        if (rc) return fail(mesh::step_end::recv_failed, rc);
        pr.recv_posted += len;
        ++pr.recvs_out;
    }
    return true;
}

bool mesh_steps::complete(std::span<mesh::peer_io> ios, const endpoint::completion& c, std::vector<mesh::step_arrival>& completed) {
    auto* op = static_cast<chunk_op*>(c.context);  // context is the op's first member
    if (!op || op < ops_.data() || op >= ops_.data() + ops_.size() || !op->busy) return false;
    op->busy = false;
    auto& io = ios[op->io];
    auto& pr = progress_[op->io];
    if (!op->receive) {
        --pr.sends_out;
        io.send.done += op->len;
        return true;
    }
    --pr.recvs_out;
    auto& m = io.recv;
    const auto now = clock::now();
    if (m.done == 0) {
        m.first_byte = now;
        m.first_bytes = op->len;
    }
    if (m.reduce_into) {
        core::reduce_sum(element_, {m.reduce_into + op->offset, op->len}, {m.data + op->offset, op->len});
        m.reduced += op->len;
    }
    m.done += op->len;
    if (!m.active()) completed.push_back({io.peer, m.first_byte, now, m.bytes - m.first_bytes, m.bytes});
    return true;
}

bool mesh_steps::peer_closed(std::span<mesh::peer_io> ios, mesh::step_status& st) {
    for (const auto& io : ios) {
        if (io.fd < 0) continue;
        pollfd p{io.fd, POLLIN | POLLRDHUP, 0};
        if (::poll(&p, 1, 0) <= 0) continue;
        char byte;
        if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR)) || ::recv(io.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
            st.end = mesh::step_end::peer_closed;
            st.peer = io.peer;
            return true;
        }
    }
    return false;
}

void mesh_steps::retire(std::span<mesh::peer_io> ios) {
    auto& ep = links_->ep();
    for (auto& op : ops_)
        if (op.busy && op.receive) ep.cancel(op.context);
    const auto t0 = clock::now();
    std::vector<mesh::step_arrival> ignored;
    while (std::any_of(ops_.begin(), ops_.end(), [](const chunk_op& op) { return op.busy; })) {
        endpoint::completion c[16];
        const long n = ep.poll(c, 16);
        if (n < 0) {
            if (auto* op = static_cast<chunk_op*>(ep.failed_context()); op >= ops_.data() && op < ops_.data() + ops_.size())
                op->busy = false;
        }
        for (long i = 0; i < n; ++i) complete(ios, c[i], ignored);
        if (clock::now() - t0 > retire_limit) {
            links_->broken = true;  // operations still refer to this step's buffers
            return;
        }
    }
}

void mesh_steps::sleep_until_completion(std::span<mesh::peer_io> ios, clock::duration left) {
    auto& ep = links_->ep();
    if (!ep.may_sleep()) {
        std::this_thread::sleep_for(nap);
        return;
    }
    // The completion queue's descriptor and the peers' sockets (a close wakes it too). A
    // provider that progresses only when polled (tcp) may not wake it when its socket can
    // take more of a send: with sends in flight the sleep is short (send_nap), else at most
    // 100 ms so that the cancel flag is seen.
    fds_.clear();
    fds_.push_back({ep.wait_fd(), POLLIN, 0});
    for (const auto& io : ios)
        if (io.fd >= 0) fds_.push_back({io.fd, POLLRDHUP, 0});
    const bool sending = std::any_of(progress_.begin(), progress_.end(), [](const progress& p) { return p.sends_out > 0; });
    const auto limit = std::clamp<clock::duration>(left, std::chrono::microseconds{1}, sending ? clock::duration(send_nap)
                                                                                              : clock::duration(std::chrono::milliseconds{100}));
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(limit).count();
    const timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    ::ppoll(fds_.data(), fds_.size(), &ts, nullptr);
}

mesh::step_status mesh_steps::run(std::span<mesh::peer_io> ios, std::chrono::milliseconds stall_limit,
                                  std::vector<mesh::step_arrival>& completed) {
    mesh::step_status st;
    ops_.assign(ios.size() * 2 * chunks_in_flight, chunk_op{});
    progress_.assign(ios.size(), progress{});
    auto& ep = links_->ep();
    auto last_move = clock::now();
    unsigned idle = 0;
    const auto unfinished = [&] {
        return std::any_of(ios.begin(), ios.end(), [](const mesh::peer_io& io) { return io.send.active() || io.recv.active(); });
    };
    while (unfinished()) {
        for (std::size_t k = 0; k < ios.size(); ++k)
            if (!post(ios, k, st)) break;
        if (!st.ok()) break;
        endpoint::completion c[16];
        const long n = ep.poll(c, 16);
        if (n < 0) {
            auto* op = static_cast<chunk_op*>(ep.failed_context());
            const bool ours = op >= ops_.data() && op < ops_.data() + ops_.size();
            st.end = mesh::step_end::link_failed;
            st.peer = ours ? ios[op->io].peer : 0;
            st.detail = fmt::format("{}: a {} failed: {}", ep.description().provider,
                                    ours && op->receive ? "receive" : "send", ep.last_error());
            if (ours) op->busy = false;
            break;
        }
        for (long i = 0; i < n; ++i) complete(ios, c[i], completed);
        if (n > 0) {
            last_move = clock::now();
            idle = 0;
            continue;
        }
        if ((++idle & step_idle_check_mask) != 0) continue;
        // Spun spin_for with nothing done: ranks that share CPUs (and the provider's own
        // progress) get them while this one naps between polls.
        if (clock::now() - last_move > spin_for) sleep_until_completion(ios, stall_limit - (clock::now() - last_move));
        if (cancel_.load(std::memory_order_relaxed)) {
            st.end = mesh::step_end::cancelled;
            break;
        }
        if (peer_closed(ios, st)) break;
        if (clock::now() - last_move > stall_limit) {
            st = mesh::stalled_status(ios);
            break;
        }
    }
    retire(ios);
    return st;
}

}  // namespace meshperf::transport::ofi
