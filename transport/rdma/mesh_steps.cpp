#include "transport/rdma/mesh_steps.hpp"

#include "core/collective/reduce_ops.hpp"
#include "transport/rdma/device_registration.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sys/socket.h>

namespace meshperf::transport::rdma {

using mesh::peer_io;
using mesh::step_end;
using mesh::step_status;

mesh_steps::mesh_steps(std::shared_ptr<mesh_links> links, const std::atomic<bool>& cancel, core::dtype element,
                       const std::vector<std::span<std::byte>>& buffers, device_transfers* device,
                       const std::vector<device_allocation*>& device_buffers)
    : links_(std::move(links)), cancel_(cancel), element_(element), device_(device) {
    auto& ep = links_->ep();
    const bool slots_on_device = ep.qp_count() && !ep.slot(0).host_memory();
    if (slots_on_device != (device != nullptr) || (device && !buffers.empty()))
        throw mesh::step_setup_error(fmt::format("the RDMA receive slots are {} memory but the size's buffers are {} memory "
                                                 "(a bug: report it)",
                                                 slots_on_device ? "device" : "host", device ? "device" : "host"));
    if (device) register_device_buffers(device_buffers);
    for (auto b : buffers) {
        if (b.empty()) continue;
        try {
            regions_.push_back({b.data(), b.size(),
                                std::make_unique<memory_region>(ep.pd(), b.data(), b.size(), IBV_ACCESS_LOCAL_WRITE, ep.where())});
        } catch (const std::exception& e) {
            throw mesh::step_setup_error(fmt::format("cannot register the {} byte buffer for RDMA: {}", b.size(), e.what()));
        }
    }
}

/// GPUDirect: registers the size's device buffers with the NIC by the path the endpoint's
/// slots took (dma-buf, else nvidia-peermem), so sends are read from the GPU directly.
void mesh_steps::register_device_buffers(const std::vector<device_allocation*>& device_buffers) {
    auto& ep = links_->ep();
    const auto& gpu = ep.options().gpu_memory;
    for (auto* a : device_buffers) {
        if (!a) continue;
        try {
            auto reg = register_device_memory(ep.pd(), *a, gpu->caps(), IBV_ACCESS_LOCAL_WRITE,
                                              fmt::format("{} with {}", ep.where(), gpu->name()));
            regions_.push_back({a->data(), a->size(), std::make_unique<memory_region>(reg.mr)});
        } catch (const std::exception& e) {
            throw mesh::step_setup_error(
                fmt::format("cannot register the {} byte device buffer for GPUDirect RDMA: {}", a->size(), e.what()));
        }
    }
}

step_status mesh_steps::run(std::span<peer_io> ios, std::chrono::milliseconds stall_limit,
                            std::vector<mesh::step_arrival>& completed) {
    completed.clear();
    posted_.assign(ios.size(), 0);
    step_status st;
    auto last_progress = clock::now();
    bool armed = false;  // the step's CQs are armed and have been polled since
    while (true) {
        bool active = false, moved = false;
        for (std::size_t i = 0; i < ios.size(); ++i) {
            auto& io = ios[i];
            auto& link = links_->link(io.peer);
            const bool polled = poll(io, link, st);
            if (!st.ok()) return st;
            moved |= polled;
            while (io.recv.active() && link.arrived > link.consumed) {
                if (!consume(io, link, completed, st)) return st;
                moved = true;
            }
            if (!send_credits(io.peer, link, moved, st)) return st;
            while (posted_[i] < io.send.bytes && link.sent - link.credited < mesh_slot_count &&
                   link.data_in_flight < mesh_slot_count) {
                if (!post_piece(io, link, posted_[i], st)) return st;
                moved = true;
            }
            active |= io.send.active() || io.recv.active();
        }
        if (!active) return st;
        if (cancel_.load(std::memory_order_relaxed)) {
            st.end = step_end::cancelled;
            return st;
        }
        const auto now = clock::now();
        if (moved) {
            last_progress = now;
            armed = false;
            continue;
        }
        if (now - last_progress > stall_limit) return mesh::stalled_status(ios);
        // Spin while data is due; past spin_for of silence (a slow peer, the barrier
        // waiting for the slowest rank) arm the CQs, look once more, then sleep until a
        // completion or a peer's close, so that ranks sharing CPUs leave them to each
        // other (and to a software RDMA device's kernel threads).
        if (now - last_progress < spin_for) continue;
        if (!armed) {
            if (!arm(ios, st)) return st;
            armed = true;
            continue;
        }
        if (!sleep_until_completion(ios, st)) return st;
        armed = false;
    }
}

/// Asks every CQ of the step for an event at its next completion.
bool mesh_steps::arm(std::span<peer_io> ios, step_status& st) {
    for (const auto& io : ios)
        if (const int rc = ibv_req_notify_cq(links_->slot(links_->link(io.peer)).cq.get(), 0))
            return link_failed(io.peer, fmt::format("ibv_req_notify_cq: {}", std::strerror(rc)), st);
    return true;
}

/// Sleeps (at most 100 ms) until an armed CQ has a completion or a peer's socket reads,
/// and takes the channel's events. Nothing travels on the sockets once the QPs are up: a
/// socket that reads end-of-stream is a peer that closed it (it faulted or its daemon died).
bool mesh_steps::sleep_until_completion(std::span<peer_io> ios, step_status& st) {
    auto& events = *links_->ep().events();
    fds_.assign(1, pollfd{events.fd(), POLLIN, 0});
    for (const auto& io : ios)
        if (io.fd >= 0) fds_.push_back(pollfd{io.fd, POLLIN, 0});
    const int n = ::poll(fds_.data(), fds_.size(), 100);
    if (n < 0 && errno != EINTR) {
        st.end = step_end::poll_failed;
        st.error = errno;
        return false;
    }
    events.drain();
    for (std::size_t k = 1; k < fds_.size(); ++k) {
        if (!fds_[k].revents) continue;
        char c;
        const auto r = ::recv(fds_[k].fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            const auto& io = *std::find_if(ios.begin(), ios.end(), [&](const peer_io& x) { return x.fd == fds_[k].fd; });
            st.end = step_end::peer_closed;
            st.peer = io.peer;
            return false;
        }
    }
    return true;
}

bool mesh_steps::link_failed(unsigned peer, std::string what, step_status& st) {
    links_->slot(links_->link(peer)).failed = true;
    st.end = step_end::link_failed;
    st.peer = peer;
    st.detail = std::move(what);
    return false;
}

template <class Op> bool mesh_steps::on_device(const char* doing, step_status& st, Op op) {
    try {
        op();
        return true;
    } catch (const std::exception& e) {
        st.end = step_end::device_failed;
        st.doing = doing;
        st.detail = e.what();
        return false;
    }
}

/// Takes the link's completions: pieces and credits that came, sends that finished. Returns
/// whether any came; st says a failure.
bool mesh_steps::poll(peer_io& io, mesh_link& link, step_status& st) {
    auto& s = links_->slot(link);
    ibv_wc wc[16];
    const int n = ibv_poll_cq(s.cq.get(), 16, wc);
    if (n < 0) return link_failed(io.peer, "ibv_poll_cq failed", st);
    for (int k = 0; k < n; ++k) {
        const auto& c = wc[k];
        if (c.status != IBV_WC_SUCCESS) return link_failed(io.peer, ibv_wc_status_str(c.status), st);
        switch (c.opcode) {
        case IBV_WC_RECV_RDMA_WITH_IMM:
            --s.rx_posted;
            if (link.arrived - link.consumed >= mesh_slot_count)
                return link_failed(io.peer, "a piece came into a slot not yet credited", st);
            link.length[link.arrived++ % mesh_slot_count] = ntohl(c.imm_data);
            break;
        case IBV_WC_RECV:
            --s.rx_posted;
            if (!(c.wc_flags & IBV_WC_WITH_IMM)) return link_failed(io.peer, "a send without a credit count came", st);
            link.credited += ntohl(c.imm_data);
            if (link.credited > link.sent) return link_failed(io.peer, "more credits came than pieces were sent", st);
            break;
        case IBV_WC_RDMA_WRITE:
            --link.data_in_flight;
            io.send.done += static_cast<std::size_t>(c.wr_id);
            break;
        case IBV_WC_SEND:
            --link.credits_in_flight;
            break;
        default:
            return link_failed(io.peer, fmt::format("unexpected completion opcode {}", static_cast<int>(c.opcode)), st);
        }
    }
    if (n > 0) {
        try {
            s.top_up_receives();
        } catch (const std::exception& e) {
            return link_failed(io.peer, e.what(), st);
        }
    }
    return n > 0;
}

/// Copies, or adds, the oldest piece from the peer into the step's receive and frees its slot.
bool mesh_steps::consume(peer_io& io, mesh_link& link, std::vector<mesh::step_arrival>& completed, step_status& st) {
    auto& m = io.recv;
    const std::size_t slot_index = link.consumed % mesh_slot_count;
    const std::size_t len = link.length[slot_index];
    if (len == 0 || len > mesh_slot_bytes || len > m.bytes - m.done) {
        st.end = step_end::bad_piece;
        st.peer = io.peer;
        st.got = len;
        st.expected = m.bytes - m.done;
        return false;
    }
    const std::byte* piece = links_->slot(link).rx() + slot_index * mesh_slot_bytes;
    if (device_) {
        // GPUDirect: the piece is in device memory, written by the NIC.
        std::byte* to = m.reduce_into ? m.reduce_into + m.done : m.data + m.done;
        const bool ok = on_device("taking a piece from its receive slot", st, [&] {
            device_->flush_rdma_writes();
            if (m.reduce_into) device_->add_at(element_, to, piece, len);
            else if (region_of(to, len)) device_->copy_at(to, piece, len);
            else device_->download_at(to, piece, len);  // a host message: the barrier's flag
        });
        if (!ok) return false;
    } else if (m.reduce_into) {
        core::reduce_sum(element_, {m.reduce_into + m.done, len}, {piece, len});
    } else {
        std::memcpy(m.data + m.done, piece, len);
    }
    const auto now = clock::now();
    if (m.done == 0) {
        m.first_byte = now;
        m.first_bytes = len;
    }
    m.done += len;
    if (m.done == m.bytes) completed.push_back({io.peer, m.first_byte, now, m.bytes - m.first_bytes, m.bytes});
    ++link.consumed;
    ++link.owed;
    return true;
}

/// Sends the credits owed to the peer, when the send queue has room for them.
bool mesh_steps::send_credits(unsigned peer, mesh_link& link, bool& moved, step_status& st) {
    if (!link.owed || link.credits_in_flight >= mesh_send_depth - mesh_slot_count) return true;
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(link.owed);
    if (!post(peer, link, wr, st)) return false;
    ++link.credits_in_flight;
    link.owed = 0;
    moved = true;
    return true;
}

/// Writes the next piece of the step's send into the peer's next slot.
bool mesh_steps::post_piece(peer_io& io, mesh_link& link, std::size_t& posted, step_status& st) {
    auto& s = links_->slot(link);
    const std::size_t len = std::min(mesh_slot_bytes, io.send.bytes - posted);
    const std::size_t at = (link.sent % mesh_slot_count) * mesh_slot_bytes;
    std::byte* src = io.send.data + posted;
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(src), static_cast<std::uint32_t>(len), 0};
    ibv_send_wr wr{};
    wr.wr_id = len;  // what its completion adds to the send (a credit's is 0: told apart by opcode)
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(static_cast<std::uint32_t>(len));
    wr.wr.rdma.remote_addr = s.remote_addr + at;
    wr.wr.rdma.rkey = s.remote_rkey;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    const auto* r = region_of(src, len);
    if (len <= s.qp.max_inline() && !(device_ && r)) {  // inline data is read by the CPU: host memory only
        wr.send_flags |= IBV_SEND_INLINE;
    } else if (r) {
        sge.lkey = r->mr->lkey();
    } else {  // not in the size's buffers (the barrier's flag): staged in the link's send half
        if (s.host_memory()) std::memcpy(s.tx() + at, src, len);
        else if (!on_device("staging a send", st, [&] { device_->upload_at(s.tx() + at, src, len); })) return false;
        sge.addr = reinterpret_cast<std::uintptr_t>(s.tx() + at);
        sge.lkey = s.mr.lkey();
    }
    if (!post(io.peer, link, wr, st)) return false;
    ++link.sent;
    ++link.data_in_flight;
    posted += len;
    return true;
}

bool mesh_steps::post(unsigned peer, mesh_link& link, ibv_send_wr& wr, step_status& st) {
    ibv_send_wr* bad = nullptr;
    if (const int rc = ibv_post_send(links_->slot(link).qp.get(), &wr, &bad))
        return link_failed(peer, fmt::format("ibv_post_send: {}", std::strerror(rc)), st);
    return true;
}

const mesh_steps::registered* mesh_steps::region_of(const std::byte* p, std::size_t len) const {
    for (const auto& r : regions_)
        if (p >= r.begin && p + len <= r.begin + r.bytes) return &r;
    return nullptr;
}

}  // namespace meshperf::transport::rdma
