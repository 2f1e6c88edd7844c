#include "transport/rdma/point_side.hpp"

#include "core/units.hpp"
#include "transport/round_trip_batches.hpp"
#include "core/error.hpp"
#include "transport/stream_thread.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace meshperf::transport::rdma {

std::vector<qp_role> initiator_qp_roles(core::test_kind test, std::uint32_t streams, bool reverse) {
    switch (test) {
        case core::test_kind::latency: return {qp_role::active};
        case core::test_kind::bandwidth: return std::vector<qp_role>(streams, reverse ? qp_role::passive : qp_role::active);
        case core::test_kind::bidir: {
            std::vector<qp_role> r(streams, qp_role::active);
            r.insert(r.end(), streams, qp_role::passive);
            return r;
        }
    }
    return {};
}

qp_role mirror(qp_role r) { return r == qp_role::active ? qp_role::passive : qp_role::active; }

std::uint32_t qps_for(const core::run_spec& s) {
    std::uint32_t n = 1;
    for (auto t : s.tests) n = std::max<std::uint32_t>(n, static_cast<std::uint32_t>(initiator_qp_roles(t, s.streams, s.reverse).size()));
    return n;
}

bool active_counts(core::rdma_op op) { return op != core::rdma_op::send; }
bool counting_side_receives(core::rdma_op op) { return op != core::rdma_op::write; }

struct point_side::runner {
    qp_role role;
    std::unique_ptr<latency_active> lat_active;
    std::unique_ptr<latency_passive> lat_passive;
    std::unique_ptr<bandwidth_active> bw_active;
    std::unique_ptr<bandwidth_passive> bw_passive;
    std::thread thread;
    std::atomic<bool> done{false};
    std::string error;
    double cpu_s = 0;
    bool started = false;
    thread_cpu_record where;

    bool counts(core::rdma_op op) const { return bw_active ? active_counts(op) : (bw_passive && !active_counts(op)); }
    const bandwidth_counters* counters() const {
        return bw_active ? &bw_active->counters() : bw_passive ? &bw_passive->counters() : nullptr;
    }
    /// Messages (or final regions) compared with the pattern and found equal.
    std::uint64_t verified_checks() const {
        const verify_report* r = lat_active ? &lat_active->verification()
                               : lat_passive ? &lat_passive->verification()
                               : bw_active ? &bw_active->verification()
                               : bw_passive ? &bw_passive->verification() : nullptr;
        return r && r->checked > r->corrupt ? r->checked - r->corrupt : 0;
    }
    bool verify_failed() const {
        if (lat_active) return !lat_active->verification().ok();
        if (lat_passive) return !lat_passive->verification().ok();
        if (bw_active) return !bw_active->verification().ok();
        return bw_passive && !bw_passive->verification().ok();
    }
};

point_side::point_side(endpoint& ep, const core::run_spec& spec, core::test_kind test, std::uint64_t size,
                       std::vector<qp_role> roles, std::uint32_t seed, bool corrupt_sent_for_test)
    : ep_(ep), spec_(spec), test_(test), size_(size) {
    point_params p;
    p.op = spec.op;
    p.size = size;
    p.tx_depth = spec.tx_depth;
    p.verify = spec.verify;
    p.pattern_seed = seed;
    p.corrupt_sent_for_test = corrupt_sent_for_test;
    for (std::size_t qp = 0; qp < roles.size(); ++qp) {
        auto r = std::make_unique<runner>();
        r->role = roles[qp];
        if (test == core::test_kind::latency) {
            if (r->role == qp_role::active) r->lat_active = std::make_unique<latency_active>(ep, qp, p);
            else r->lat_passive = std::make_unique<latency_passive>(ep, qp, p);
        } else {
            if (r->role == qp_role::active) r->bw_active = std::make_unique<bandwidth_active>(ep, qp, p);
            else r->bw_passive = std::make_unique<bandwidth_passive>(ep, qp, p);
        }
        runners_.push_back(std::move(r));
    }
}

point_side::~point_side() { abort(); }

void point_side::run(runner& r, int cpu) {
    r.where.pinned = transport::pin_current_thread(cpu);
    r.where.cpu_at_start = transport::current_cpu();
    const double cpu0 = transport::thread_cpu_seconds();
    try {
        if (r.lat_active) {
            std::vector<std::uint64_t> scratch;
            const auto batch = round_trip_batches(
                [&](std::span<std::uint64_t> rtt_ns) { return r.lat_active->run(stop_active_, rtt_ns); }, scratch);
            latency_ = core::run_latency(batch, spec_, samples_, stop_active_);
            if (latency_.code != 0 && latency_.code != ECANCELED) r.error = std::strerror(latency_.code);
        } else if (r.lat_passive) {
            r.lat_passive->run(stop_passive_);
        } else if (r.bw_active) {
            r.bw_active->run(stop_active_);
        } else if (r.bw_passive) {
            r.bw_passive->run(stop_passive_);
        }
    } catch (const std::exception& e) {
        r.error = e.what();
    }
    r.cpu_s = transport::thread_cpu_seconds() - cpu0;
    r.where.cpu_at_end = transport::current_cpu();
    const auto end = steady_now_ns();
    auto prev = last_end_ns_.load();
    while (prev < end && !last_end_ns_.compare_exchange_weak(prev, end)) {}
    r.done = true;
}

void point_side::start_passive() {
    if (!start_ns_) start_ns_ = steady_now_ns();
    for (std::size_t i = 0; i < runners_.size(); ++i)
        if (runners_[i]->role == qp_role::passive) {
            const int cpu = cpu_for_stream(cpus_, i);
            runners_[i]->started = true;
            runners_[i]->thread = std::thread([this, i, cpu] { run(*runners_[i], cpu); });
        }
}

void point_side::start_active() {
    if (!start_ns_) start_ns_ = steady_now_ns();
    for (std::size_t i = 0; i < runners_.size(); ++i)
        if (runners_[i]->role == qp_role::active) {
            const int cpu = cpu_for_stream(cpus_, i);
            runners_[i]->started = true;
            runners_[i]->thread = std::thread([this, i, cpu] { run(*runners_[i], cpu); });
        }
}

bool point_side::active_finished() const {
    return std::all_of(runners_.begin(), runners_.end(), [](const auto& r) { return r->role != qp_role::active || r->done.load(); });
}

void point_side::join(bool active) {
    for (auto& r : runners_)
        if ((r->role == qp_role::active) == active && r->thread.joinable()) r->thread.join();
}

void point_side::stop_active() {
    stop_active_ = true;
    join(true);
}

std::vector<std::uint64_t> point_side::active_messages() const {
    std::vector<std::uint64_t> out;
    for (const auto& r : runners_)
        if (r->role == qp_role::active) out.push_back(r->bw_active ? r->bw_active->messages() : 0);
    return out;
}

void point_side::finish_passive(const std::vector<std::uint64_t>& peer_active_messages) {
    std::size_t k = 0;
    for (auto& r : runners_)
        if (r->role == qp_role::passive && r->bw_passive && k < peer_active_messages.size()) r->bw_passive->expect(peer_active_messages[k++]);
        else if (r->role == qp_role::passive) ++k;
    stop_passive_ = true;
    join(false);
}

void point_side::abort() {
    stop_active_ = true;
    stop_passive_ = true;
    join(true);
    join(false);
}

std::vector<std::uint64_t> point_side::counted_bytes() const {
    std::vector<std::uint64_t> out;
    for (const auto& r : runners_)
        if (r->counts(spec_.op)) out.push_back(r->counters()->load().bytes);
    return out;
}

std::size_t point_side::counting_runners() const {
    return static_cast<std::size_t>(std::count_if(runners_.begin(), runners_.end(), [&](const auto& r) { return r->counts(spec_.op); }));
}

std::string point_side::error() const {
    // Only a runner that has ended: its thread wrote the error before it set `done`.
    for (const auto& r : runners_)
        if (r->done.load(std::memory_order_acquire) && !r->error.empty()) return r->error;
    return {};
}

std::uint64_t point_side::verified_bytes() const {
    std::uint64_t checks = 0;
    for (const auto& r : runners_) checks += r->verified_checks();
    return checks * size_;  // each check compares one message (or final region) of the point's size
}

bool point_side::verify_failed() const {
    return std::any_of(runners_.begin(), runners_.end(), [](const auto& r) { return r->verify_failed(); });
}

std::vector<thread_cpu_record> point_side::thread_cpus() const {
    std::vector<thread_cpu_record> out;
    for (const auto& r : runners_)
        if (r->started) out.push_back(r->where);
    return out;
}

double point_side::cpu_seconds() const {
    double s = 0;
    for (const auto& r : runners_) s += r->cpu_s;
    return s;
}

double point_side::wall_seconds() const {
    const auto end = last_end_ns_.load();
    return end > start_ns_ && start_ns_ ? core::seconds_from_ns(static_cast<double>(end - start_ns_)) : 0.0;
}

}  // namespace meshperf::transport::rdma
