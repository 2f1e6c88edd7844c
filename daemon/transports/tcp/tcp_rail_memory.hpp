#pragma once
/// Where a TCP point's streams keep their messages: host memory, one GPU for the whole run
/// (--memory cuda:N), or over rails each rail's own memory (--memory cuda:auto: the GPU
/// nearest that rail's NIC, resolved by the CLI into the spec's rails, docs/rails.md).
#include "core/run_spec.hpp"
#include "transport/tcp/point_side.hpp"
#include "transport/tcp/staged_stream.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// This side's memory domain for stream `i` of a point whose streams have `roles` (in the
/// point's stream order): its rail's (core::rail_memory of rail_of_stream over the stream's
/// index among its role), or the run's without rails. `point`: the point's spec (the run's
/// less the rails dropped after failing).
const std::string& stream_memory(const core::run_spec& point, const std::vector<transport::tcp::stream_role>& roles,
                                 std::size_t i, bool initiator);

/// This side's TCP stream memory for a run: one staged-stream factory per GPU memory domain
/// of its rails, made when the run opens (so a GPU that cannot be used fails the run before
/// its first point), and for each point a factory giving each stream its rail's.
class side_stream_memory {
public:
    /// Makes the factory of one domain ("cuda:N"); daemon::tcp_stream_memory, or a test's.
    using domain_factory = std::function<transport::tcp::staged_stream_factory(const std::string& domain, const core::run_spec&)>;

    /// Host memory on every stream.
    side_stream_memory() = default;
    /// The memories of `initiator`'s side of `run`; throws what `make` throws (a GPU that
    /// cannot be used, with the reason).
    side_stream_memory(const core::run_spec& run, bool initiator, const domain_factory& make);

    /// The factory of one point's streams: each stream's staged memory on its rail's domain
    /// (null for host memory); empty when every stream of the run is in host memory. It
    /// refers to `point` and `roles`, which must outlive its use (point_side calls it in its
    /// constructor only).
    transport::tcp::staged_stream_factory for_point(const core::run_spec& point,
                                                    const std::vector<transport::tcp::stream_role>& roles) const;

private:
    bool initiator_ = true;
    std::map<std::string, transport::tcp::staged_stream_factory> by_domain_;  // GPU domains only
};

/// Sentences for the run about this side's memory (empty for host memory): without rails
/// memory_notes for the run's domain and `session_interface`; over rails one set per rail in
/// GPU memory, naming the rail (this side's name of it) and its interface.
std::vector<std::string> side_memory_notes(const core::run_spec& run, bool initiator, const std::string& session_interface);

}  // namespace meshperf::daemon
