#include "transport/rdma/rail_point_side.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::transport::rdma {

namespace {

/// `part(side)` of every side, one after the other (rail-major).
template <typename Part>
auto concat(const std::vector<std::unique_ptr<point_side>>& sides, Part part) {
    decltype(part(*sides.front())) out;
    for (const auto& s : sides) {
        auto p = part(*s);
        out.insert(out.end(), p.begin(), p.end());
    }
    return out;
}

}  // namespace

rail_point_side::rail_point_side(const std::vector<endpoint*>& endpoints, const std::vector<std::string>& rails,
                                 const core::run_spec& spec, core::test_kind test, std::uint64_t size,
                                 const std::vector<qp_role>& roles, std::uint32_t seed, bool corrupt_sent_for_test)
    : rails_(rails),
      passive_per_side_(static_cast<std::size_t>(std::count(roles.begin(), roles.end(), qp_role::passive))),
      runners_per_side_(roles.size()) {
    for (auto* ep : endpoints) sides_.push_back(std::make_unique<point_side>(*ep, spec, test, size, roles, seed, corrupt_sent_for_test));
}

void rail_point_side::pin_to(const std::vector<int>& cpus) {
    // Round-robin over all rails' runners, as one point_side would: rail k's first runner
    // takes the CPU after rail k-1's last (each side starts its own round at cpus[0]).
    std::size_t next = 0;
    for (auto& s : sides_) {
        std::vector<int> rotated;
        for (std::size_t i = 0; i < cpus.size(); ++i) rotated.push_back(cpus[(next + i) % cpus.size()]);
        s->pin_to(std::move(rotated));
        next += runners_per_side_;
    }
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

std::vector<std::uint64_t> rail_point_side::active_messages(bool zero_failed_rails) const {
    return concat(sides_, [&](const point_side& s) {
        auto counts = s.active_messages();
        if (zero_failed_rails && !rails_.empty() && !s.error().empty()) std::fill(counts.begin(), counts.end(), 0);
        return counts;
    });
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
    return concat(sides_, [](const point_side& s) { return s.counted_bytes(); });
}

std::size_t rail_point_side::counting_runners() const {
    std::size_t n = 0;
    for (const auto& s : sides_) n += s->counting_runners();
    return n;
}

std::string rail_point_side::error(bool failed_rails_alone) const {
    if (failed_rails_alone && !rails_.empty() &&
        std::any_of(sides_.begin(), sides_.end(), [](const auto& s) { return s->error().empty(); }))
        return {};
    for (std::size_t k = 0; k < sides_.size(); ++k)
        if (auto e = sides_[k]->error(); !e.empty()) return k < rails_.size() ? fmt::format("rail {}: {}", rails_[k], e) : e;
    return {};
}

std::vector<core::rail_failure> rail_point_side::failed_rails(const std::string& where) const {
    std::vector<core::rail_failure> out;
    for (std::size_t k = 0; k < sides_.size() && k < rails_.size(); ++k)
        if (auto e = sides_[k]->error(); !e.empty()) out.push_back({rails_[k], fmt::format("rail {}: RDMA failed {}: {}", rails_[k], where, e)});
    return out;
}

std::uint64_t rail_point_side::verified_bytes() const {
    std::uint64_t sum = 0;
    for (const auto& s : sides_) sum += s->verified_bytes();
    return sum;
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
    return concat(sides_, [](const point_side& s) { return s.thread_cpus(); });
}

}  // namespace meshperf::transport::rdma
