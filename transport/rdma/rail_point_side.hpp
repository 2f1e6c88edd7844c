#pragma once
/// One daemon's side of an RDMA point over one endpoint, or over several at once (one per
/// rail, each on the device that holds the rail's address): a point_side per endpoint, all
/// with the same QP roles, presented as one. Runners are rail-major (rail 0's, then rail
/// 1's, ...), as a run over rails numbers its streams (core/rail_figures.hpp splits the
/// figures by that order).
#include "core/rail_figures.hpp"
#include "transport/rdma/point_side.hpp"

#include <memory>
#include <string>
#include <vector>

namespace meshperf::transport::rdma {

class rail_point_side {
public:
    /// `rails`: each endpoint's rail name, for errors ("rail ra1: ..."); empty for one
    /// endpoint without rails. `corrupt_sent_for_test`: point_side's test hook, on every
    /// rail. Throws as point_side does.
    rail_point_side(const std::vector<endpoint*>& endpoints, const std::vector<std::string>& rails, const core::run_spec& spec,
                    core::test_kind test, std::uint64_t size, const std::vector<qp_role>& roles, std::uint32_t seed,
                    bool corrupt_sent_for_test = false);

    /// Round-robin over every rail's runners (rail-major), as one point_side pins its own.
    void pin_to(const std::vector<int>& cpus);
    void start_passive();
    void start_active();
    bool active_finished() const;
    void stop_active();
    /// Each rail's active runners' messages, rail-major. With `zero_failed_rails`, each
    /// runner of a rail whose runners failed counts 0 (its data path is gone: the other
    /// side's passive runners on it wait for nothing, and check no region for data).
    std::vector<std::uint64_t> active_messages(bool zero_failed_rails = false) const;
    /// The peer's counts, rail-major: each rail gets its share (a list of another length
    /// leaves the passive runners to drain until their CQs are quiet).
    void finish_passive(const std::vector<std::uint64_t>& peer_active_messages);
    void abort();

    std::vector<std::uint64_t> counted_bytes() const;
    std::size_t counting_runners() const;

    /// The first error, with its rail's name when there are rails. With
    /// `failed_rails_alone`, empty while some rail has no error (failed_rails() names the
    /// others): a rail whose link went down ends alone (docs/rails.md).
    std::string error(bool failed_rails_alone = false) const;
    /// Each rail with a runner that ended in error, and that error prefixed with `where`
    /// ("rail NAME: RDMA failed at the peer: ..."). Empty without rails. Complete once joined.
    std::vector<core::rail_failure> failed_rails(const std::string& where) const;
    bool verify_failed() const;
    /// Bytes compared with the pattern here and found equal, every rail together.
    std::uint64_t verified_bytes() const;
    double cpu_seconds() const;
    double wall_seconds() const;
    std::vector<thread_cpu_record> thread_cpus() const;
    /// The latency of the first (only) endpoint: latency runs over one rail at a time.
    const core::latency_outcome& latency() const { return sides_.front()->latency(); }

private:
    std::vector<std::unique_ptr<point_side>> sides_;
    std::vector<std::string> rails_;
    std::size_t passive_per_side_ = 0;
    std::size_t runners_per_side_ = 0;
};

}  // namespace meshperf::transport::rdma
