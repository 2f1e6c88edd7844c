#pragma once
/// Each rail's share of a bandwidth point measured over several rails at once: its
/// streams' rates added up, and that sum against the rail's link rate (docs/rails.md).
#include "core/rail_spec.hpp"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::core {

/// One rail of a bandwidth or bidir point.
struct rail_figures {
    std::string name;                     ///< rail_pair::name (the initiator's NIC)
    double gbit_per_s = 0;                ///< its streams together, every direction of the point
    std::vector<double> flow_gbit_per_s;  ///< per flow, in the order of point_result::flows
    std::optional<double> rate_gbit;      ///< the rail's link rate (rail_pair::rate_gbit)
    /// gbit_per_s / (rate_gbit × flows): the share of the link the rail carried (a bidir
    /// point can use the rate in each direction); empty when the rate is unknown.
    std::optional<double> rate_fraction;
    /// The rail's streams failed (its link went down mid-point, or in an earlier point of the
    /// run, which then measured without it): its figures are left out of the point's
    /// (zero here) and `error` says why.
    bool failed = false;
    std::string error;
};

/// A rail whose streams failed in a point while other rails' did not: its name
/// (rail_pair::name) and the first failure in words.
struct rail_failure {
    std::string name;
    std::string error;
};

/// Adds `more` to `failures`, one entry per rail (the first error of a rail is kept).
void merge_rail_failures(std::vector<rail_failure>& failures, const std::vector<rail_failure>& more);

/// Whether a point over `rails` can keep its figures despite `failed`: at least two rails,
/// and at least one that did not fail. Without rails, or when every rail failed, the point fails.
bool rails_survive(const std::vector<rail_pair>& rails, const std::vector<rail_failure>& failed);

/// `rails` with every rail named in `failed` marked failed with its error and its figures zeroed.
void mark_failed_rails(std::vector<rail_figures>& rails, const std::vector<rail_failure>& failed);

/// The point's rails in the run's order: `measured` (the rails of the point) with an entry for
/// each rail of `all` that the point left out because it failed earlier (`dropped`: failed,
/// its error, zero figures for `flows` flows, the rail's rate).
std::vector<rail_figures> with_dropped_rails(std::vector<rail_figures> measured, const std::vector<rail_pair>& all,
                                             const std::vector<rail_failure>& dropped, std::size_t flows);

/// Splits a point's flows by rail, given each flow's per-stream rates
/// (flow_figures::stream_gbit_per_s, in the order of point_result::flows): stream i of a
/// flow is rail rail_of_stream(i, streams_per_rail)'s. A rail's rate is the sum of its streams' rates (over the flow's
/// window for adaptive and duration points, so the rails add up to the flow; each over its
/// own window for fixed-count points). Throws insane_figure when a flow's stream count is
/// not rails × streams_per_rail.
std::vector<rail_figures> split_by_rail(const std::vector<std::vector<double>>& flow_stream_gbit, const std::vector<rail_pair>& rails,
                                        std::uint32_t streams_per_rail);

/// One warning per rail that moved nothing in the measured window while the point as a
/// whole did ("rail ens2: no bytes in the measured window ..."): its link is down, or its
/// route leaves by another interface, with the `ip route get` that shows which (the rail's
/// addresses from `pairs`, the run's rails). A failed rail's warning gives its error instead.
std::vector<std::string> rail_warnings(const std::vector<rail_figures>&, const std::vector<rail_pair>& pairs);

/// Throws insane_figure unless every figure is finite and non-negative and gbit_per_s is
/// the sum of flow_gbit_per_s, and a failed rail says why.
void check_sane(const rail_figures&);

nlohmann::json to_json(const rail_figures&);
rail_figures rail_figures_from_json(const nlohmann::json&);

}  // namespace meshperf::core
