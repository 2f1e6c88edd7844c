// The step runner's shared parts and its TCP data path: non-blocking sends and receives on the
// mesh's sockets, woken by poll, reductions done as whole elements arrive.
#include "core/collective/reduce_ops.hpp"
#include "daemon/collective/step_runner.hpp"
#include "daemon/session/session_protocol.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

namespace meshperf::daemon {

std::string step_label::text() const {
    auto out = iteration ? fmt::format("{} {}", phase, iteration) : std::string(phase);
    out += count ? fmt::format(", {} {} of {}", part, index, count) : fmt::format(", {} {}", part, index);
    return out;
}

peer_io& step_runner::with(unsigned peer) {
    for (auto& p : ios_)
        if (p.peer == peer) return p;
    if (!has_link(peer)) throw collective_fault(fmt::format("this rank has no connection to rank {}", peer), peer);
    ios_.push_back(peer_io{peer, peer < mesh_.fds.size() ? mesh_.fds[peer].get() : -1, {}, {}});
    return ios_.back();
}

collective_fault step_runner::stalled(const step_label& label, std::chrono::milliseconds limit) const {
    for (const auto& p : ios_)
        if (p.recv.active())
            return collective_fault(fmt::format("{}: nothing from rank {} for {} s (its daemon is stalled or the link is down)",
                                                label.text(), p.peer, limit.count() / 1000.0),
                                    p.peer);
    for (const auto& p : ios_)
        if (p.send.active())
            return collective_fault(fmt::format("{}: rank {} took nothing of what this rank sends for {} s (its daemon is "
                                                "stalled or the link is down)",
                                                label.text(), p.peer, limit.count() / 1000.0),
                                    p.peer);
    return collective_fault(label.text() + ": stalled", {});
}

collective_fault step_runner::closed(const step_label& label, unsigned peer) {
    return collective_fault(
        fmt::format("{}: rank {} closed its connection (its daemon stopped, or gave up on the run)", label.text(), peer), peer);
}

namespace {

using transport::clock;

class tcp_step_runner final : public step_runner {
public:
    tcp_step_runner(collective_mesh& mesh, const std::atomic<bool>& cancel, core::dtype element)
        : step_runner(mesh), cancel_(cancel), element_(element), w_(core::dtype_bytes(element)) {}

    /// Bytes a receive waits for before poll wakes it (SO_RCVLOWAT), less at a message's
    /// end: on a paced link data comes a packet at a time, and waking for each costs more CPU
    /// than 6 ranks on 2 cores have (the netns cluster lost 5% of its busbw at 32 MiB so).
    /// A peer slower than this many bytes per stall limit (52 kbit/s) reads as stalled.
    static constexpr std::size_t wake_bytes = 32 * 1024;

    void run(const step_label& label, std::chrono::milliseconds stall_limit) override {
        completed_.clear();
        auto last_progress = clock::now();
        auto& fds = pollfds_;
        while (true) {
            fds.clear();
            for (auto& p : ios_) {
                short ev = 0;
                if (p.send.active()) ev |= POLLOUT;
                if (p.recv.active()) {
                    ev |= POLLIN;
                    wake_at(p);
                }
                if (ev) fds.push_back(pollfd{p.fd, ev, 0});
            }
            if (fds.empty()) break;
            if (cancel_.load()) throw run_cancelled();
            const int n = ::poll(fds.data(), fds.size(), 100);
            if (n < 0 && errno != EINTR) throw collective_fault(fmt::format("{}: poll failed: {}", label.text(), std::strerror(errno)), {});
            bool moved = false;
            for (const auto& f : fds) {
                if (!f.revents) continue;
                auto& p = *std::find_if(ios_.begin(), ios_.end(), [&](const peer_io& x) { return x.fd == f.fd; });
                if (p.send.active() && (f.revents & (POLLOUT | POLLERR | POLLHUP))) moved |= send_some(p, label);
                if (p.recv.active() && (f.revents & (POLLIN | POLLERR | POLLHUP))) moved |= recv_some(p, label);
            }
            const auto now = clock::now();
            if (moved) last_progress = now;
            else if (now - last_progress > stall_limit) throw stalled(label, stall_limit);
        }
        ios_.clear();
    }

private:
    bool has_link(unsigned peer) const override { return peer < mesh_.fds.size() && mesh_.fds[peer]; }

    void wake_at(const peer_io& p) {
        const int want = static_cast<int>(std::min(p.recv.bytes - p.recv.done, wake_bytes));
        auto& set = mesh_.rcvlowat;
        if (p.peer >= set.size()) set.resize(p.peer + 1, 1);
        if (set[p.peer] == want) return;
        if (::setsockopt(p.fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof want) != 0)
            throw collective_fault(fmt::format("cannot set SO_RCVLOWAT on the connection to rank {}: {}", p.peer,
                                               std::strerror(errno)),
                                   std::nullopt);
        set[p.peer] = want;
    }

    bool send_some(peer_io& p, const step_label& label) {
        const auto r = ::send(p.fd, p.send.data + p.send.done, p.send.bytes - p.send.done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r > 0) {
            p.send.done += static_cast<std::size_t>(r);
            return true;
        }
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
        throw collective_fault(fmt::format("{}: sending to rank {} failed: {} (its daemon died or the link was cut)", label.text(),
                                           p.peer, std::strerror(errno)),
                               p.peer);
    }

    bool recv_some(peer_io& p, const step_label& label) {
        auto& m = p.recv;
        const auto r = ::recv(p.fd, m.data + m.done, m.bytes - m.done, MSG_DONTWAIT);
        if (r == 0) throw closed(label, p.peer);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
            throw collective_fault(fmt::format("{}: receiving from rank {} failed: {} (its daemon died or the link was cut)",
                                               label.text(), p.peer, std::strerror(errno)),
                                   p.peer);
        }
        const auto now = clock::now();
        if (m.done == 0) {
            m.first_byte = now;
            m.first_bytes = static_cast<std::size_t>(r);
        }
        m.done += static_cast<std::size_t>(r);
        if (m.done == m.bytes) completed_.push_back({p.peer, m.first_byte, now, m.bytes - m.first_bytes, m.bytes});
        if (m.reduce_into) {  // add the whole elements that have arrived
            const std::size_t whole = m.done / w_ * w_;
            if (whole > m.reduced) {
                core::reduce_sum(element_, {m.reduce_into + m.reduced, whole - m.reduced}, {m.data + m.reduced, whole - m.reduced});
                m.reduced = whole;
            }
        }
        return true;
    }

    const std::atomic<bool>& cancel_;
    core::dtype element_;
    std::size_t w_;
    std::vector<pollfd> pollfds_;  // kept, so a step allocates nothing
};

}  // namespace

std::unique_ptr<step_runner> make_tcp_step_runner(collective_mesh& mesh, const std::atomic<bool>& cancel, core::dtype element) {
    return std::make_unique<tcp_step_runner>(mesh, cancel, element);
}

}  // namespace meshperf::daemon
