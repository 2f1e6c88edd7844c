#include "daemon/collective/engine.hpp"

#include "core/collective/result.hpp"
#include "daemon/runtime/log.hpp"
#include "transport/mesh/step_runner.hpp"
#include "transport/tcp/tcp_counters.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <set>

namespace meshperf::daemon {
namespace {

using transport::clock;
using device_memory = transport::mesh::device_memory;

double seconds_between(clock::time_point a, clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

/// The largest sum of a step's reducing receives: where they land before they are added.
std::size_t step_scratch_bytes(const core::collective_plan& plan) {
    std::size_t scratch = 0;
    for (const auto& s : plan.steps) {
        std::size_t step_bytes = 0;
        for (const auto& t : s.recvs)
            if (t.reduce) step_bytes += t.range.count * plan.element_bytes;
        scratch = std::max(scratch, step_bytes);
    }
    return scratch;
}

/// The ranks whose sockets carry this rank's data under `plan` (rank_timing::send_tcp): the
/// right neighbour for a ring algorithm (none for a rank that sends nothing, the last of a
/// chain broadcast), else every peer the plan sends bytes to, ascending.
std::vector<unsigned> tcp_send_peers(const core::collective_plan& plan) {
    std::set<unsigned> peers;
    for (const auto& s : plan.steps)
        for (const auto& t : s.sends)
            if (t.range.count > 0 && t.peer != plan.rank) peers.insert(t.peer);
    if (plan.algo == core::collective_algo::ring && !peers.empty()) return {(plan.rank + 1) % plan.ranks};
    return {peers.begin(), peers.end()};
}

/// TCP_INFO of the sockets to `peers` now, in their order; empty when the data moves over
/// the transport's own links (not the sockets), there is no peer, or any socket cannot be read.
std::optional<std::vector<transport::tcp::tcp_snapshot>> tcp_snapshots(const collective_mesh& mesh,
                                                                       const std::vector<unsigned>& peers) {
    if (mesh.links || peers.empty()) return std::nullopt;
    std::vector<transport::tcp::tcp_snapshot> out;
    for (auto q : peers) {
        if (q >= mesh.fds.size() || !mesh.fds[q]) return std::nullopt;
        auto s = transport::tcp::read_tcp_snapshot(mesh.fds[q].get());
        if (!s) return std::nullopt;
        out.push_back(*s);
    }
    return out;
}

/// One rank's buffers and runners for one size.
class size_runner {
public:
    size_runner(const core::collective_plan& plan, collective_mesh& mesh, const size_run_options& options,
                const std::atomic<bool>& cancel)
        : plan_(plan), options_(options), send_(plan.send_elements * plan.element_bytes),
          recv_(plan.recv_elements * plan.element_bytes), direct_(mesh.links && options.device_memory),
          barrier_(core::dissemination_barrier(plan.ranks, plan.rank)) {
        // GPUDirect sums each piece straight from its receive slot: no scratch.
        if (!direct_) scratch_.resize(step_scratch_bytes(plan));
        if (options.device_memory) {
            try {
                dev_ = options.device_memory(send_.size(), recv_.size(), scratch_.size());
            } catch (const std::exception& e) {
                throw collective_fault(fmt::format("cannot allocate this size's buffers in device memory: {}", e.what()),
                                       std::nullopt);
            }
        }
        if (mesh.links) runner_ = open_links_step_runner(mesh, cancel);
        else runner_ = transport::mesh::make_tcp_step_runner(mesh, cancel, plan.element);
        refill();
    }

    /// The barrier: every rank waits for every other; returns whether any rank said stop.
    bool barrier(bool stop, step_label where, std::chrono::milliseconds limit) {
        where.part = "barrier round";
        std::byte flag{static_cast<unsigned char>(stop ? 1 : 0)}, got{0};
        for (std::size_t k = 0; k < barrier_.size(); ++k) {
            with(barrier_[k].to).send = {&flag, 1, 0, nullptr, 0, {}};
            with(barrier_[k].from).recv = {&got, 1, 0, nullptr, 0, {}};
            where.index = k + 1;
            run(where, limit);
            flag |= got;
        }
        return flag != std::byte{0};
    }

    /// What one iteration took.
    struct iteration {
        double time_s = 0;       ///< from the barrier's release to its last receive
        /// The messages from the left neighbour: first to last byte of each, summed; the bytes
        /// that came after each one's first arrival (those the intervals time); all their bytes.
        double link_s = 0;
        std::size_t link_timed_bytes = 0, link_bytes = 0;
    };

    /// One iteration of the plan. With `arrivals`, when each receive completed (seconds into
    /// the iteration, by peer) goes there.
    iteration iterate(step_label where, std::vector<std::pair<unsigned, double>>* arrivals = nullptr) {
        using region = device_memory::region;
        where.count = plan_.steps.size();
        const auto w = plan_.element_bytes;
        const region out_region = plan_.in_place() ? region::send : region::recv;
        // The data path's buffers: the host ones (or their mirrors), or under GPUDirect the device's.
        std::byte* in = direct_ ? device_address(region::send) : send_.data();
        std::byte* out = direct_ ? device_address(out_region) : plan_.in_place() ? send_.data() : recv_.data();
        const auto t0 = clock::now();
        if (plan_.self_copy) {
            const auto at = plan_.self_copy->first * w, n = plan_.self_copy->count * w;
            if (dev_) on_device("the copy of its own block", [&] { dev_->copy(out_region, at, region::send, at, n); });
            else std::memcpy(out + at, in + at, n);
        }
        iteration done;
        const unsigned left = (plan_.rank + plan_.ranks - 1) % plan_.ranks;
        for (std::size_t s = 0; s < plan_.steps.size(); ++s) {
            const auto& step = plan_.steps[s];
            for (const auto& t : step.sends) {
                const auto at = t.range.first * w, n = t.range.count * w;
                if (dev_ && !direct_) on_device("staging a send", [&] { dev_->download(in + at, region::send, at, n); });
                if (options_.corrupt && n) corrupt(in + at + w - 1);
                with(t.peer).send = {in + at, n, 0, nullptr, 0, {}};
            }
            std::size_t scratch_at = 0;
            for (const auto& t : step.recvs) {
                auto& m = with(t.peer).recv;
                const auto at = t.range.first * w, n = t.range.count * w;
                if (t.reduce && direct_) {
                    m = {out + at, n, 0, out + at, 0, {}};  // each piece summed from its slot on the device
                } else if (t.reduce) {
                    // Staged on a device, the sum is done there once the step is in, not as bytes come.
                    m = {scratch_.data() + scratch_at, n, 0, dev_ ? nullptr : out + at, 0, {}};
                    scratch_at += n;
                } else {
                    m = {out + at, n, 0, nullptr, 0, {}};
                }
            }
            where.index = s + 1;
            run(where, collective_stall_limit);
            if (dev_ && !direct_) land_on_device(step, out, out_region);
            for (const auto& a : runner_->completed()) {
                if (arrivals) arrivals->emplace_back(a.peer, std::max(seconds_between(t0, a.last), 1e-9));
                if (a.peer != left) continue;
                done.link_s += seconds_between(a.first, a.last);
                done.link_timed_bytes += a.timed_bytes;
                done.link_bytes += a.bytes;
            }
        }
        done.time_s = std::max(seconds_between(t0, clock::now()), 1e-9);
        return done;
    }

    std::uint64_t wrong() {
        if (dev_)
            on_device("reading the results back", [&] {
                dev_->download(send_.data(), device_memory::region::send, 0, send_.size());
                dev_->download(recv_.data(), device_memory::region::recv, 0, recv_.size());
            });
        return core::count_wrong_outputs(plan_, send_, recv_);
    }

    void refill() {
        core::fill_inputs(plan_, send_, recv_);
        if (dev_)
            on_device("loading the inputs", [&] {
                dev_->upload(device_memory::region::send, 0, send_.data(), send_.size());
                dev_->upload(device_memory::region::recv, 0, recv_.data(), recv_.size());
            });
    }

private:
    /// The step runner over the transport's own links: the size's device memory (GPUDirect)
    /// or its host buffers. A buffer that cannot be registered fails the size.
    std::unique_ptr<transport::mesh::step_runner> open_links_step_runner(collective_mesh& mesh,
                                                                        const std::atomic<bool>& cancel) {
        try {
            if (direct_) return mesh.links->open_step_runner(mesh, cancel, plan_.element, {}, dev_.get());
            return mesh.links->open_step_runner(mesh, cancel, plan_.element, {send_, recv_}, nullptr);
        } catch (const transport::mesh::step_setup_error& e) {
            throw collective_fault(e.what(), std::nullopt);
        }
    }

    /// The messages with `peer` in the step being set up.
    transport::mesh::peer_io& with(unsigned peer) {
        auto* io = runner_->with(peer);
        if (!io) throw collective_fault(fmt::format("this rank has no connection to rank {}", peer), peer);
        return *io;
    }

    /// Moves the step's messages; a failure ends the size (throw_step_fault).
    void run(const step_label& where, std::chrono::milliseconds limit) {
        const auto st = runner_->run(limit);
        if (!st.ok()) throw_step_fault(st, where, limit);
    }

    /// Under GPUDirect, where region `r` starts on the device (null when it has no bytes).
    std::byte* device_address(device_memory::region r) {
        auto* a = dev_->allocation(r);
        return a ? a->data() : nullptr;
    }

    /// The test hook: flips a bit of the byte at `p`, in host memory or (GPUDirect) on the device.
    void corrupt(std::byte* p) {
        if (!direct_) {
            *p ^= std::byte{0x40};
            return;
        }
        on_device("corrupting a send (test hook)", [&] {
            std::byte b{};
            dev_->download_at(&b, p, 1);
            b ^= std::byte{0x40};
            dev_->upload_at(p, &b, 1);
        });
    }

    /// A step's receives, now in the host mirrors, taken to the device: copied up, or copied
    /// up to the scratch and summed into the buffer there.
    void land_on_device(const core::schedule_step& step, const std::byte* out, device_memory::region out_region) {
        using region = device_memory::region;
        const auto w = plan_.element_bytes;
        on_device("landing a step's receives", [&] {
            std::size_t scratch_at = 0;
            for (const auto& t : step.recvs) {
                const auto at = t.range.first * w, n = t.range.count * w;
                if (t.reduce) {
                    dev_->upload(region::scratch, scratch_at, scratch_.data() + scratch_at, n);
                    dev_->add(plan_.element, out_region, at, region::scratch, scratch_at, n);
                    scratch_at += n;
                } else {
                    dev_->upload(out_region, at, out + at, n);
                }
            }
        });
    }

    /// Runs a device operation; its failure ends the size as a fault of this rank.
    template <class Op> void on_device(const char* what, Op op) {
        try {
            op();
        } catch (const std::exception& e) {
            throw collective_fault(fmt::format("device memory failed while {}: {}", what, e.what()), std::nullopt);
        }
    }

    const core::collective_plan& plan_;
    const size_run_options& options_;
    std::vector<std::byte> send_, recv_, scratch_;  // the buffers, or the device's host mirrors
    bool direct_;  // device memory over RDMA: the NIC reads and writes it (GPUDirect), no staging
    std::unique_ptr<device_memory> dev_;   // null: host memory
    std::unique_ptr<transport::mesh::step_runner> runner_;  // after the buffers it may have registered
    std::vector<core::barrier_round> barrier_;
};

}  // namespace

rank_timing measure_collective_size(const core::collective_plan& plan, collective_mesh& mesh, const size_run_options& options,
                                    const std::atomic<bool>& cancel) {
    const auto setup_start = clock::now();
    size_runner run(plan, mesh, options, cancel);
    const double setup_s = seconds_between(setup_start, clock::now());
    rank_timing out;
    double longest = 0;
    auto barrier_limit = [&](bool first) {
        // A rank waits at the barrier for the slowest rank's iteration; at the first barrier of
        // a size also for ranks still setting up their buffers, which do what this one did: twice
        // its own set-up time, at least 1 s. A flat grace (it was 10 s) let a rank frozen before
        // the first barrier hold every other for 15 s instead of the stall limit's 5.
        const double s = std::chrono::duration<double>(collective_stall_limit).count() + 2 * longest +
                         (first ? first_barrier_grace_s(setup_s) : 0);
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
    // The link from the left over the timed iterations (rank_timing::link_in_s).
    double link_s = 0, link_timed_bytes = 0;
    std::vector<double> link_bytes;
    std::optional<transport::link_counter_probe> counters;
    if (!options.link_counter_target.empty()) {
        auto nic_and_port = options.link_counter_target;
        if (mesh.links) mesh.links->count_port(nic_and_port);
        counters.emplace(options.sysfs_root, nic_and_port);
        counters->read_before();
    }
    const auto send_peers = tcp_send_peers(plan);
    const auto tcp_before = tcp_snapshots(mesh, send_peers);
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
        if (plan.times_link_from_left) {
            link_s += it.link_s;
            link_timed_bytes += static_cast<double>(it.link_timed_bytes);
            link_bytes.push_back(static_cast<double>(it.link_bytes));
        }
        if (incast_receiver)
            for (const auto& [sender, at] : arrivals) out.from_sender_s[sender].push_back(at);
    }
    if (tcp_before) {
        if (const auto tcp_after = tcp_snapshots(mesh, send_peers)) {
            std::vector<transport::tcp::stream_tcp_readings> sockets;
            for (std::size_t k = 0; k < send_peers.size(); ++k) sockets.push_back({(*tcp_before)[k], {}, (*tcp_after)[k]});
            out.send_tcp = transport::tcp::tcp_counters_of(sockets);
        }
    }
    if (counters) {
        counters->read_after();
        out.link_counters = counters->counters();
        for (const auto& dir : counters->take_unreadable())
            log_warn("link counters: cannot read {}: this rank's NIC counters are left out of the results (said once)", dir);
    }
    // Each iteration's bytes at the rate the link delivered them over all iterations, never
    // longer than the iteration; nothing when no byte was timed.
    if (link_timed_bytes > 0 && link_s > 0)
        for (std::size_t i = 0; i < link_bytes.size(); ++i)
            out.link_in_s.push_back(std::clamp(link_bytes[i] * link_s / link_timed_bytes, 1e-9, out.iteration_s[i]));
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
