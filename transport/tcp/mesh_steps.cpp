#include "transport/tcp/mesh_steps.hpp"

#include "core/collective/reduce_ops.hpp"

#include <algorithm>
#include <cerrno>
#include <sys/socket.h>

namespace meshperf::transport::tcp {

using mesh::peer_io;
using mesh::step_end;
using mesh::step_status;

namespace {

step_status failed(step_end end, unsigned peer, int error) {
    step_status st;
    st.end = end;
    st.peer = peer;
    st.error = error;
    return st;
}

}  // namespace

mesh_steps::mesh_steps(std::vector<int>& rcvlowat, const std::atomic<bool>& cancel, core::dtype element)
    : rcvlowat_(rcvlowat), cancel_(cancel), element_(element), w_(core::dtype_bytes(element)) {}

step_status mesh_steps::run(std::span<peer_io> ios, std::chrono::milliseconds stall_limit,
                            std::vector<mesh::step_arrival>& completed) {
    completed.clear();
    step_status st;
    auto last_progress = clock::now();
    auto& fds = pollfds_;
    while (true) {
        fds.clear();
        for (auto& p : ios) {
            short ev = 0;
            if (p.send.active()) ev |= POLLOUT;
            if (p.recv.active()) {
                ev |= POLLIN;
                if (!wake_at(p, st)) return st;
            }
            if (ev) fds.push_back(pollfd{p.fd, ev, 0});
        }
        if (fds.empty()) return st;
        if (cancel_.load()) {
            st.end = step_end::cancelled;
            return st;
        }
        const int n = ::poll(fds.data(), fds.size(), 100);
        if (n < 0 && errno != EINTR) {
            st.end = step_end::poll_failed;
            st.error = errno;
            return st;
        }
        bool moved = false;
        for (const auto& f : fds) {
            if (!f.revents) continue;
            auto& p = *std::find_if(ios.begin(), ios.end(), [&](const peer_io& x) { return x.fd == f.fd; });
            if (p.send.active() && (f.revents & (POLLOUT | POLLERR | POLLHUP)) && !send_some(p, moved, st)) return st;
            if (p.recv.active() && (f.revents & (POLLIN | POLLERR | POLLHUP)) && !recv_some(p, moved, completed, st))
                return st;
        }
        const auto now = clock::now();
        if (moved) last_progress = now;
        else if (now - last_progress > stall_limit) return mesh::stalled_status(ios);
    }
}

bool mesh_steps::wake_at(const peer_io& p, step_status& st) {
    const int want = static_cast<int>(std::min(p.recv.bytes - p.recv.done, wake_bytes));
    auto& set = rcvlowat_;
    if (p.peer >= set.size()) set.resize(p.peer + 1, 1);
    if (set[p.peer] == want) return true;
    if (::setsockopt(p.fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof want) != 0) {
        st = failed(step_end::rcvlowat_failed, p.peer, errno);
        return false;
    }
    set[p.peer] = want;
    return true;
}

bool mesh_steps::send_some(peer_io& p, bool& moved, step_status& st) {
    const auto r = ::send(p.fd, p.send.data + p.send.done, p.send.bytes - p.send.done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r > 0) {
        p.send.done += static_cast<std::size_t>(r);
        moved = true;
        return true;
    }
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    st = failed(step_end::send_failed, p.peer, errno);
    return false;
}

bool mesh_steps::recv_some(peer_io& p, bool& moved, std::vector<mesh::step_arrival>& completed, step_status& st) {
    auto& m = p.recv;
    const auto r = ::recv(p.fd, m.data + m.done, m.bytes - m.done, MSG_DONTWAIT);
    if (r == 0) {
        st = failed(step_end::peer_closed, p.peer, 0);
        return false;
    }
    if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
        st = failed(step_end::recv_failed, p.peer, errno);
        return false;
    }
    const auto now = clock::now();
    if (m.done == 0) {
        m.first_byte = now;
        m.first_bytes = static_cast<std::size_t>(r);
    }
    m.done += static_cast<std::size_t>(r);
    if (m.done == m.bytes) completed.push_back({p.peer, m.first_byte, now, m.bytes - m.first_bytes, m.bytes});
    if (m.reduce_into) {  // add the whole elements that have arrived
        const std::size_t whole = m.done / w_ * w_;
        if (whole > m.reduced) {
            core::reduce_sum(element_, {m.reduce_into + m.reduced, whole - m.reduced}, {m.data + m.reduced, whole - m.reduced});
            m.reduced = whole;
        }
    }
    moved = true;
    return true;
}

}  // namespace meshperf::transport::tcp
