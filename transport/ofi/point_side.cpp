#include "transport/ofi/point_side.hpp"

#include "core/units.hpp"
#include "transport/round_trip_batches.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fmt/format.h>

namespace meshperf::transport::ofi {
namespace {

std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

loop_role mirror(loop_role r) { return r == loop_role::active ? loop_role::passive : loop_role::active; }

}  // namespace

std::vector<loop_role> initiator_roles(core::test_kind test, std::uint32_t streams, bool reverse) {
    switch (test) {
        case core::test_kind::latency: return {loop_role::active};
        case core::test_kind::bandwidth: return std::vector<loop_role>(streams, reverse ? loop_role::passive : loop_role::active);
        case core::test_kind::bidir: {
            std::vector<loop_role> r(streams, loop_role::active);
            r.insert(r.end(), streams, loop_role::passive);
            return r;
        }
    }
    return {};
}

std::vector<loop_role> peer_roles(core::test_kind test, std::uint32_t streams, bool reverse) {
    auto roles = initiator_roles(test, streams, reverse);
    for (auto& r : roles) r = mirror(r);
    return roles;
}

std::uint32_t endpoints_for(const core::run_spec& s) {
    std::uint32_t n = 1;
    for (auto t : s.tests) n = std::max<std::uint32_t>(n, static_cast<std::uint32_t>(initiator_roles(t, s.streams, s.reverse).size()));
    return n;
}

struct point_side::loop {
    loop_role role;
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

    const verify_report* verification() const {
        return lat_active ? &lat_active->verification() : lat_passive ? &lat_passive->verification()
               : bw_passive ? &bw_passive->verification() : nullptr;
    }
};

point_side::point_side(std::vector<endpoint*> eps, const core::run_spec& spec, core::test_kind test, std::uint64_t size,
                       std::vector<loop_role> roles, const point_params& params)
    : spec_(spec), test_(test), size_(size) {
    for (std::size_t k = 0; k < roles.size() && k < eps.size(); ++k) {
        auto l = std::make_unique<loop>();
        l->role = roles[k];
        auto& ep = *eps[k];
        if (test == core::test_kind::latency) {
            if (l->role == loop_role::active) l->lat_active = std::make_unique<latency_active>(ep, params);
            else l->lat_passive = std::make_unique<latency_passive>(ep, params);
        } else {
            if (l->role == loop_role::active) l->bw_active = std::make_unique<bandwidth_active>(ep, params);
            else l->bw_passive = std::make_unique<bandwidth_passive>(ep, params);
        }
        loops_.push_back(std::move(l));
    }
}

point_side::~point_side() { abort(); }

void point_side::run(loop& l, int cpu) {
    l.where.pinned = pin_current_thread(cpu);
    l.where.cpu_at_start = current_cpu();
    const double cpu0 = thread_cpu_seconds();
    try {
        if (l.lat_active) {
            std::vector<std::uint64_t> scratch;
            const auto batch = round_trip_batches(
                [&](std::span<std::uint64_t> rtt_ns) { return l.lat_active->run(stop_active_, rtt_ns); }, scratch);
            latency_ = core::run_latency(batch, spec_, samples_, stop_active_);
            if (latency_.code != 0 && latency_.code != ECANCELED) l.error = std::strerror(latency_.code);
        } else if (l.lat_passive) {
            l.lat_passive->run(stop_passive_);
        } else if (l.bw_active) {
            l.bw_active->run(stop_active_);
        } else if (l.bw_passive) {
            l.bw_passive->run(stop_passive_);
        }
    } catch (const std::exception& e) {
        l.error = e.what();
    }
    l.cpu_s = thread_cpu_seconds() - cpu0;
    l.where.cpu_at_end = current_cpu();
    const auto end = now_ns();
    auto prev = last_end_ns_.load();
    while (prev < end && !last_end_ns_.compare_exchange_weak(prev, end)) {}
    l.done.store(true, std::memory_order_release);
}

void point_side::start(loop_role role) {
    if (!start_ns_) start_ns_ = now_ns();
    for (std::size_t i = 0; i < loops_.size(); ++i)
        if (loops_[i]->role == role && !loops_[i]->started) {
            const int cpu = cpu_for_stream(cpus_, i);
            loops_[i]->started = true;
            loops_[i]->thread = std::thread([this, i, cpu] { run(*loops_[i], cpu); });
        }
}

void point_side::start_passive() { start(loop_role::passive); }
void point_side::start_active() { start(loop_role::active); }

bool point_side::active_finished() const {
    return std::all_of(loops_.begin(), loops_.end(), [](const auto& l) { return l->role != loop_role::active || l->done.load(); });
}

void point_side::join(loop_role role) {
    for (auto& l : loops_)
        if (l->role == role && l->thread.joinable()) l->thread.join();
}

void point_side::stop_active() {
    stop_active_ = true;
    join(loop_role::active);
}

std::vector<std::uint64_t> point_side::active_messages() const {
    std::vector<std::uint64_t> out;
    for (const auto& l : loops_)
        if (l->role == loop_role::active) out.push_back(l->bw_active ? l->bw_active->messages() : 0);
    return out;
}

void point_side::finish_passive(const std::vector<std::uint64_t>& peer_active_messages) {
    std::size_t k = 0;
    for (auto& l : loops_) {
        if (l->role != loop_role::passive) continue;
        if (l->bw_passive && k < peer_active_messages.size()) l->bw_passive->expect(peer_active_messages[k]);
        ++k;
    }
    stop_passive_.store(true, std::memory_order_release);
    join(loop_role::passive);
}

void point_side::abort() noexcept {
    stop_active_ = true;
    stop_passive_ = true;
    join(loop_role::active);
    join(loop_role::passive);
}

std::vector<std::uint64_t> point_side::counted_bytes() const {
    std::vector<std::uint64_t> out;
    for (const auto& l : loops_)
        if (l->bw_passive) out.push_back(l->bw_passive->counters().bytes.load(std::memory_order_relaxed));
    return out;
}

std::size_t point_side::counting_loops() const {
    return static_cast<std::size_t>(std::count_if(loops_.begin(), loops_.end(), [](const auto& l) { return l->bw_passive != nullptr; }));
}

std::string point_side::error() const {
    for (const auto& l : loops_)
        if (l->done.load(std::memory_order_acquire) && !l->error.empty()) return l->error;
    return {};
}

bool point_side::verify_failed() const {
    return std::any_of(loops_.begin(), loops_.end(), [](const auto& l) { return l->verification() && !l->verification()->ok(); });
}

std::uint64_t point_side::verified_bytes() const {
    std::uint64_t checks = 0;
    for (const auto& l : loops_)
        if (const auto* r = l->verification(); r && r->checked > r->corrupt) checks += r->checked - r->corrupt;
    return checks * size_;
}

std::string point_side::corruption() const {
    for (std::size_t k = 0; k < loops_.size(); ++k)
        if (const auto* r = loops_[k]->verification(); r && !r->ok())
            return fmt::format("{} of {} messages received on endpoint {} differ from the pattern (first at byte {})", r->corrupt,
                               r->checked, k, r->first_bad_offset);
    return {};
}

std::vector<thread_cpu_record> point_side::thread_cpus() const {
    std::vector<thread_cpu_record> out;
    for (const auto& l : loops_)
        if (l->started) out.push_back(l->where);
    return out;
}

double point_side::cpu_seconds() const {
    double s = 0;
    for (const auto& l : loops_) s += l->cpu_s;
    return s;
}

double point_side::wall_seconds() const {
    const auto end = last_end_ns_.load();
    return end > start_ns_ && start_ns_ ? core::seconds_from_ns(static_cast<double>(end - start_ns_)) : 0.0;
}

}  // namespace meshperf::transport::ofi
