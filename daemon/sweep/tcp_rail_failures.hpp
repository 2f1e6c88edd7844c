#pragma once
/// A rail whose link goes down mid-point (docs/rails.md): in a TCP point over two rails or
/// more, streams that failed on some rails while another rail's streams did not end only those
/// rails. Both sides name their failed rails (the peer in point_done's "failed_rails"), the
/// initiator leaves their streams out of the window and the run measures its later points
/// without them (point_begin's "rails_dropped"). Once per point, never per message.
#include "core/rail_figures.hpp"
#include "core/run_spec.hpp"
#include "transport/tcp/point_side.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace meshperf::daemon::tcp_rails {

namespace tcp = transport::tcp;

/// Stream `i`'s index among the streams of its role (what rail_of_stream counts); the
/// same on both sides, the peer's roles being the mirror of the initiator's.
std::size_t index_in_role(const std::vector<tcp::stream_role>& roles, std::size_t i);

/// A side's first stream failure in words; with rails, naming the failed stream's rail, so a
/// rail whose link went down mid-point is named in the point's error (at either side).
std::string stream_error(const tcp::point_side* side, const core::run_spec& spec, const std::vector<tcp::stream_role>& roles);

/// The point's spec: the run's, less the rails named in `dropped` (failed in an earlier point).
core::run_spec point_spec(const core::run_spec& run, const std::vector<core::rail_failure>& dropped);

/// Whether a point of `spec` (its rails already the point's) may lose a rail and keep the
/// others: two rails or more, a bandwidth or bidir test, adaptive or duration (a fixed count
/// has no shared window to keep).
bool tolerates_rail_failures(const core::run_spec& spec, core::test_kind test);

/// This side's failed streams as failed rails, each error naming the stream and rail and
/// prefixed with `where` ("at the initiator", "at the peer").
std::vector<core::rail_failure> side_rail_failures(const tcp::point_side& side, const core::run_spec& spec,
                                                   const std::vector<tcp::stream_role>& roles, const std::string& where);

/// The side's error for the point: empty when none failed, or when `tolerant` and the failed
/// streams' rails leave another rail working (rails_survive); else stream_error.
std::string side_error(const tcp::point_side* side, const core::run_spec& spec, const std::vector<tcp::stream_role>& roles,
                       bool tolerant);

nlohmann::json to_json(const std::vector<core::rail_failure>&);
/// The peer's "failed_rails" of point_done (absent: none), each naming a rail of `spec`.
/// Throws session_error when malformed.
std::vector<core::rail_failure> peer_rail_failures(const nlohmann::json& peer_done, const core::run_spec& spec);

/// The rails a point_begin leaves out ("rails_dropped", names of the run's rails), as
/// failures without errors. Throws session_error when malformed or naming no rail of `run`.
std::vector<core::rail_failure> dropped_from_begin(const nlohmann::json& begin, const core::run_spec& run);

/// One flag per stream of a flow of `streams` streams: whether it runs on a failed rail.
std::vector<bool> streams_on(const std::vector<core::rail_failure>& failed, const core::run_spec& spec, std::size_t streams);

/// The failed rails of a point at the initiator: this side's and the peer's (point_done).
/// Throws session_error, each rail with its error, when no rail of the point is left working.
std::vector<core::rail_failure> point_rail_failures(const tcp::point_side& side, const nlohmann::json& peer_done,
                                                    const core::run_spec& spec, const std::vector<tcp::stream_role>& roles);

/// The initiator's record of a run's failed rails, kept by its transport across points.
struct run_rails {
    std::vector<core::rail_failure> dropped;    ///< each with "not measured: it failed in point N ..."
    std::vector<std::string>* warnings = nullptr;  ///< the run's warnings
    /// Records the rails that failed in point `index` (`test`, `size`): left out of the later
    /// points, and a run warning naming each.
    void drop(const std::vector<core::rail_failure>& failed, std::size_t index, core::test_kind test, std::uint64_t size);
    /// The dropped rails' names, for point_begin's "rails_dropped".
    nlohmann::json names() const;
};

}  // namespace meshperf::daemon::tcp_rails
