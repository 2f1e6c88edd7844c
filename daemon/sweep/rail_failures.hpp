#pragma once
/// A rail whose link goes down mid-point, whatever the transport (docs/rails.md): in an
/// adaptive or duration bandwidth or bidir point over two rails or more, the rails whose data
/// paths failed end alone and the others finish the window. Both sides name their failed
/// rails (the peer in point_done's "failed_rails"), the initiator leaves their streams out of
/// the window and the run measures its later points without them (point_begin's
/// "rails_dropped"). The transports say which of their streams failed (tcp_rail_failures.hpp
/// for TCP streams, transport/rdma/rail_point_side.hpp for QPs); this is what they share.
#include "core/rail_figures.hpp"
#include "core/run_spec.hpp"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace meshperf::daemon::point_rails {

/// The point's spec: the run's, less the rails named in `dropped` (failed in an earlier point).
core::run_spec point_spec(const core::run_spec& run, const std::vector<core::rail_failure>& dropped);

/// Whether a point of `spec` (its rails already the point's) may lose a rail and keep the
/// others: two rails or more, a bandwidth or bidir test, adaptive or duration (a fixed count
/// has no shared window to keep).
bool tolerates_rail_failures(const core::run_spec& spec, core::test_kind test);

/// Whether the initiator's point_begin lets this point (of `spec`, the point's) lose a rail:
/// it said "rail_failures" (an older initiator does not) and the point allows it.
bool tolerant_by_begin(const nlohmann::json& begin, const core::run_spec& spec, core::test_kind test);

nlohmann::json to_json(const std::vector<core::rail_failure>&);
/// The peer's "failed_rails" of point_done (absent: none), each naming a rail of `spec`.
/// Throws session_error when malformed.
std::vector<core::rail_failure> peer_rail_failures(const nlohmann::json& peer_done, const core::run_spec& spec);

/// The rails a point_begin leaves out ("rails_dropped", names of the run's rails), as
/// failures without errors. Throws session_error when malformed or naming no rail of `run`.
std::vector<core::rail_failure> dropped_from_begin(const nlohmann::json& begin, const core::run_spec& run);

/// One flag per stream of a flow of `streams` streams, `per_rail` streams a rail (rail-major):
/// whether it runs on a failed rail.
std::vector<bool> streams_on(const std::vector<core::rail_failure>& failed, const core::run_spec& spec, std::size_t streams,
                             std::size_t per_rail);

/// `failed` (this side's and the peer's failed rails, merged) when a rail of the point is left
/// working; throws session_error naming each rail with its error when none is.
std::vector<core::rail_failure> with_a_survivor(std::vector<core::rail_failure> failed, const core::run_spec& spec);

/// The initiator's record of a run's failed rails, kept by its transport across points.
struct run_rails {
    std::vector<core::rail_failure> dropped;    ///< each with "not measured: it failed in point N ..."
    std::vector<std::string>* warnings = nullptr;  ///< the run's warnings
    /// Records the rails that failed in point `index` (`test`, `size`): left out of the later
    /// points, and a run warning naming each.
    void drop(const std::vector<core::rail_failure>& failed, std::size_t index, core::test_kind test, std::uint64_t size);
    /// point_begin's fields about rails: "rail_failures" when the point is `tolerant`,
    /// "rails_dropped" (the dropped rails' names) when any.
    void add_begin_fields(nlohmann::json& begin, bool tolerant) const;
    /// Before point `index` (`test`, `size`): each dropped rail of `run` for which `answers`
    /// is true (its link carries a connection again) is measured again from this point on, and
    /// a run warning says so. Returns the names of the rails taken back.
    std::vector<std::string> readmit(const core::run_spec& run, std::size_t index, core::test_kind test, std::uint64_t size,
                                     const std::function<bool(const core::rail_pair&)>& answers);
};

}  // namespace meshperf::daemon::point_rails
