#pragma once
/// A rail whose link goes down mid-point, over TCP (docs/rails.md; what every transport
/// shares is in rail_failures.hpp): which rails a side's failed data streams are on, and the
/// side's error once a failed rail is left to fail alone. Once per point, never per message.
#include "daemon/sweep/rail_failures.hpp"
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

/// This side's failed streams as failed rails, each error naming the stream and rail and
/// prefixed with `where` ("at the initiator", "at the peer").
std::vector<core::rail_failure> side_rail_failures(const tcp::point_side& side, const core::run_spec& spec,
                                                   const std::vector<tcp::stream_role>& roles, const std::string& where);

/// The side's error for the point: empty when none failed, or when `tolerant` and the failed
/// streams' rails leave another rail working (rails_survive); else stream_error.
std::string side_error(const tcp::point_side* side, const core::run_spec& spec, const std::vector<tcp::stream_role>& roles,
                       bool tolerant);

/// The failed rails of a point at the initiator: this side's and the peer's (point_done).
/// Throws session_error, each rail with its error, when no rail of the point is left working.
std::vector<core::rail_failure> point_rail_failures(const tcp::point_side& side, const nlohmann::json& peer_done,
                                                    const core::run_spec& spec, const std::vector<tcp::stream_role>& roles);

}  // namespace meshperf::daemon::tcp_rails
