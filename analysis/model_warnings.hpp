#pragma once
/// Warnings for predictions made with a fitted α–β model (`meshperf plan --from`): a
/// prediction that needs the model far outside the sizes it was fitted on, a model that
/// misses its own points, a model too short of points to be checked. Pure, no I/O.
#include "analysis/model.hpp"

#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <vector>

namespace meshperf::analysis {

/// A prediction may use the model up to this factor beyond the largest measured size (or
/// below the smallest) before it is flagged as an extrapolation.
inline constexpr double max_extrapolation_factor = 4.0;

/// One use of the model: what was predicted, and the size of one message on the link.
struct model_use {
    std::string what;              ///< e.g. "all_reduce ring"
    double message_bytes = 0;      ///< one message of it on the modelled link
};

/// One warning about the model's use.
struct model_warning {
    /// "extrapolation_above", "extrapolation_below", "poor_fit", "underdetermined" or
    /// "beta_above_measured".
    std::string kind;
    std::string message;           ///< one line, saying what to do about it
};

/// The warnings for predicting `uses` with `m`:
///  - extrapolation_above / _below: some message is more than max_extrapolation_factor ×
///    the largest measured size (below the smallest / that factor); one warning each way,
///    naming the furthest message and how many predictions go that far;
///  - poor_fit: the model the predictions use (the piecewise segments when a break was
///    accepted, else the line) misses a measured point by more than the model's own
///    piecewise threshold (15% by default): its worst relative residual;
///  - underdetermined: the line has no spare points, so nothing checks α and β;
///  - beta_above_measured: β exceeds every measured bandwidth by more than its tolerance
///    (model_fit::beta_unmeasured(); the message says whether with_measured_beta replaced it).
std::vector<model_warning> model_use_warnings(const model_fit& m, std::span<const model_use> uses);

nlohmann::json to_json(const model_warning&);

}  // namespace meshperf::analysis
