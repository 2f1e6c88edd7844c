#include "daemon/session/collective_engine.hpp"

#include "core/collective_result.hpp"
#include "core/reduce_ops.hpp"
#include "daemon/session/point_harness.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <poll.h>
#include <set>
#include <sys/socket.h>

namespace meshperf::daemon {
namespace {

using transport::clock;

double seconds_between(clock::time_point a, clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

/// One message of a step in flight.
struct message_io {
    std::byte* data = nullptr;   ///< what a send reads, or where a receive lands (its scratch when reducing)
    std::size_t bytes = 0;
    std::size_t done = 0;
    std::byte* reduce_into = nullptr;  ///< a reducing receive: the buffer its elements are added to
    std::size_t reduced = 0;           ///< bytes of it already added
    clock::time_point first_byte{};    ///< a receive: when its first bytes were read
    bool active() const { return done < bytes; }
};

/// What moves with one peer in one step: at most one message each way.
struct peer_io {
    unsigned peer = 0;
    int fd = -1;
    message_io send, recv;
};

/// Where a rank is, for fault messages only: formatted when a fault happens, never per step
/// ("iteration 4, step 7 of 10", "verification, barrier round 2").
struct step_label {
    const char* phase;             ///< "warm-up iteration", "iteration" or "verification"
    std::uint64_t iteration = 0;   ///< 1-based; 0: the phase has no number
    const char* part = "step";     ///< "step" or "barrier round"
    std::size_t index = 0;         ///< 1-based
    std::size_t count = 0;         ///< steps of the iteration; 0: not said
    std::string text() const {
        auto out = iteration ? fmt::format("{} {}", phase, iteration) : std::string(phase);
        out += count ? fmt::format(", {} {} of {}", part, index, count) : fmt::format(", {} {}", part, index);
        return out;
    }
};

/// Runs one step's messages to completion. `label` names the step in faults.
class step_runner {
public:
    step_runner(collective_mesh& mesh, const std::atomic<bool>& cancel, core::dtype element, std::size_t element_bytes)
        : mesh_(mesh), cancel_(cancel), element_(element), w_(element_bytes) {}

    /// Bytes a receive waits for before poll wakes it (SO_RCVLOWAT), less at a message's
    /// end: on a paced link data comes a packet at a time, and waking for each costs more CPU
    /// than 6 ranks on 2 cores have (the netns cluster lost 5% of its busbw at 32 MiB so).
    /// A peer slower than this many bytes per stall limit (52 kbit/s) reads as stalled.
    static constexpr std::size_t wake_bytes = 32 * 1024;

    peer_io& with(unsigned peer) {
        for (auto& p : ios_)
            if (p.peer == peer) return p;
        if (peer >= mesh_.fds.size() || !mesh_.fds[peer])
            throw collective_fault(fmt::format("this rank has no connection to rank {}", peer), peer);
        ios_.push_back(peer_io{peer, mesh_.fds[peer].get(), {}, {}});
        return ios_.back();
    }

    /// Moves every message; completed() then says when each receive finished.
    void run(const step_label& label, std::chrono::milliseconds stall_limit) {
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

    /// A receive of the last run: the peer it came from, when its first and its last bytes were read.
    struct arrival {
        unsigned peer;
        clock::time_point first, last;
    };
    /// The receives of the last run, in the order they completed.
    const std::vector<arrival>& completed() const { return completed_; }

private:
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
        if (r == 0)
            throw collective_fault(fmt::format("{}: rank {} closed its connection (its daemon stopped, or gave up on the run)",
                                               label.text(), p.peer),
                                   p.peer);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
            throw collective_fault(fmt::format("{}: receiving from rank {} failed: {} (its daemon died or the link was cut)",
                                               label.text(), p.peer, std::strerror(errno)),
                                   p.peer);
        }
        const auto now = clock::now();
        if (m.done == 0) m.first_byte = now;
        m.done += static_cast<std::size_t>(r);
        if (m.done == m.bytes) completed_.push_back({p.peer, m.first_byte, now});
        if (m.reduce_into) {  // add the whole elements that have arrived
            const std::size_t whole = m.done / w_ * w_;
            if (whole > m.reduced) {
                core::reduce_sum(element_, {m.reduce_into + m.reduced, whole - m.reduced}, {m.data + m.reduced, whole - m.reduced});
                m.reduced = whole;
            }
        }
        return true;
    }

    collective_fault stalled(const step_label& label, std::chrono::milliseconds limit) const {
        // Blame a peer this rank still waits to hear from; else one that does not drain what it is sent.
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

    collective_mesh& mesh_;
    const std::atomic<bool>& cancel_;
    core::dtype element_;
    std::size_t w_;
    std::vector<peer_io> ios_;  // a handful of peers: found by a linear search
    std::vector<arrival> completed_;
    std::vector<pollfd> pollfds_;  // kept, so a step allocates nothing
};

/// One rank's buffers and runners for one size.
class size_runner {
public:
    size_runner(const core::collective_plan& plan, collective_mesh& mesh, const size_run_options& options,
                const std::atomic<bool>& cancel)
        : plan_(plan), options_(options), runner_(mesh, cancel, plan.element, plan.element_bytes),
          send_(plan.send_elements * plan.element_bytes), recv_(plan.recv_elements * plan.element_bytes),
          barrier_(core::dissemination_barrier(plan.ranks, plan.rank)) {
        std::size_t scratch = 0;
        for (const auto& s : plan.steps) {
            std::size_t step_bytes = 0;
            for (const auto& t : s.recvs)
                if (t.reduce) step_bytes += t.range.count * plan.element_bytes;
            scratch = std::max(scratch, step_bytes);
        }
        scratch_.resize(scratch);
        core::fill_inputs(plan_, send_, recv_);
    }

    /// The barrier: every rank waits for every other; returns whether any rank said stop.
    bool barrier(bool stop, step_label where, std::chrono::milliseconds limit) {
        where.part = "barrier round";
        std::byte flag{static_cast<unsigned char>(stop ? 1 : 0)}, got{0};
        for (std::size_t k = 0; k < barrier_.size(); ++k) {
            auto& to = runner_.with(barrier_[k].to);
            to.send = {&flag, 1, 0, nullptr, 0, {}};
            auto& from = runner_.with(barrier_[k].from);
            from.recv = {&got, 1, 0, nullptr, 0, {}};
            where.index = k + 1;
            runner_.run(where, limit);
            flag |= got;
        }
        return flag != std::byte{0};
    }

    /// What one iteration took.
    struct iteration {
        double time_s = 0;       ///< from the barrier's release to its last receive
        double link_in_s = 0;    ///< first to last byte of the messages from the left neighbour
    };

    /// One iteration of the plan. With `arrivals`, when each receive completed (seconds into
    /// the iteration, by peer) goes there.
    iteration iterate(step_label where, std::vector<std::pair<unsigned, double>>* arrivals = nullptr) {
        where.count = plan_.steps.size();
        const auto w = plan_.element_bytes;
        std::byte* in = send_.data();
        std::byte* out = plan_.in_place() ? send_.data() : recv_.data();
        const auto t0 = clock::now();
        if (plan_.self_copy) std::memcpy(out + plan_.self_copy->first * w, in + plan_.self_copy->first * w, plan_.self_copy->count * w);
        iteration done;
        const unsigned left = (plan_.rank + plan_.ranks - 1) % plan_.ranks;
        for (std::size_t s = 0; s < plan_.steps.size(); ++s) {
            const auto& step = plan_.steps[s];
            for (const auto& t : step.sends) {
                if (options_.corrupt && t.range.count) in[t.range.first * w + w - 1] ^= std::byte{0x40};
                runner_.with(t.peer).send = {in + t.range.first * w, t.range.count * w, 0, nullptr, 0, {}};
            }
            std::size_t scratch_at = 0;
            for (const auto& t : step.recvs) {
                auto& m = runner_.with(t.peer).recv;
                if (t.reduce) {
                    m = {scratch_.data() + scratch_at, t.range.count * w, 0, out + t.range.first * w, 0, {}};
                    scratch_at += t.range.count * w;
                } else {
                    m = {out + t.range.first * w, t.range.count * w, 0, nullptr, 0, {}};
                }
            }
            where.index = s + 1;
            runner_.run(where, collective_stall_limit);
            for (const auto& a : runner_.completed()) {
                if (arrivals) arrivals->emplace_back(a.peer, std::max(seconds_between(t0, a.last), 1e-9));
                if (a.peer == left) done.link_in_s += seconds_between(a.first, a.last);
            }
        }
        done.time_s = std::max(seconds_between(t0, clock::now()), 1e-9);
        done.link_in_s = std::clamp(done.link_in_s, 1e-9, done.time_s);
        return done;
    }

    std::uint64_t wrong() const { return core::count_wrong_outputs(plan_, send_, recv_); }
    void refill() { core::fill_inputs(plan_, send_, recv_); }

private:
    const core::collective_plan& plan_;
    const size_run_options& options_;
    step_runner runner_;
    std::vector<std::byte> send_, recv_, scratch_;
    std::vector<core::barrier_round> barrier_;
};

}  // namespace

rank_timing measure_collective_size(const core::collective_plan& plan, collective_mesh& mesh, const size_run_options& options,
                                    const std::atomic<bool>& cancel) {
    size_runner run(plan, mesh, options, cancel);
    rank_timing out;
    double longest = 0;
    auto barrier_limit = [&](bool first) {
        // A rank waits at the barrier for the slowest rank's iteration; the first barrier of a
        // size also for the ranks still filling their buffers.
        const double s = std::chrono::duration<double>(collective_stall_limit).count() + 2 * longest + (first ? 10 : 0);
        return std::chrono::milliseconds(static_cast<long long>(s * 1000));
    };
    bool first = true;
    for (std::uint64_t i = 0; i < options.warmup_iterations; ++i) {
        const step_label where{"warm-up iteration", i + 1};
        run.barrier(false, where, barrier_limit(first));
        first = false;
        longest = std::max(longest, run.iterate(where).time_s);
    }
    const auto cap = options.max_iterations ? options.max_iterations : UINT64_MAX;
    const auto target = std::min(options.iterations.value_or(UINT64_MAX), cap);
    const bool incast_receiver = plan.op == core::collective_op::incast && plan.rank == core::incast_receiver;
    if (incast_receiver) out.from_sender_s.resize(plan.ranks);
    std::vector<std::pair<unsigned, double>> arrivals;  // the incast receiver's, reused
    const auto start = clock::now();
    for (std::uint64_t count = 0;; ++count) {
        bool stop = false;
        if (plan.rank == 0) {
            const double elapsed = seconds_between(start, clock::now());
            stop = count >= target || (count > 0 && options.duration_s && elapsed >= *options.duration_s) ||
                   (count > 0 && options.max_duration_s > 0 && elapsed >= options.max_duration_s);
        }
        const step_label where{"iteration", count + 1};
        if (run.barrier(stop, where, barrier_limit(first))) break;
        first = false;
        arrivals.clear();
        const auto it = run.iterate(where, incast_receiver ? &arrivals : nullptr);
        longest = std::max(longest, it.time_s);
        out.iteration_s.push_back(it.time_s);
        if (plan.times_link_from_left) out.link_in_s.push_back(it.link_in_s);
        if (incast_receiver)
            for (const auto& [sender, at] : arrivals) out.from_sender_s[sender].push_back(at);
    }
    if (options.verify) {
        run.refill();
        run.barrier(false, step_label{"verification"}, barrier_limit(false));
        run.iterate(step_label{"verification"});
        out.wrong = run.wrong();
    }
    return out;
}

std::vector<unsigned> mesh_peers(const std::vector<core::collective_op>& ops, const std::vector<core::collective_algo>& algos,
                                 unsigned ranks, unsigned rank, core::dtype element, std::uint64_t size_bytes) {
    std::set<unsigned> peers;
    for (std::size_t i = 0; i < ops.size(); ++i)
        for (auto q : core::data_peers(core::plan_collective(ops[i], algos[i], ranks, rank, element, size_bytes))) peers.insert(q);
    for (const auto& b : core::dissemination_barrier(ranks, rank)) {
        peers.insert(b.to);
        peers.insert(b.from);
    }
    peers.erase(rank);
    return {peers.begin(), peers.end()};
}

}  // namespace meshperf::daemon
