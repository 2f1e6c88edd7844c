#include "transport/rdma/rail_point_side.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::transport::rdma {

rail_point_side::rail_point_side(const std::vector<endpoint*>& endpoints, const std::vector<std::string>& rails,
                                 const core::run_spec& spec, core::test_kind test, std::uint64_t size,
                                 const std::vector<qp_role>& roles, std::uint32_t seed)
    : rails_(rails),
      passive_per_side_(static_cast<std::size_t>(std::count(roles.begin(), roles.end(), qp_role::passive))) {
    for (auto* ep : endpoints) sides_.push_back(std::make_unique<point_side>(*ep, spec, test, size, roles, seed));
}

void rail_point_side::pin_to(const std::vector<int>& cpus) {
    for (auto& s : sides_) s->pin_to(cpus);
}

void rail_point_side::start_passive() {
    for (auto& s : sides_) s->start_passive();
}

void rail_point_side::start_active() {
    for (auto& s : sides_) s->start_active();
}

bool rail_point_side::active_finished() const {
    return std::all_of(sides_.begin(), sides_.end(), [](const auto& s) { return s->active_finished(); });
}

void rail_point_side::stop_active() {
    for (auto& s : sides_) s->stop_active();
}

std::vector<std::uint64_t> rail_point_side::active_messages() const {
    std::vector<std::uint64_t> out;
    for (const auto& s : sides_) {
        const auto m = s->active_messages();
        out.insert(out.end(), m.begin(), m.end());
    }
    return out;
}

void rail_point_side::finish_passive(const std::vector<std::uint64_t>& peer_active_messages) {
    const bool split = peer_active_messages.size() == passive_per_side_ * sides_.size();
    for (std::size_t k = 0; k < sides_.size(); ++k) {
        std::vector<std::uint64_t> mine;
        if (split)
            mine.assign(peer_active_messages.begin() + static_cast<std::ptrdiff_t>(k * passive_per_side_),
                        peer_active_messages.begin() + static_cast<std::ptrdiff_t>((k + 1) * passive_per_side_));
        sides_[k]->finish_passive(mine);
    }
}

void rail_point_side::abort() {
    for (auto& s : sides_) s->abort();
}

std::vector<std::uint64_t> rail_point_side::counted_bytes() const {
    std::vector<std::uint64_t> out;
    for (const auto& s : sides_) {
        const auto b = s->counted_bytes();
        out.insert(out.end(), b.begin(), b.end());
    }
    return out;
}

std::size_t rail_point_side::counting_runners() const {
    std::size_t n = 0;
    for (const auto& s : sides_) n += s->counting_runners();
    return n;
}

std::string rail_point_side::error() const {
    for (std::size_t k = 0; k < sides_.size(); ++k)
        if (auto e = sides_[k]->error(); !e.empty()) return k < rails_.size() ? fmt::format("rail {}: {}", rails_[k], e) : e;
    return {};
}

bool rail_point_side::verify_failed() const {
    return std::any_of(sides_.begin(), sides_.end(), [](const auto& s) { return s->verify_failed(); });
}

double rail_point_side::cpu_seconds() const {
    double s = 0;
    for (const auto& side : sides_) s += side->cpu_seconds();
    return s;
}

double rail_point_side::wall_seconds() const {
    double s = 0;
    for (const auto& side : sides_) s = std::max(s, side->wall_seconds());
    return s;
}

std::vector<thread_cpu_record> rail_point_side::thread_cpus() const {
    std::vector<thread_cpu_record> out;
    for (const auto& s : sides_) {
        const auto t = s->thread_cpus();
        out.insert(out.end(), t.begin(), t.end());
    }
    return out;
}

}  // namespace meshperf::transport::rdma
